/// A backend's identity in plans, policies, profiles and dumps: `naive`, `openblas`, `opencl`,
/// and `opencl:N` for a further OpenCL device (N its index in discovery order).
///
/// Backends are values in the engine's registry, not cases of an enum: a new backend, or a second
/// device of a kind, is a new identity, and no switch anywhere lists the backends.
public struct BackendID: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The backend's name, as in plans and `TENSORENGINE_POLICY`.
    public let name: String

    /// A backend named `name` (the engine knows the names in ``BackendStatus/all``).
    public init(_ name: String) { self.name = name }

    /// Plain loops over strided data: the reference every other backend is checked against.
    public static let naive = BackendID("naive")
    /// OpenBLAS for matrix products, vectorised multi-threaded Swift for the rest.
    public static let openblas = BackendID("openblas")
    /// OpenCL kernels from `kernels/` on the chosen OpenCL device.
    public static let opencl = BackendID("opencl")

    /// The OpenCL backend on the device at `index` in discovery order, beside the chosen one.
    static func opencl(device index: Int) -> BackendID { BackendID("opencl:\(index)") }

    public var description: String { name }

    /// Decodes the plain name.
    public init(from decoder: any Decoder) throws {
        name = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the plain name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
