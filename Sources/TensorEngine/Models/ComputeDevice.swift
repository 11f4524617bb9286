/// A device a model's operations can run on, like Core ML's `MLComputeDevice`.
///
/// The host backends (`naive`, `openblas`) are ``cpu(_:)``; an OpenCL device is ``gpu(_:deviceName:)``,
/// as Core ML calls its Metal devices, also when the OpenCL device is a CPU (PoCL).
public enum ComputeDevice: Sendable, Hashable, CustomStringConvertible {
    /// A host backend.
    case cpu(BackendID)
    /// An OpenCL device, through its backend.
    case gpu(BackendID, deviceName: String)

    /// The device a backend runs on.
    public init(_ backend: BackendID) {
        if let running = Engine.shared.backends.first(where: { $0.id == backend }), running.memorySpace != .host {
            self = .gpu(backend, deviceName: running.deviceName)
        } else {
            self = .cpu(backend)
        }
    }

    /// The backend that drives the device.
    public var backend: BackendID {
        switch self {
        case .cpu(let backend), .gpu(let backend, _): backend
        }
    }

    /// The devices of every running backend, in preference order (Core ML's `MLAllComputeDevices()`).
    public static var allComputeDevices: [ComputeDevice] { Engine.shared.backends.map { ComputeDevice($0.id) } }

    /// `cpu (openblas)`, `gpu (opencl: pthread-AMD EPYC)`.
    public var description: String {
        switch self {
        case .cpu(let backend): "cpu (\(backend.name))"
        case .gpu(let backend, let name): "gpu (\(backend.name): \(name))"
        }
    }
}
