import Dispatch
import Foundation

extension Calibration {
    /// Whether a process calibrates the devices it has no stored profile for on first use.
    package enum FirstUse: Sendable, Equatable {
        /// Calibrate on first use and store the profiles (the default).
        case auto
        /// Plan with the backends' default profiles.
        case off

        /// As `TENSORENGINE_CALIBRATION` says (see ``init(setting:)``); always off in debug builds,
        /// whose unoptimised kernels would take many times as long to measure and describe no
        /// build anyone times.
        static var configured: FirstUse {
            #if DEBUG
            return .off
            #else
            return FirstUse(setting: ProcessInfo.processInfo.environment["TENSORENGINE_CALIBRATION"])
            #endif
        }

        /// `off` (or `0`, `no`, `false`, in any case) keeps the defaults; anything else, or
        /// nothing, calibrates on first use.
        init(setting: String?) {
            self = ["off", "0", "no", "false"].contains(setting?.lowercased() ?? "") ? .off : .auto
        }
    }

    /// Whether a first-use calibration measures the backend: every one but the naive reference,
    /// whose default profile describes its plain loops (it is the planner's last resort, never a
    /// close choice) and whose probes would take most of the time.
    static func calibratesOnFirstUse(_ backend: any Backend) -> Bool { backend.id != .naive }

    /// How long a profile measured on a busy machine is kept before a process measures the device
    /// again (10 minutes): long enough that a machine busy for good does not pay a calibration in
    /// every process, short enough that a build's spell does not stay in the figures for long.
    static let busyRetrySeconds: Double = 600

    /// Calibrates each backend of `backends` that `profiles` holds only by its default, or by a
    /// profile measured on a busy machine long enough ago (``DeviceProfile/wantsCalibration(at:)``),
    /// as ``calibratesOnFirstUse(_:)`` allows; stores the new profiles in `store` and returns
    /// `profiles` with them in place. Takes about 2 s on 2 cores with PoCL's CPU device beside the
    /// host backend (0.7 s for the host backend alone; 3.6 s and 5 s on two machines before the
    /// probes' budgets were cut), once: later processes
    /// read the stored profiles. The cores' availability is measured before and after
    /// (``CoreAvailability``); when either says the machine was busy, the profiles are marked
    /// (``DeviceProfile/measuredOnBusyMachine``) and measured again by a later process. A backend
    /// whose calibration fails keeps its profile, and a store that cannot be written keeps the
    /// profiles for this process only; both with a warning.
    static func calibrateOnFirstUse(
        _ backends: [any Backend], _ profiles: [BackendID: DeviceProfile], store: URL,
        warn: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) },
        availability: () -> Double = { CoreAvailability.parallelScaling() }
    ) -> [BackendID: DeviceProfile] {
        let chosen = backends.filter { calibratesOnFirstUse($0) && profiles[$0.id]?.wantsCalibration() ?? true }
        guard !chosen.isEmpty else { return profiles }
        warn(
            "tensorengine: measuring device profiles for the planner (once per device, a few seconds; "
                + "TENSORENGINE_CALIBRATION=off skips it)")
        var result = profiles
        let (measured, busy) = measuredNotingLoad(availability: availability) { () -> [DeviceProfile] in
            var measured: [DeviceProfile] = []
            for backend in chosen {
                do throws(TensorError) {
                    measured.append(try calibrate(backend))
                } catch {
                    let why: String = error.message
                    warn("tensorengine: could not calibrate \(backend.id) (\(why)); planning with the profile it had")
                }
            }
            return measured
        }
        for profile in measured { result[profile.backend] = profile }
        if let busy { warn(busy) }
        do {
            try ProfileStore.save(measured, to: store)
        } catch {
            warn("tensorengine: could not store device profiles in \(store.path) (\(error.localizedDescription))")
        }
        return result
    }

    /// The profiles `measure` makes, with the cores' availability read before and after it
    /// (`availability`) and the profiles marked when the lesser reading says the machine was busy
    /// (``markIfBusy(_:scaling:cores:)``); the warning to give, or `nil` for a quiet machine.
    static func measuredNotingLoad<Failure: Error>(
        availability: () -> Double = { CoreAvailability.parallelScaling() },
        _ measure: () throws(Failure) -> [DeviceProfile]
    ) throws(Failure) -> (profiles: [DeviceProfile], busy: String?) {
        let before = availability()
        var profiles = try measure()
        let busy = markIfBusy(
            &profiles, scaling: Swift.min(before, availability()), cores: ProcessInfo.processInfo.activeProcessorCount)
        return (profiles, busy)
    }

    /// Marks `profiles` as measured on a busy machine (``DeviceProfile/measuredOnBusyMachine``)
    /// when `scaling`, the least of the cores' availability around the calibration, says so
    /// (``CoreAvailability/isBusy(scaling:cores:)``), and returns the warning to give; `nil` when
    /// the machine was quiet.
    static func markIfBusy(_ profiles: inout [DeviceProfile], scaling: Double, cores: Int) -> String? {
        guard !profiles.isEmpty, CoreAvailability.isBusy(scaling: scaling, cores: cores) else { return nil }
        let now = Date()
        for index in profiles.indices { profiles[index].measuredOnBusyMachine = now }
        return "tensorengine: the machine was busy while it was measured (its \(cores) cores gave "
            + "\(String(format: "%.2f", scaling))× one core's rate); the profiles are measured again by a "
            + "process started \(Int(busyRetrySeconds / 60)) minutes from now or later"
    }

    /// The engine's seconds per recorded operation and per evaluation on one backend, from a
    /// chain of tiny ops recorded, planned through a plan cache, run and read back, as a loop of
    /// small steps is: per operation, its time less a one-op chain's, per further op; per
    /// evaluation, the one-op chain's time less that op and a launch (`launch`). The median of
    /// runs of each, within a budget. Each run takes the path of a user's evaluation and
    /// read-back (the policy looked up, the nodes claimed, the plan checked against the memory
    /// limit, the results kept and shared with an array), but for the planner, the probe's own:
    /// the engine is not set up yet.
    static func bookkeepingSeconds(
        _ backend: any Backend, launch: Double, budget: Double = 0.3
    ) throws(TensorError) -> (operation: Double, evaluation: Double) {
        let start = try input([1], 16)
        let planner = alone(backend)
        let cache = PlanCache(capacity: 4)
        func median(of count: Int) throws(TensorError) -> Double {
            var samples: [Double] = []
            let started = DispatchTime.now().uptimeNanoseconds
            for run in 0...40 {
                let begin = DispatchTime.now().uptimeNanoseconds
                var chain = start
                for step in 0..<count { chain = step % 2 == 0 ? chain * 1.0001 : chain + 0.0001 }
                guard let node = chain.node else {
                    throw chain.error ?? TensorError(.invalidArgument, op: "calibrate", message: "a probe did not build")
                }
                // As `Tensor.evaluate` and `shapedArray(of:)` do, with the probe's own planner (a
                // policy named wrongly in the environment is the user's evaluation's error, not this).
                _ = try? Engine.currentPolicy()
                let (mine, _) = InFlightEvaluations.shared.claim([node])
                do {
                    defer { InFlightEvaluations.shared.finish(mine) }
                    _ = try Tensor.runKeepingPlan(mine, backends: [backend]) { nodes throws(TensorError) in
                        try planner.plan(targets: nodes, cache: cache).0
                    }
                }
                if let value = node.storedResult, let buffer = value.buffer as? HostBuffer {
                    _ = ShapedArray<Float>(
                        sharing: buffer, offset: value.layout.offset, shape: chain.shape, count: chain.scalarCount)
                }
                let end = DispatchTime.now().uptimeNanoseconds
                if run > 0 { samples.append(Double(end - begin) / 1e9) }
                if Double(end - started) / 1e9 > budget / 2, samples.count >= 5 { break }
            }
            samples.sort()
            return samples[samples.count / 2]
        }
        let long = 200
        let (many, one) = (try median(of: long), try median(of: 1))
        let operation = Swift.max(0, many - one) / Double(long - 1)
        return (operation, Swift.max(0, one - operation - launch))
    }
}
