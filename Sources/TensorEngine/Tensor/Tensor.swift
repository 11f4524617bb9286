/// A lazily evaluated multidimensional array with the API of Core ML's `MLTensor`.
///
/// Operations on a `Tensor` record a graph; nothing is computed until a result is asked for with
/// ``shapedArray(of:file:line:)`` or ``evaluate(_:policy:file:line:)``. Then the planner places each
/// pending op on a backend (naive, openblas, opencl) and the executor runs that plan.
///
/// ```swift
/// let x = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6])
/// let y = (x * 2).softmax(alongAxis: -1)        // recorded, not run
/// let result = try await y.shapedArray(of: Float.self)
/// ```
///
/// An invalid operation never traps: the tensor it returns carries a ``TensorError`` (see
/// ``error``), later operations pass that first error along, and materialization throws it.
public struct Tensor: Sendable {
    package let node: Node?
    /// The error, boxed: a tensor is two references wide, so the thousands of copies a graph's
    /// recording makes retain two objects rather than copy an error's strings and arrays.
    private let failure: Failure?

    /// The first error in this tensor's history, or `nil` if it is valid.
    public var error: TensorError? { failure?.error }

    private final class Failure: Sendable {
        let error: TensorError
        init(_ error: TensorError) { self.error = error }
    }

    init(node: Node) {
        self.node = node
        self.failure = nil
    }

    init(failed error: TensorError) {
        self.node = nil
        self.failure = Failure(error)
    }

    /// The extent of each dimension (`[]` for a tensor that carries an error).
    public var shape: [Int] { node?.signature.shape ?? [] }

    /// The number of dimensions.
    public var rank: Int { shape.count }

    /// The number of scalars: the product of the shape.
    public var scalarCount: Int { shape.reduce(1, *) }

    /// Whether the tensor has rank 0.
    public var isScalar: Bool { rank == 0 }

    /// The Swift type of the scalars (`Float.self`, `Int32.self`, ...).
    public var scalarType: any TensorScalar.Type { dtype.swiftType }

    /// The engine's description of the scalar type (`Float` for a tensor that carries an error).
    public var dtype: ScalarType { node?.signature.scalarType ?? .float32 }

    var signature: TensorSignature { node?.signature ?? TensorSignature(shape: [], scalarType: .float32) }
}

extension Tensor: CustomStringConvertible {
    /// `Tensor(shape: [2, 3], float32)`, or the error it carries. Describing never evaluates.
    public var description: String {
        if let error { return "Tensor(error: \(error))" }
        return "Tensor(shape: \(describe(shape)), \(dtype))"
    }
}
