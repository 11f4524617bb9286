/// A multidimensional array of scalars held in host memory, in row-major (C) order.
///
/// `ShapedArray` is the engine's counterpart of Core ML's `MLShapedArray`: the result of
/// materializing a ``Tensor`` and one way to create a tensor from data.
///
/// ```swift
/// let array = ShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])
/// array[1, 2]  // 6
/// ```
public struct ShapedArray<Scalar: TensorScalar>: Sendable, Equatable {
    /// The extent of each dimension.
    public let shape: [Int]
    /// The scalars in row-major order; `scalars.count == scalarCount`.
    public let scalars: [Scalar]

    /// Creates an array from scalars in row-major order.
    ///
    /// Returns `nil` when `scalars.count` is not the product of `shape`, or a dimension is negative.
    public init?(scalars: [Scalar], shape: [Int]) {
        guard let count = Shape.elementCount(shape), count == scalars.count else { return nil }
        self.shape = shape
        self.scalars = scalars
    }

    /// Creates an array of the given shape filled with one value.
    ///
    /// A negative dimension gives an empty array of shape `[0]`.
    public init(repeating value: Scalar, shape: [Int]) {
        guard let count = Shape.elementCount(shape) else {
            self.shape = [0]
            self.scalars = []
            return
        }
        self.shape = shape
        self.scalars = Array(repeating: value, count: count)
    }

    /// Creates a rank-0 array holding one scalar.
    public init(scalar: Scalar) {
        self.shape = []
        self.scalars = [scalar]
    }

    init(unchecked scalars: [Scalar], shape: [Int]) {
        self.shape = shape
        self.scalars = scalars
    }

    /// The number of dimensions.
    public var rank: Int { shape.count }

    /// The number of scalars, the product of the shape (1 for rank 0).
    public var scalarCount: Int { scalars.count }

    /// The row-major strides, in elements: how far apart neighbours along each axis are.
    public var strides: [Int] { Shape.contiguousStrides(shape) }

    /// The scalar at a full multi-index. Traps on an index out of range, like `Array`.
    public subscript(indices: Int...) -> Scalar {
        precondition(indices.count == rank, "ShapedArray subscript needs \(rank) indices")
        var offset = 0
        for (axis, index) in indices.enumerated() {
            precondition((0..<shape[axis]).contains(index), "index \(index) out of range for axis \(axis)")
            offset = offset * shape[axis] + index
        }
        return scalars[offset]
    }

    /// The only scalar of a rank-0 or one-element array, else `nil`.
    public var scalar: Scalar? { scalars.count == 1 ? scalars[0] : nil }
}

extension ShapedArray: CustomStringConvertible {
    /// A nested-bracket rendering like NumPy's, e.g. `[[1.0, 2.0], [3.0, 4.0]]`.
    public var description: String {
        func render(_ axis: Int, _ offset: Int, _ stride: Int) -> String {
            if axis == rank { return "\(scalars[offset])" }
            let inner = stride / Swift.max(shape[axis], 1)
            let items = (0..<shape[axis]).map { render(axis + 1, offset + $0 * inner, inner) }
            return "[" + items.joined(separator: ", ") + "]"
        }
        return render(0, 0, scalars.count)
    }
}

/// Helpers for shapes: element counts with overflow checks and row-major strides.
package enum Shape {
    /// The product of the dimensions, or `nil` if one is negative or the product overflows.
    static func elementCount(_ shape: [Int]) -> Int? {
        var count = 1
        for dimension in shape {
            guard dimension >= 0 else { return nil }
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow else { return nil }
            count = product
        }
        return count
    }

    /// Row-major strides in elements (the last axis has stride 1).
    ///
    /// An empty axis counts as size 1, so the strides of an empty tensor may multiply extents
    /// whose product overflows although its element count (zero) does not, as in `[0, 2⁶², 4]`,
    /// or a padding or tiling of an empty tensor by a huge size: such strides saturate at
    /// `Int.max` (no element is ever addressed through them).
    static func contiguousStrides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var running = 1
        for axis in shape.indices.reversed() {
            strides[axis] = running
            let (product, overflow) = running.multipliedReportingOverflow(by: Swift.max(shape[axis], 1))
            running = overflow ? Int.max : product
        }
        return strides
    }
}
