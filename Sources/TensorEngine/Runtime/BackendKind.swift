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
