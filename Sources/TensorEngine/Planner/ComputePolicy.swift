/// Which backends evaluation may use, like Core ML's compute units.
public enum ComputePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every available backend; the planner chooses (`auto`).
    case all
    /// The backends that work in host memory: naive and openblas.
    case cpuOnly
    /// The host backends and every OpenCL device.
    case cpuAndGPU
    /// Exactly one backend (parity tests and benchmarks use this).
    case only(BackendID)

    /// Whether the policy lets a backend run ops.
    func allows(_ backend: any Backend) -> Bool {
        switch self {
        case .all, .cpuAndGPU: true
        case .cpuOnly: backend.memorySpace == .host
        case .only(let only): backend.id == only
        }
    }

    /// The name used by `TENSORENGINE_POLICY` and `--policy`.
    public var description: String {
        switch self {
        case .all: "auto"
        case .cpuOnly: "cpuOnly"
        case .cpuAndGPU: "cpuAndGPU"
        case .only(let backend): backend.name
        }
    }

    /// The valid names, for error messages and `--help`: the policies, then every backend the
    /// engine knows (an unavailable one too: evaluating under it fails with the reason).
    public static var names: [String] { ["auto", "cpuOnly", "cpuAndGPU"] + Engine.shared.known.map(\.name) }

    /// Parses a policy name (`auto`, `cpuOnly`, `cpuAndGPU`, or a backend: `naive`, `openblas`,
    /// `opencl`, `opencl:1`, ...).
    public init(name: String) throws(TensorError) {
        switch name {
        case "auto", "all": self = .all
        case "cpuOnly": self = .cpuOnly
        case "cpuAndGPU": self = .cpuAndGPU
        default:
            guard Engine.shared.known.contains(BackendID(name)) else {
                throw TensorError(
                    .invalidArgument, op: "policy",
                    message: "unknown compute policy '\(name)'; valid: \(ComputePolicy.names.joined(separator: ", "))")
            }
            self = .only(BackendID(name))
        }
    }

    @TaskLocal static var scoped: ComputePolicy?
}

/// Runs `body` with a compute policy for every evaluation inside it (a task-local scope, like
/// Core ML's `withMLTensorComputePolicy`).
public func withComputePolicy<R>(_ policy: ComputePolicy, _ body: () async throws -> R) async rethrows -> R {
    try await ComputePolicy.$scoped.withValue(policy) { try await body() }
}

/// Runs synchronous `body` with a compute policy for every evaluation inside it.
public func withComputePolicy<R>(_ policy: ComputePolicy, _ body: () throws -> R) rethrows -> R {
    try ComputePolicy.$scoped.withValue(policy) { try body() }
}

/// Core ML's name for ``withComputePolicy(_:_:)`` (`withMLTensorComputePolicy`), so
/// ported code keeps its calls.
public func withTensorComputePolicy<R>(_ policy: ComputePolicy, _ body: () async throws -> R) async rethrows -> R {
    try await ComputePolicy.$scoped.withValue(policy) { try await body() }
}

/// Core ML's name for the synchronous ``withComputePolicy(_:_:)`` (`withMLTensorComputePolicy`).
public func withTensorComputePolicy<R>(_ policy: ComputePolicy, _ body: () throws -> R) rethrows -> R {
    try ComputePolicy.$scoped.withValue(policy) { try body() }
}

/// The processors a model or tensor evaluation may use, as Core ML's `MLComputeUnits` names them.
/// There is no Neural Engine here: `.cpuAndNeuralEngine` means the host backends.
public enum ComputeUnits: Sendable, Hashable, CaseIterable {
    /// The host backends only.
    case cpuOnly
    /// The host backends and every OpenCL device.
    case cpuAndGPU
    /// The host backends (no Neural Engine exists on this platform).
    case cpuAndNeuralEngine
    /// Every available backend.
    case all
}

extension ComputePolicy {
    /// The policy for Core ML's compute units (`MLComputePolicy(_: MLComputeUnits)`).
    public init(_ units: ComputeUnits) {
        switch units {
        case .cpuOnly, .cpuAndNeuralEngine: self = .cpuOnly
        case .cpuAndGPU: self = .cpuAndGPU
        case .all: self = .all
        }
    }
}
