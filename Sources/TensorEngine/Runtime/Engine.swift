import Foundation

/// The process-wide registry of backends and their profiles, created once on first use.
///
/// The host backends always run; every OpenCL device chosen (`TENSORENGINE_OPENCL_DEVICE`, and
/// the others with `TENSORENGINE_OPENCL_DEVICES=all`) is a backend of its own. A backend that
/// cannot start is kept by name with the reason, so policies can name it and errors can say why.
package final class Engine: Sendable {
    package static let shared = Engine()

    /// The backends that can run here, in preference order for ties.
    package let backends: [any Backend]
    /// Backends that could not start, with the reason.
    package let unavailable: [(id: BackendID, reason: String)]
    /// The device profile of each available backend: stored by a calibration, else its default.
    package let profiles: [BackendID: DeviceProfile]

    /// An engine whose OpenCL backends use the entry points of `openCLLibrary` (the process's
    /// library by default; tests pass a failed load to see the engine without OpenCL).
    init(openCLLibrary: Result<OpenCLAPI, TensorError> = OpenCLLibrary.shared) {
        var backends: [any Backend] = [NaiveBackend(), OpenBLASBackend()]
        var unavailable: [(id: BackendID, reason: String)] = []
        do throws(TensorError) {
            backends += try OpenCLBackend.chosen(library: openCLLibrary)
        } catch {
            unavailable.append((.opencl, error.message))
        }
        self.backends = backends
        self.unavailable = unavailable
        let stored = ProfileStore.load()
        var profiles: [BackendID: DeviceProfile] = [:]
        for backend in backends {
            profiles[backend.id] = stored[ProfileStore.key(backend.id, backend.deviceName)] ?? backend.defaultProfile
        }
        self.profiles = profiles
    }

    package func backend(_ id: BackendID) -> (any Backend)? { backends.first { $0.id == id } }

    /// Every backend the engine knows, running or not, in preference order.
    var known: [BackendID] { backends.map(\.id) + unavailable.map(\.id) }

    /// Plans of graphs evaluated before, by structure.
    let planCache = PlanCache()

    /// Plans the pending graph behind `targets` with the engine's backends, through the plan cache.
    func plan(_ targets: [Node], policy: ComputePolicy) throws(TensorError) -> (Plan, cached: Bool) {
        let (plan, cached) = try Planner(backends: backends, profiles: profiles, policy: policy).plan(
            targets: targets, cache: planCache)
        if PlanLog.enabled { PlanLog.print(ComputePlan(plan, cached: cached)) }
        return (plan, cached)
    }

    /// Plans and runs the pending graph behind `targets`, returning host values without keeping
    /// them on the nodes. `backends` replaces the engine's own (tests inject deliberately wrong ones).
    package func run(
        _ targets: [Node], policy: ComputePolicy, backends: [any Backend]? = nil
    ) throws(TensorError) -> (results: [Value], statistics: EvaluationStatistics) {
        let chosen = backends ?? self.backends
        var profiles = self.profiles
        for backend in chosen where profiles[backend.id] == nil { profiles[backend.id] = backend.defaultProfile }
        let plan = try Planner(backends: chosen, profiles: profiles, policy: policy).plan(targets: targets)
        return try Executor(backends: chosen).run(plan)
    }

    /// The policy in force: the task-local scope, else `TENSORENGINE_POLICY`, else `.all`.
    static func currentPolicy() throws(TensorError) -> ComputePolicy {
        if let scoped = ComputePolicy.scoped { return scoped }
        if let name = ProcessInfo.processInfo.environment["TENSORENGINE_POLICY"], !name.isEmpty {
            return try ComputePolicy(name: name)
        }
        return .all
    }
}
