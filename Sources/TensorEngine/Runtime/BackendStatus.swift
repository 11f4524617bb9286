/// What one backend is in this process: available with its device and profile, or unavailable
/// with the reason.
public struct BackendStatus: Sendable, Hashable {
    /// The backend.
    public let kind: BackendKind
    /// The device it runs on, when available.
    public let deviceName: String?
    /// Why it is unavailable (no OpenCL platform, ...), or `nil` when available.
    public let unavailableReason: String?
    /// The profile the planner uses for it, when available.
    public let profile: DeviceProfile?

    /// Whether the planner can use the backend.
    public var isAvailable: Bool { unavailableReason == nil }

    /// Every backend the engine knows, in preference order.
    public static var all: [BackendStatus] {
        let engine = Engine.shared
        return BackendKind.allCases.map { kind in
            if let backend = engine.backend(kind) {
                return BackendStatus(kind: kind, deviceName: backend.deviceName, unavailableReason: nil, profile: engine.profiles[kind])
            }
            return BackendStatus(kind: kind, deviceName: nil, unavailableReason: engine.unavailable[kind] ?? "not built into this engine", profile: nil)
        }
    }
}
