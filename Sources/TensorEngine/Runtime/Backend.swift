/// The backends the engine knows. Each names one implementation of ``Backend``.
public enum BackendKind: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Plain loops over strided data: the reference every other backend is checked against.
    case naive
    /// OpenBLAS for matrix products, vectorised multi-threaded Swift for the rest.
    case openblas
    /// OpenCL kernels from `kernels/` on an OpenCL device.
    case opencl

    /// The backend's name, as in plans and `TENSORENGINE_POLICY`.
    public var description: String { rawValue }

    /// Hashes the case, not its name: a `String` raw value would otherwise be hashed on every
    /// lookup of the planner's per-backend tables.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .naive: hasher.combine(0 as UInt8)
        case .openblas: hasher.combine(1 as UInt8)
        case .opencl: hasher.combine(2 as UInt8)
        }
    }
}

/// Whether a backend can run an op, and if not, why.
enum Capability: Sendable, Hashable {
    case supported
    case unsupported(reason: String)

    var isSupported: Bool {
        switch self {
        case .supported: true
        case .unsupported: false
        }
    }
}

/// One step a backend runs: a primitive op, or a fused region of elementwise ops.
enum Kernel: Sendable, Hashable {
    case op(Op)
    case fused(FusedRegion)
}

/// A compute backend: the small protocol every backend implements.
///
/// A backend trusts its inputs: the front end has validated shapes and types, and the planner has
/// asked ``capability(for:inputs:output:)`` first. Outputs are fresh row-major buffers, except for
/// view ops, which return a new layout over the operand's buffer.
protocol Backend: AnyObject, Sendable {
    /// Which backend this is.
    var kind: BackendKind { get }
    /// The device it runs on, in words (`host CPU`, `pthread-haswell-AMD EPYC`, ...).
    var deviceName: String { get }
    /// Where its buffers live.
    var memorySpace: MemorySpace { get }

    /// Whether the backend runs the kernel for these operand and result signatures.
    func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability

    /// Runs a kernel on values in this backend's memory space and returns the result.
    func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value

    /// Copies a host value into this backend's memory space (the identity for host backends).
    func upload(_ value: Value) throws(TensorError) -> Value

    /// Copies a value of this backend's memory space to the host, keeping its layout.
    func download(_ value: Value) throws(TensorError) -> Value

    /// Waits until all submitted work has finished.
    func synchronize() throws(TensorError)
}

extension Backend {
    /// View ops re-describe the operand's memory; every backend shares this implementation.
    func view(_ op: Op, of input: Value, output: TensorSignature) -> Value? {
        input.layout.viewed(by: op).map(input.with)
    }
}

extension Backend {
    /// The ops no backend computes: a constant is never executed (its node holds the data) and a
    /// view only re-describes its operand. Every backend routes them here.
    func executeWithoutKernel(_ op: Op, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        if op == .constant {
            throw TensorError(.backendFailure, op: op.name, message: "constants carry their data and are never executed")
        }
        guard let input = inputs.first, let view = view(op, of: input, output: output) else {
            throw TensorError(.backendFailure, op: op.name, message: "a reshape of a strided view reached the backend without a copy")
        }
        return view
    }
}

