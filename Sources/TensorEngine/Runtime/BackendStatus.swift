/// What one backend is in this process: available with its device and profile, or unavailable
/// with the reason.
public struct BackendStatus: Sendable, Hashable {
    /// The backend.
    public let id: BackendID
    /// The device it runs on, when available.
    public let deviceName: String?
    /// Why it is unavailable (no OpenCL platform, ...), or `nil` when available.
    public let unavailableReason: String?
    /// The profile the planner uses for it, when available.
    public let profile: DeviceProfile?

    /// Whether the planner can use the backend.
    public var isAvailable: Bool { unavailableReason == nil }

    /// Every backend the engine knows, in preference order: the running ones, then the ones that
    /// could not start.
    public static var all: [BackendStatus] {
        let engine = Engine.shared
        return engine.backends.map { backend in
            BackendStatus(id: backend.id, deviceName: backend.deviceName, unavailableReason: nil, profile: engine.profiles[backend.id])
        } + engine.unavailable.map { BackendStatus(id: $0.id, deviceName: nil, unavailableReason: $0.reason, profile: nil) }
    }
}
