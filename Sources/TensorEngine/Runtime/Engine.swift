import Foundation

/// The process-wide set of backends and their profiles, created once on first use.
final class Engine: Sendable {
    static let shared = Engine()

    /// The backends that can run here, in preference order for ties.
    let backends: [any Backend]
    /// Backends that could not start, with the reason.
    let unavailable: [BackendKind: String]
    /// The device profile of each available backend.
    let profiles: [BackendKind: DeviceProfile]

    /// An engine whose OpenCL backend uses the entry points of `openCLLibrary` (the process's
    /// library by default; tests pass a failed load to see the engine without OpenCL).
    init(openCLLibrary: Result<OpenCLAPI, TensorError> = OpenCLLibrary.shared) {
        var backends: [any Backend] = [NaiveBackend(), OpenBLASBackend()]
        var unavailable: [BackendKind: String] = [:]
        do throws(TensorError) {
            backends.append(try OpenCLBackend(library: openCLLibrary))
        } catch {
            unavailable[.opencl] = error.message
        }
        self.backends = backends
        self.unavailable = unavailable
        let stored = ProfileStore.load()
        var profiles: [BackendKind: DeviceProfile] = [:]
        for backend in backends {
            profiles[backend.kind] = stored[ProfileStore.key(backend.kind, backend.deviceName)] ?? DefaultProfiles.profile(for: backend)
        }
        self.profiles = profiles
    }

    func backend(_ kind: BackendKind) -> (any Backend)? { backends.first { $0.kind == kind } }

    /// Plans of graphs evaluated before, by structure.
    let planCache = PlanCache()

    /// Plans the pending graph behind `targets` with the engine's backends, through the plan cache.
    func plan(_ targets: [Node], policy: ComputePolicy) throws(TensorError) -> (Plan, cached: Bool) {
        let (plan, cached) = try Planner(backends: backends, profiles: profiles, policy: policy).plan(targets: targets, cache: planCache)
        if PlanLog.enabled { PlanLog.print(ComputePlan(plan, cached: cached)) }
        return (plan, cached)
    }

    /// Plans and runs the pending graph behind `targets`, returning host values without keeping
    /// them on the nodes. `backends` replaces the engine's own (tests inject deliberately wrong ones).
    func run(_ targets: [Node], policy: ComputePolicy, backends: [any Backend]? = nil) throws(TensorError) -> (results: [Value], statistics: EvaluationStatistics) {
        let chosen = backends ?? self.backends
        var profiles = self.profiles
        for backend in chosen where profiles[backend.kind] == nil { profiles[backend.kind] = DefaultProfiles.profile(for: backend) }
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

/// Documented defaults for uncalibrated devices: conservative figures for a 2-core x86-64 server.
enum DefaultProfiles {
    static func profile(for backend: any Backend) -> DeviceProfile {
        switch backend.kind {
        case .naive:
            DeviceProfile(backend: .naive, deviceName: backend.deviceName, matmulLargeGFLOPS: 0.3, matmulSmallGFLOPS: 0.3,
                          matmulSkinnyGFLOPS: 0.3, streamGBPerSecond: 0.3, reduceGBPerSecond: 0.3, elementwiseGFLOPS: 0.1,
                          launchSeconds: 2e-6, transferGBPerSecond: nil, threads: 1, calibrated: false)
        case .openblas:
            DeviceProfile(backend: .openblas, deviceName: backend.deviceName, matmulLargeGFLOPS: 100, matmulSmallGFLOPS: 30,
                          matmulSkinnyGFLOPS: 8, streamGBPerSecond: 12, reduceGBPerSecond: 10, elementwiseGFLOPS: 20,
                          launchSeconds: 1e-6, transferGBPerSecond: nil, threads: ProcessInfo.processInfo.activeProcessorCount, calibrated: false)
        case .opencl:
            if (backend as? OpenCLBackend)?.runtime.device.type == .cpu {
                // PoCL on 2 shared EPYC cores (docs/OPENCL.md): matmul ~20 GFLOP/s at 512-2048 under
                // load (70-85 when quieter; about half of OpenBLAS in the same run), plain streams ~5 GB/s, transcendental-heavy chains ~1 GFLOP/s, 20-120 µs launches,
                // zero-copy uploads and ~1-2 GB/s downloads into fresh host memory.
                DeviceProfile(backend: .opencl, deviceName: backend.deviceName, matmulLargeGFLOPS: 20, matmulSmallGFLOPS: 8,
                              matmulSkinnyGFLOPS: 1, streamGBPerSecond: 4, reduceGBPerSecond: 3, elementwiseGFLOPS: 1,
                              launchSeconds: 5e-5, transferGBPerSecond: 2, threads: 1, calibrated: false)
            } else {
                // An uncalibrated GPU: figures well below any discrete GPU's, above any CPU device's.
                DeviceProfile(backend: .opencl, deviceName: backend.deviceName, matmulLargeGFLOPS: 500, matmulSmallGFLOPS: 50,
                              matmulSkinnyGFLOPS: 10, streamGBPerSecond: 100, reduceGBPerSecond: 50, elementwiseGFLOPS: 200,
                              launchSeconds: 1e-5, transferGBPerSecond: 8, threads: 1, calibrated: false)
            }
        }
    }
}
