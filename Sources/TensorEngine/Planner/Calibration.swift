import Dispatch

/// Measures a backend's device profile by running small probes through the engine itself.
///
/// Each probe is a real op evaluated under a single-backend policy; the median of several runs
/// is kept. Sizes shrink for the naive backend, whose loops are slow. The whole calibration of the
/// CPU backends takes a few seconds; at most ~30 s with OpenCL.
package enum Calibration {
    /// Calibrates every available backend and stores the profiles on disk.
    package static func calibrateAll(progress: (String) -> Void) throws -> [DeviceProfile] {
        var profiles: [DeviceProfile] = []
        for backend in Engine.shared.backends {
            progress("calibrating \(backend.kind) (\(backend.deviceName))")
            profiles.append(try calibrate(backend))
        }
        try ProfileStore.save(profiles)
        return profiles
    }

    /// The median seconds of the probe's op on one backend over up to `runs` runs after a warm-up
    /// run: the plan runs in measure mode and only the kernel steps count (copies of the host
    /// inputs do not). The median, not the best run, because the planner predicts the typical
    /// time on a machine that may be shared, and `tensorplan quality` compares with medians too.
    /// With `afterFirstStep`, the plan's first step does not count: a launch probe reads the
    /// result of an earlier kernel, as most ops of a model do, rather than a freshly uploaded
    /// input, whose first use costs a device (PoCL) about as much again.
    static func seconds(_ backend: any Backend, runs: Int, budget: Double = 2, afterFirstStep: Bool = false, _ build: () -> Tensor) throws(TensorError) -> Double {
        var samples: [Double] = []
        let started = DispatchTime.now().uptimeNanoseconds
        let planner = Planner(backends: [backend], profiles: Engine.shared.profiles, policy: .only(backend.kind))
        for run in 0...runs {
            let target = build()
            guard let node = target.node else { throw target.error ?? TensorError(.invalidArgument, op: "calibrate", message: "a probe did not build") }
            let plan = try planner.plan(targets: [node])
            let (_, _, steps) = try Executor(backends: [backend]).run(plan, measure: true)
            if run > 0 { samples.append(steps.dropFirst(afterFirstStep ? 1 : 0).reduce(0, +)) }
            if Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 > budget, !samples.isEmpty { break }
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    static func calibrate(_ backend: any Backend) throws(TensorError) -> DeviceProfile {
        let slow = backend.kind == .naive
        let scale = slow ? 4 : 1
        func constant(_ shape: [Int], _ seed: Int) throws(TensorError) -> Tensor {
            let t = Tensor(randomNormal: shape, seed: seed)
            guard let node = t.node else { throw t.error ?? TensorError(.invalidArgument, op: "calibrate", message: "probe input") }
            // Inputs live on the host as constants; the probe measures the op, not their creation.
            _ = node
            return t
        }
        // Launch latency: an op on 256 elements (one for the naive loops, whose work would show),
        // dominated by fixed costs, on the result of an earlier kernel (a softmax, which nothing
        // fuses with). Not one element everywhere: PoCL takes half as long again over a one-item
        // range as over a few hundred items.
        let one = try constant([slow ? 1 : 256], 1)
        let launch = try seconds(backend, runs: 200, budget: 1, afterFirstStep: true) {
            let resident = one.softmax()
            return resident + resident
        }
        // The cost of each further operand: a fused region of 17 (one from a kernel, 16 scalars
        // from the host, as a chain with constants reads them).
        let manyOperands = try seconds(backend, runs: 50, budget: 1, afterFirstStep: true) {
            var chain = one.softmax()
            for step in 0..<16 { chain = chain * (Float(1 + step) / 16) }
            return chain
        }
        let perOperand = max(0, manyOperands - launch) / 16
        // Reductions, line-wise ops and data movement run kernels of their own, with fixed costs
        // of their own (a two-stage device reduction is more than one launch): one-row probes.
        let tinyRow = try constant([1, 8], 11)
        let reductionLaunch = try seconds(backend, runs: 100, budget: 1, afterFirstStep: true) { tinyRow.softmax().sum(alongAxes: 1) }
        let lineWiseLaunch = try seconds(backend, runs: 100, budget: 1, afterFirstStep: true) { tinyRow.softmax().softmax() }
        let tinySquare = try constant([4, 4], 12)
        let movementLaunch = try seconds(backend, runs: 100, budget: 1, afterFirstStep: true) { tinySquare.softmax().transposed().reshaped(to: [16]) }

        // Matrix products at three sizes: the rate grows with the work (see
        // `DeviceProfile.matmulGFLOPS`). The naive loops run at one rate whatever the size, and a
        // 512³ product would take them half a second a run: their large rate is the medium one.
        func matmulGFLOPS(_ edge: Int, seed: Int, runs: Int) throws(TensorError) -> Double {
            let a = try constant([edge, edge], seed)
            let b = try constant([edge, edge], seed + 1)
            let time = try seconds(backend, runs: runs) { a.matmul(b) }
            return 2 * pow3(edge) / max(time - launch, 1e-9) / 1e9
        }
        let edges = DeviceProfile.matmulProbeEdges
        let smallGFLOPS = try matmulGFLOPS(edges.small, seed: 4, runs: 20)
        let mediumGFLOPS = try matmulGFLOPS(edges.medium, seed: 20, runs: slow ? 2 : 10)
        let largeGFLOPS = slow ? mediumGFLOPS : try matmulGFLOPS(edges.large, seed: 2, runs: 5)

        let k = slow ? 256 : 768
        let v = try constant([1, k], 5)
        let m = try constant([k, k], 6)
        let skinnyTime = try seconds(backend, runs: 20) { v.matmul(m) }
        let skinnyGFLOPS = 2 * Double(k * k) / max(skinnyTime - launch, 1e-9) / 1e9

        let count = (1 << 22) / (scale * scale)
        let x = try constant([count], 7)
        let y = try constant([count], 8)
        let streamTime = try seconds(backend, runs: 10) { x + y }
        let stream = Double(3 * count * 4) / max(streamTime - launch, 1e-9) / 1e9

        let rows = 1024 / scale
        let r = try constant([rows, 1024], 9)
        let reduceTime = try seconds(backend, runs: 10) { r.sum(alongAxes: 1) }
        // Many short lines as well as few long ones, to separate a cost per line (a work-group per
        // row on a device) from the bytes.
        let shortRows = 16_384 / scale
        let manyRows = try constant([shortRows, 8], 13)
        let shortReduceTime = try seconds(backend, runs: 10) { manyRows.sum(alongAxes: 1) }
        let (reductionPerLine, reduce) = perLineAndBandwidth(
            long: (reduceTime - reductionLaunch, Double(rows), Double((rows * 1024 + rows) * 4)),
            short: (shortReduceTime - reductionLaunch, Double(shortRows), Double((shortRows * 8 + shortRows) * 4)))
        let lineWiseTime = try seconds(backend, runs: 10) { r.softmax() }
        let shortLineWiseTime = try seconds(backend, runs: 10) { manyRows.softmax() }
        let (lineWisePerLine, lineWise) = perLineAndBandwidth(
            long: (lineWiseTime - lineWiseLaunch, Double(rows), Double(2 * rows * 1024 * 4)),
            short: (shortLineWiseTime - lineWiseLaunch, Double(shortRows), Double(2 * shortRows * 8 * 4)))
        let movementTime = try seconds(backend, runs: 10) { r.transposed().reshaped(to: [rows * 1024]) }
        let movement = Double(2 * rows * 1024 * 4) / max(movementTime - movementLaunch, 1e-9) / 1e9
        // The same bytes moved in runs of 64 floats, as attention's head split and merge do: a
        // host copy streams them, a device kernel that indexes each element may not.
        let heads = try constant([rows, 16, 64], 16)
        let runMovementTime = try seconds(backend, runs: 10) { heads.transposed(permutation: [1, 0, 2]).reshaped(to: [rows * 1024]) }
        let runMovement = Double(2 * rows * 1024 * 4) / max(runMovementTime - movementLaunch, 1e-9) / 1e9

        // Arithmetic: a fused chain of the kind models run (tanh for the transcendental, products
        // and sums), on 1M floats so that it measures the kernel rather than memory. A lone exp
        // rated the host engine's chains 2x fast: each instruction of a chain is a pass over
        // its block there, which a single op does not show.
        let chainCount = (1 << 20) / (scale * scale)
        let u = try constant([chainCount], 14)
        let w = try constant([chainCount], 15)
        let chain = { ((u * w + w).relu() * 0.5 + u.tanh()) }
        let chainTime = try seconds(backend, runs: 10) { chain() }
        let chainFlops = try flops(of: chain(), on: backend)
        let arithmetic = chainFlops / max(chainTime - launch, 1e-9) / 1e9

        var transfer: Double?
        if backend.memorySpace != .host {
            let bytes = 16 << 20
            let host = try constant([bytes / 4], 10)
            guard let value = host.node?.storedResult else { throw TensorError(.backendFailure, op: "calibrate", message: "no host probe") }
            var best = Double.infinity
            for _ in 0..<5 {
                let start = DispatchTime.now().uptimeNanoseconds
                let uploaded = try backend.upload(value)
                _ = try backend.download(uploaded)
                try backend.synchronize()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            transfer = Double(2 * bytes) / best / 1e9
        }
        var profile = DefaultProfiles.profile(for: backend)
        profile.matmulLargeGFLOPS = largeGFLOPS
        profile.matmulSmallGFLOPS = smallGFLOPS
        profile.matmulMediumGFLOPS = mediumGFLOPS
        profile.matmulSkinnyGFLOPS = skinnyGFLOPS
        profile.streamGBPerSecond = stream
        profile.reduceGBPerSecond = reduce
        profile.elementwiseGFLOPS = arithmetic
        profile.launchSeconds = launch
        profile.launchSecondsPerOperand = perOperand
        profile.lineWiseGBPerSecond = lineWise
        profile.movementGBPerSecond = movement
        profile.runMovementGBPerSecond = runMovement
        profile.reductionLaunchSeconds = reductionLaunch
        profile.lineWiseLaunchSeconds = lineWiseLaunch
        profile.movementLaunchSeconds = movementLaunch
        profile.lineWiseSecondsPerLine = lineWisePerLine
        profile.reductionSecondsPerLine = reductionPerLine
        profile.transferGBPerSecond = transfer ?? profile.transferGBPerSecond
        profile.calibrated = true
        return profile
    }

    /// The floating-point operations of the probe's plan on one backend (a fused chain counts
    /// each of its instructions).
    static func flops(of probe: Tensor, on backend: any Backend) throws(TensorError) -> Double {
        guard let node = probe.node else { throw probe.error ?? TensorError(.invalidArgument, op: "calibrate", message: "a probe did not build") }
        let planner = Planner(backends: [backend], profiles: Engine.shared.profiles, policy: .only(backend.kind))
        return try planner.plan(targets: [node]).steps.reduce(0) { $0 + $1.cost.flops }
    }

    /// Solves `seconds = lines · perLine + bytes / bandwidth` from a probe with few long lines and
    /// one with many short ones (launch costs already taken off); a negative share is taken as
    /// zero and the other fitted alone. Returns seconds per line and GB/s.
    static func perLineAndBandwidth(long: (seconds: Double, lines: Double, bytes: Double),
                                    short: (seconds: Double, lines: Double, bytes: Double)) -> (Double, Double) {
        let a = max(long.seconds, 1e-9)
        let b = max(short.seconds, 1e-9)
        let determinant = long.lines * short.bytes - short.lines * long.bytes
        var perLine = determinant == 0 ? 0 : (a * short.bytes - b * long.bytes) / determinant
        var secondsPerByte = determinant == 0 ? a / long.bytes : (long.lines * b - short.lines * a) / determinant
        if perLine < 0 {
            perLine = 0
            secondsPerByte = a / long.bytes
        } else if secondsPerByte <= 0 {
            perLine = b / short.lines
            secondsPerByte = max(a - long.lines * perLine, 1e-9) / long.bytes
        }
        return (perLine, 1 / secondsPerByte / 1e9)
    }

    private static func pow3(_ n: Int) -> Double { Double(n) * Double(n) * Double(n) }
}
