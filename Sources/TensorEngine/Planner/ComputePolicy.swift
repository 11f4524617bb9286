/// Which backends evaluation may use, like Core ML's compute units.
public enum ComputePolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every available backend; the planner chooses (`auto`).
    case all
    /// The CPU backends: naive and openblas.
    case cpuOnly
    /// The CPU backends and OpenCL.
    case cpuAndGPU
    /// Exactly one backend (parity tests and benchmarks use this).
    case only(BackendKind)

    /// Whether the policy lets a backend run ops.
    public func allows(_ backend: BackendKind) -> Bool {
        switch self {
        case .all, .cpuAndGPU: true
        case .cpuOnly: backend != .opencl
        case .only(let only): backend == only
        }
    }

    /// The name used by `TENSORENGINE_POLICY` and `--policy`.
    public var description: String {
        switch self {
        case .all: "auto"
        case .cpuOnly: "cpuOnly"
        case .cpuAndGPU: "cpuAndGPU"
        case .only(let backend): backend.rawValue
        }
    }

    /// The valid names, for error messages and `--help`.
    public static let names = ["auto", "cpuOnly", "cpuAndGPU"] + BackendKind.allCases.map(\.rawValue)

    /// Parses a policy name (`auto`, `cpuOnly`, `cpuAndGPU`, `naive`, `openblas`, `opencl`).
    public init(name: String) throws(TensorError) {
        switch name {
        case "auto", "all": self = .all
        case "cpuOnly": self = .cpuOnly
        case "cpuAndGPU": self = .cpuAndGPU
        default:
            guard let backend = BackendKind(rawValue: name) else {
                throw TensorError(.invalidArgument, op: "policy", message: "unknown compute policy '\(name)'; valid: \(ComputePolicy.names.joined(separator: ", "))")
            }
            self = .only(backend)
        }
    }

    @TaskLocal static var scoped: ComputePolicy?
}

/// Runs `body` with a compute policy for every evaluation inside it (a task-local scope, like
/// Core ML's `withMLTensorComputePolicy`).
public func withComputePolicy<R>(_ policy: ComputePolicy, _ body: () async throws -> R) async rethrows -> R {
    try await ComputePolicy.$scoped.withValue(policy) { try await body() }
}
