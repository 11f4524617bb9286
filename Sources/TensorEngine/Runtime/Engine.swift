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
    /// The profiles, and whether a first-use calibration is still to run (see ``profiles``).
    private let profileState: Guarded<ProfileState>
    /// Where calibrations are stored and read.
    private let profileStore: URL

    private enum ProfileState {
        /// Stored or default profiles; some backend other than the naive one has no stored profile.
        case uncalibrated([BackendID: DeviceProfile])
        /// The first-use calibration is running; until it ends, planning uses these.
        case calibrating([BackendID: DeviceProfile])
        case ready([BackendID: DeviceProfile])
    }

    /// The device profile of each available backend: stored by a calibration, else its default.
    ///
    /// A backend with no stored profile (but the naive reference, whose default describes it) is
    /// calibrated the first time profiles are needed, which is the first plan: about 2-3 s once
    /// per machine and device, stored for later processes (``Calibration/calibrateOnFirstUse``).
    /// `TENSORENGINE_CALIBRATION=off` keeps the defaults instead.
    package var profiles: [BackendID: DeviceProfile] {
        let (current, calibrateNow) = profileState.withLock { state -> ([BackendID: DeviceProfile], Bool) in
            switch state {
            case .uncalibrated(let profiles):
                state = .calibrating(profiles)
                return (profiles, true)
            case .calibrating(let profiles), .ready(let profiles):
                return (profiles, false)
            }
        }
        guard calibrateNow else { return current }
        let calibrated = Calibration.calibrateOnFirstUse(backends, current, store: profileStore)
        profileState.withLock { $0 = .ready(calibrated) }
        // Plans made with the defaults meanwhile are made again with the measured figures.
        planCache.removeAll()
        return calibrated
    }

    /// An engine whose OpenCL backends use the entry points of `openCLLibrary` (the process's
    /// library by default; tests pass a failed load to see the engine without OpenCL), with
    /// profiles stored in `profileStore` and calibrated on first use as `calibration` says.
    init(
        openCLLibrary: Result<OpenCLAPI, TensorError> = OpenCLLibrary.shared,
        profileStore: URL = ProfileStore.fileURL, calibration: Calibration.FirstUse = .configured
    ) {
        var backends: [any Backend] = [NaiveBackend(), OpenBLASBackend()]
        var unavailable: [(id: BackendID, reason: String)] = []
        do throws(TensorError) {
            backends += try OpenCLBackend.chosen(library: openCLLibrary)
        } catch {
            unavailable.append((.opencl, error.message))
        }
        self.backends = backends
        self.unavailable = unavailable
        self.profileStore = profileStore
        let stored = ProfileStore.load(from: profileStore)
        var profiles: [BackendID: DeviceProfile] = [:]
        var missing = false
        for backend in backends {
            let found = stored[ProfileStore.key(backend.id, backend.deviceName)]
            profiles[backend.id] = found ?? backend.defaultProfile
            if found?.wantsCalibration() ?? true, Calibration.calibratesOnFirstUse(backend) { missing = true }
        }
        profileState = Guarded(missing && calibration == .auto ? .uncalibrated(profiles) : .ready(profiles))
    }

    package func backend(_ id: BackendID) -> (any Backend)? { backends.first { $0.id == id } }

    /// Planners by policy, made once the profiles are final (``profiles`` in its ready state):
    /// making one copies every backend's profile, a few hundred reference counts that an
    /// evaluation of one small op paid each time.
    private let planners = Guarded<[ComputePolicy: Planner]>([:])

    /// The planner for `policy` with the profiles in force.
    func planner(_ policy: ComputePolicy) -> Planner {
        if let made = planners.withLock({ $0[policy] }) { return made }
        let final = profileState.withLock { state -> [BackendID: DeviceProfile]? in
            if case .ready(let profiles) = state { return profiles }
            return nil
        }
        guard let final else { return Planner(backends: backends, profiles: profiles, policy: policy) }
        let planner = Planner(backends: backends, profiles: final, policy: policy)
        planners.withLock { $0[policy] = planner }
        return planner
    }

    /// Every backend the engine knows, running or not, in preference order.
    var known: [BackendID] { backends.map(\.id) + unavailable.map(\.id) }

    /// Plans of graphs evaluated before, by structure.
    let planCache = PlanCache()

    /// Plans the pending graph behind `targets` with the engine's backends, through the plan cache.
    ///
    /// With `reusingOtherSizes` off (a plan asked for to be read, whose estimates must be those of
    /// its own sizes), only a plan of exactly this structure is reused.
    func plan(
        _ targets: [Node], policy: ComputePolicy, reusingOtherSizes: Bool = true
    ) throws(TensorError) -> (Plan, cached: Bool) {
        let (plan, cached) = try planner(policy).plan(
            targets: targets, cache: planCache, reusingOtherSizes: reusingOtherSizes)
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
    ///
    /// Read with `getenv` on every evaluation: `ProcessInfo.environment` copies the whole
    /// environment into a dictionary each time, microseconds an evaluation of a tiny op paid.
    static func currentPolicy() throws(TensorError) -> ComputePolicy {
        if let scoped = ComputePolicy.scoped { return scoped }
        if let raw = getenv("TENSORENGINE_POLICY"), raw.pointee != 0 {
            return try ComputePolicy(name: String(cString: raw))
        }
        return .all
    }
}
