import Dispatch
import Foundation

/// Measures a backend's device profile by running probes through the engine itself.
///
/// The calibration is data: a list of probes (``probes``), each a small graph run on the backend
/// alone, its median time kept; and a list of cells (``cells``), each a term of one row of the
/// profile computed from those times. A new kind of work is a probe and its cells. Sizes shrink
/// for the naive backend, whose loops are slow. The whole calibration of the CPU backends takes a
/// few seconds; at most ~30 s with OpenCL.
package enum Calibration {
    /// Calibrates every available backend and stores the profiles on disk, marked when the
    /// machine was busy meanwhile (``markIfBusy(_:scaling:cores:)``).
    package static func calibrateAll(progress: (String) -> Void) throws -> [DeviceProfile] {
        let (profiles, busy) = try measuredNotingLoad { () throws -> [DeviceProfile] in
            var profiles: [DeviceProfile] = []
            for backend in Engine.shared.backends {
                progress("calibrating \(backend.id) (\(backend.deviceName))")
                profiles.append(try calibrate(backend))
            }
            return profiles
        }
        if let busy { progress(busy) }
        try ProfileStore.save(profiles)
        return profiles
    }

    /// Runs every probe on the backend and fills its profile's rows from the cells.
    static func calibrate(_ backend: any Backend) throws(TensorError) -> DeviceProfile {
        let slow = backend.id == .naive
        let scale = slow ? 4 : 1
        var measured = Measurements(scale: scale)
        var chosen: [(probe: Probe, runs: Int, build: () -> Tensor)] = []
        for probe in probes {
            guard let runs = slow ? probe.slowRuns : probe.runs else { continue }
            guard !probe.hostMemoryOnly || backend.memorySpace == .host else { continue }
            chosen.append((probe, runs, try probe.make(scale)))
        }
        var times: [ProbeName: [Double]] = [:]
        for pass in 0..<passes {
            for (probe, runs, build) in chosen where probe.splitAcrossPasses || pass == 0 {
                let share = probe.splitAcrossPasses ? passes : 1
                times[probe.name, default: []] += try samples(
                    backend, runs: (runs + share - 1) / share, budget: probe.budget / Double(share),
                    warmUpRuns: probe.warmUpRuns, afterFirstStep: probe.afterFirstStep, build)
            }
        }
        for (probe, _, _) in chosen {
            guard let samples = times[probe.name]?.sorted(), !samples.isEmpty else { continue }
            measured.seconds[probe.name] = probe.keepsBest ? samples[0] : samples[samples.count / 2]
        }
        measured.chainFLOPs = try flops(of: try chainProbe(scale)(), on: backend)
        measured.lineFLOPs = try flops(of: try softmaxLinesProbe(scale)(), on: backend)
        measured.windowFLOPs = try flops(of: try depthwiseProbe(scale, edge: Sizes.depthwiseEdge)(), on: backend)
        measured.largeWindowFLOPs = try flops(
            of: try depthwiseProbe(scale, edge: Sizes.largeDepthwiseEdge)(), on: backend)
        var profile = backend.defaultProfile
        for cell in cells {
            guard let value = cell.value(measured) else { continue }
            // A class without a row of its own (priced by its fallback's) starts its rate curve
            // afresh: the fallback's points are another kind of work's.
            var row = profile.rows[cell.costClass] ?? { () -> CostTerms in
                var fallback = profile.row(cell.costClass)
                if case .gflopsAt = cell.term { fallback.gflops = [] }
                return fallback
            }()
            switch cell.term {
            case .gflops: row.gflops = [RatePoint(flops: 1, gflops: value)]
            case .gflopsAt(let flops):
                row.gflops =
                    (row.gflops.filter { $0.flops != flops && $0.flops > 1 }
                    + [RatePoint(flops: flops, gflops: value)]).sorted { $0.flops < $1.flops }
            case .gbPerSecond: row.gbPerSecond = value
            case .launchSeconds: row.launchSeconds = value
            case .secondsPerLine: row.secondsPerLine = value
            case .secondsPerOperand: row.secondsPerOperand = value
            }
            profile.rows[cell.costClass] = row
        }
        if let memory = memoryTerms(measured, stated: backend.cacheBytes) {
            profile.memory = memory
            if let moving = movementMemoryRate(measured), moving < memory.gbPerSecond {
                profile.rows[.movement]?.memoryGBPerSecond = moving
            }
        }
        if backend.memorySpace != .host {
            let launch = measured.seconds[.launch] ?? 0
            profile.transfer = TransferTerms(gbPerSecond: try transferGBPerSecond(backend), launchSeconds: launch)
        }
        (profile.secondsPerOperation, profile.secondsPerEvaluation) = try bookkeepingSeconds(
            backend, launch: profile.row(.elementwise).launchSeconds)
        profile.calibrated = true
        return profile
    }

    /// Passes over the probes, each taking a share of every probe's runs: a slow spell of a
    /// shared machine, which lasts seconds, then falls on part of each probe's samples, and the
    /// medians pass over it, rather than on all the samples of the few probes it coincides with
    /// (one such spell rated 192³ products at half their rate, and a model's estimates at twice
    /// its time).
    static let passes = 3

    // MARK: The probes

    /// A probe's name: what the cells read its time by.
    enum ProbeName: Hashable, Sendable {
        case launch, manyOperands, reductionLaunch, lineWiseLaunch, movementLaunch
        case matmulSmall, matmulMedium, matmulLarge, matrixVector, fewRows
        case stream, chain, reduceLong, reduceShort, linesLong, linesShort, softmaxLines, movement, runMovement
        /// The memory probes (``memoryProbes``): a stream and a read far beyond the cache, reads of
        /// `count` floats between, a transpose far beyond.
        case memoryStream, memoryRead, cacheRead(Int), memoryMovement
        case depthwise, largeDepthwise
        case pointwise, largePointwise
    }

    /// A graph the backend runs alone, timed over runs after a warm-up run.
    struct Probe: Sendable {
        let name: ProbeName
        /// Measured runs (`nil`: not measured); on the naive backend, ``slowRuns``.
        var runs: Int?
        var slowRuns: Int?
        var budget: Double = 2
        /// Whether the plan's first step is left out: a launch probe reads the result of an
        /// earlier kernel, as most ops of a model do, rather than a freshly uploaded input, whose
        /// first use costs a device (PoCL) about as much again.
        var afterFirstStep = false
        /// Whether the probe keeps its best run rather than the median: a probe that tells how
        /// large a working set the cache holds, which a slow spell of a shared machine would
        /// make look smaller.
        var keepsBest = false
        /// Whether the probe runs only on backends that work on host memory: the memory read
        /// probes, which on PoCL's CPU device time its reduction kernel (3 GB/s), not the memory,
        /// and the transpose beyond the cache, which it runs at its in-cache rate.
        var hostMemoryOnly = false
        /// Unmeasured runs before the measured ones, in each pass.
        var warmUpRuns = 1
        /// Whether the runs are shared out over the passes (``passes``); else all run in the
        /// first: work whose rate settles only after many runs in a row, as a benchmark's does.
        var splitAcrossPasses = true
        /// Makes the inputs (at the scale) once and returns the builder of the probe's graph.
        let make: @Sendable (_ scale: Int) throws(TensorError) -> () -> Tensor
    }

    /// The sizes the probes and cells share.
    enum Sizes {
        /// Floats of each operand of the stream probe: three of them (12 MiB) stay in the
        /// last-level cache of a server CPU, where a model's activations mostly are.
        static func streamCount(_ scale: Int) -> Int { (1 << 20) / (scale * scale) }
        /// Bytes a stream probe (`x + y`) of `count` floats moves: two operands read, a result written.
        static func streamBytes(_ count: Int) -> Int { 3 * count * 4 }
        static func chainCount(_ scale: Int) -> Int { (1 << 20) / (scale * scale) }
        static func longRows(_ scale: Int) -> Int { 1024 / scale }
        /// Rows of 1024 floats the long reduction reads: 12 MiB, as the stream probe moves. Fewer
        /// (4 MiB) stay in two cores' L2 caches, and rated a 64 MiB mean at 1.5 times its speed.
        static func longReductionRows(_ scale: Int) -> Int { 3072 / scale }
        static func shortRows(_ scale: Int) -> Int { 16_384 / scale }
        static func skinnyK(_ scale: Int) -> Int { scale > 1 ? 256 : 768 }
        /// The rows of the few-rows product: a transformer's projections on one short sentence.
        static let fewRows = 12
        /// A 1 × 1 convolution probe: its name, channels in and out, and plane edge.
        struct Pointwise: Sendable {
            let name: ProbeName
            let inputs: Int
            let outputs: Int
            let edge: Int
            /// Two FLOPs per input channel per output.
            var flops: Double { 2 * Double(inputs * outputs * edge * edge) }
        }
        /// The pointwise probes: a bottleneck's 1 × 1 convolutions at 28 × 28 (6.4 MFLOP) and at
        /// 56 × 56 (103 MFLOP), the two ends of a ResNet's.
        static let pointwise = Pointwise(name: .pointwise, inputs: 64, outputs: 64, edge: 28)
        static let largePointwise = Pointwise(name: .largePointwise, inputs: 64, outputs: 256, edge: 56)
        /// Channels and plane edges of the depthwise probes: a MobileNet layer's planes, at 56 × 56
        /// and at 112 × 112, where fixed costs per plane and per split weigh less.
        static func depthwiseChannels(_ scale: Int) -> Int { 32 / scale }
        static func depthwiseEdge(_ scale: Int) -> Int { 56 / scale }
        static func largeDepthwiseEdge(_ scale: Int) -> Int { 112 / scale }
    }

    /// Launch costs on tiny work, then rates on work large enough to show them.
    static let probes: [Probe] = computeProbes + memoryProbes

    /// The probes of work in the cache: the rows' terms.
    static let computeProbes: [Probe] = [
        // An op on 256 elements (one for the naive loops, whose work would show), dominated by
        // fixed costs, on the result of an earlier kernel (a softmax, which nothing fuses with).
        // Not one element everywhere: PoCL takes half as long again over a one-item range.
        Probe(name: .launch, runs: 200, slowRuns: 200, budget: 1, afterFirstStep: true) { scale throws(TensorError) in
            let one = try input([scale > 1 ? 1 : 256], 1)
            return {
                let resident = one.softmax()
                return resident + resident
            }
        },
        // The cost of each further operand: a fused region of 17 (one from a kernel, 16 scalars
        // from the host, as a chain with constants reads them).
        Probe(name: .manyOperands, runs: 50, slowRuns: 50, budget: 1, afterFirstStep: true) {
            scale throws(TensorError) in
            let one = try input([scale > 1 ? 1 : 256], 1)
            return {
                var chain = one.softmax()
                for step in 0..<16 { chain = chain * (Float(1 + step) / 16) }
                return chain
            }
        },
        // Reductions, line-wise ops and data movement run kernels of their own, with fixed costs
        // of their own (a two-stage device reduction is more than one launch): one-row probes.
        Probe(name: .reductionLaunch, runs: 100, slowRuns: 100, budget: 1, afterFirstStep: true) {
            _ throws(TensorError) in
            let row = try input([1, 8], 11)
            return { row.softmax().sum(alongAxes: 1) }
        },
        Probe(name: .lineWiseLaunch, runs: 100, slowRuns: 100, budget: 1, afterFirstStep: true) {
            _ throws(TensorError) in
            let row = try input([1, 8], 11)
            return { row.softmax().softmax() }
        },
        Probe(name: .movementLaunch, runs: 100, slowRuns: 100, budget: 1, afterFirstStep: true) {
            _ throws(TensorError) in
            let square = try input([4, 4], 12)
            return { square.softmax().transposed().reshaped(to: [16]) }
        },
        // Matrix products at three sizes: the rate grows with the work. The naive loops run at
        // one rate whatever the size, and a 512³ product would take them half a second a run.
        matmul(.matmulSmall, DeviceProfile.matmulProbeEdges.small, seed: 4, runs: 20, slowRuns: 20),
        matmul(.matmulMedium, DeviceProfile.matmulProbeEdges.medium, seed: 20, runs: 10, slowRuns: 2),
        matmul(.matmulLarge, DeviceProfile.matmulProbeEdges.large, seed: 2, runs: 5, slowRuns: nil),
        // Products with one row, and with a few: the two ends of the matrix·vector rate curve.
        // OpenBLAS runs a 12-row product at half its square rate, five times its one-row rate.
        Probe(name: .matrixVector, runs: 20, slowRuns: 20) { scale throws(TensorError) in
            let k = Sizes.skinnyK(scale)
            let (v, m) = (try input([1, k], 5), try input([k, k], 6))
            return { v.matmul(m) }
        },
        Probe(name: .fewRows, runs: 20, slowRuns: 5) { scale throws(TensorError) in
            let k = Sizes.skinnyK(scale)
            let (v, m) = (try input([Sizes.fewRows, k], 5), try input([k, k], 6))
            return { v.matmul(m) }
        },
        Probe(name: .stream, runs: 20, slowRuns: 10) { scale throws(TensorError) in
            let (x, y) = (try input([Sizes.streamCount(scale)], 7), try input([Sizes.streamCount(scale)], 8))
            return { x + y }
        },
        // Arithmetic: a fused chain of the kind models run (tanh for the transcendental, products
        // and sums), on 1M floats so that it measures the kernel rather than memory. A lone exp
        // rated the host engine's chains 2x fast: each step of a chain is a pass over its strip
        // there, which a single op does not show.
        Probe(name: .chain, runs: 10, slowRuns: 10) { scale throws(TensorError) in try chainProbe(scale) },
        // Few long lines and many short ones, to tell a cost per line (a work-group per row on a
        // device) from the bytes.
        Probe(name: .reduceLong, runs: 10, slowRuns: 10) { scale throws(TensorError) in
            let rows = Sizes.longReductionRows(scale)
            let r = try filled(rows * 1024, 9).reshaped(to: [rows, 1024])
            return { r.sum(alongAxes: 1) }
        },
        // Within 0.1 s, as are the short lines, the long softmax and the run movement: PoCL's CPU
        // device takes 7-15 ms a run of each (the host backends a tenth of a millisecond).
        Probe(name: .reduceShort, runs: 10, slowRuns: 10, budget: 0.1) { scale throws(TensorError) in
            let r = try input([Sizes.shortRows(scale), 8], 13)
            return { r.sum(alongAxes: 1) }
        },
        // Line-wise work's bytes and lines from layer norms, whose arithmetic is light; its
        // arithmetic from a softmax over the long lines, whose exponentials are not.
        Probe(name: .linesLong, runs: 10, slowRuns: 10) { scale throws(TensorError) in
            let r = try input([Sizes.longRows(scale), 1024], 9)
            return { r.layerNorm() }
        },
        Probe(name: .linesShort, runs: 10, slowRuns: 10, budget: 0.1) { scale throws(TensorError) in
            let r = try input([Sizes.shortRows(scale), 8], 13)
            return { r.layerNorm() }
        },
        Probe(name: .softmaxLines, runs: 10, slowRuns: 10, budget: 0.1) { scale throws(TensorError) in
            try softmaxLinesProbe(scale)
        },
        Probe(name: .movement, runs: 10, slowRuns: 10) { scale throws(TensorError) in
            let r = try input([Sizes.longRows(scale), 1024], 9)
            return { r.transposed().reshaped(to: [Sizes.longRows(scale) * 1024]) }
        },
        // The same bytes moved in runs of 64 floats, as attention's head split and merge do: a
        // host copy streams them, a device kernel that indexes each element may not.
        Probe(name: .runMovement, runs: 10, slowRuns: 10, budget: 0.1) { scale throws(TensorError) in
            let heads = try input([Sizes.longRows(scale), 16, 64], 16)
            return { heads.transposed(permutation: [1, 0, 2]).reshaped(to: [Sizes.longRows(scale) * 1024]) }
        },
        // Window work: a depthwise 3 × 3 convolution, which no backend lowers to a product, on
        // two plane sizes: the rate of window work grows with its size, as a product's does. Runs
        // of tens of microseconds: a hundred of them, so that the median is a warm run's; within
        // 0.1 s (PoCL's CPU device takes 1-4 ms a run, and spent 0.3 s on the large one in 0.3 s).
        Probe(name: .depthwise, runs: 100, slowRuns: 10, budget: 0.1) { scale throws(TensorError) in
            try depthwiseProbe(scale, edge: Sizes.depthwiseEdge)
        },
        Probe(name: .largeDepthwise, runs: 100, slowRuns: 4, budget: 0.1) { scale throws(TensorError) in
            try depthwiseProbe(scale, edge: Sizes.largeDepthwiseEdge)
        },
        // Pointwise work: 1 × 1 convolutions at two sizes (not on the naive loops, which price
        // them by their products' rate).
        Probe(name: .pointwise, runs: 20, slowRuns: nil) { _ throws(TensorError) in
            try pointwiseProbe(Sizes.pointwise)
        },
        Probe(name: .largePointwise, runs: 10, slowRuns: nil) { _ throws(TensorError) in
            try pointwiseProbe(Sizes.largePointwise)
        },
    ]

    private static func matmul(_ name: ProbeName, _ edge: Int, seed: UInt64, runs: Int, slowRuns: Int?) -> Probe {
        Probe(name: name, runs: runs, slowRuns: slowRuns) { _ throws(TensorError) in
            let (a, b) = (try input([edge, edge], seed), try input([edge, edge], seed + 1))
            return { a.matmul(b) }
        }
    }

    /// A softmax over few long lines: the rate of line-wise work's arithmetic (the exponentials).
    private static func softmaxLinesProbe(_ scale: Int) throws(TensorError) -> () -> Tensor {
        let r = try input([Sizes.longRows(scale), 1024], 9)
        return { r.softmax() }
    }

    /// A depthwise 3 × 3 convolution with padding on planes of `edge(scale)`: the rate of window
    /// work's arithmetic.
    private static func depthwiseProbe(_ scale: Int, edge: (Int) -> Int) throws(TensorError) -> () -> Tensor {
        let (channels, edge) = (Sizes.depthwiseChannels(scale), edge(scale))
        let (x, w) = (try input([1, channels, edge, edge], 17), try input([channels, 1, 3, 3], 18))
        return { x.convolution(weight: w, padding: .symmetric([1, 1]), groupCount: channels) }
    }

    /// A 1 × 1 convolution without a bias: the rate of pointwise work.
    private static func pointwiseProbe(_ size: Sizes.Pointwise) throws(TensorError) -> () -> Tensor {
        let x = try input([1, size.inputs, size.edge, size.edge], 19)
        let w = try input([size.outputs, size.inputs, 1, 1], 20)
        return { x.convolution(weight: w) }
    }

    private static func chainProbe(_ scale: Int) throws(TensorError) -> () -> Tensor {
        let (u, w) = (try input([Sizes.chainCount(scale)], 14), try input([Sizes.chainCount(scale)], 15))
        return { (u * w + w).relu() * 0.5 + u.tanh() }
    }

    // MARK: The cells

    /// One term of one row of the profile, from the probes' times.
    struct Cell: Sendable {
        let costClass: CostClass
        let term: Term
        /// The value, or `nil` when its probes were not measured (the row keeps its default).
        let value: @Sendable (Measurements) -> Double?
    }

    /// A column of a profile's rows.
    enum Term: Sendable, Hashable {
        case gflops
        /// The rate of work of this many FLOPs, a point of the row's rate curve.
        case gflopsAt(flops: Double)
        case gbPerSecond, launchSeconds, secondsPerLine, secondsPerOperand
    }

    /// The probes' median seconds, and the sizes they ran at.
    struct Measurements: Sendable {
        let scale: Int
        var seconds: [ProbeName: Double] = [:]
        /// The floating-point operations of the chain probe's plan (each step of its region counts).
        var chainFLOPs = 0.0
        /// The floating-point operations of the softmax probe's plan.
        var lineFLOPs = 0.0
        /// The floating-point operations of the depthwise probes' plans.
        var windowFLOPs = 0.0
        var largeWindowFLOPs = 0.0

        subscript(_ name: ProbeName) -> Double? { seconds[name] }

        /// Seconds of a probe beyond a launch probe's (at least a nanosecond).
        func beyond(_ name: ProbeName, _ launch: ProbeName) -> Double? {
            guard let time = seconds[name] else { return nil }
            return Swift.max(time - (seconds[launch] ?? 0), 1e-9)
        }

        /// `bytes` moved in the probe's seconds beyond the launch, in GB/s.
        func rate(_ name: ProbeName, bytes: Int, launch: ProbeName = .launch) -> Double? {
            beyond(name, launch).map { Double(bytes) / $0 / 1e9 }
        }

        /// A cube product's GFLOP/s.
        func matmulRate(_ name: ProbeName, edge: Int) -> Double? {
            beyond(name, .launch).map { 2 * Double(edge) * Double(edge) * Double(edge) / $0 / 1e9 }
        }

        /// Seconds per line and GB/s of line-wise work, from a probe of few long lines and one of
        /// many short ones (see ``Calibration/perLineAndBandwidth(long:short:)``).
        func lineFit(
            long: ProbeName, short: ProbeName, launch: ProbeName, bytesPerElement: (Int) -> Int
        ) -> (perLine: Double, gbPerSecond: Double)? {
            guard let longSeconds = beyond(long, launch), let shortSeconds = beyond(short, launch) else { return nil }
            let longRows = long == .reduceLong ? Sizes.longReductionRows(scale) : Sizes.longRows(scale)
            let shortRows = Sizes.shortRows(scale)
            return Calibration.perLineAndBandwidth(
                long: (
                    longSeconds, Double(longRows),
                    Double(bytesPerElement(longRows * 1024) + (long == .reduceLong ? longRows * 4 : 0))
                ),
                short: (
                    shortSeconds, Double(shortRows),
                    Double(bytesPerElement(shortRows * 8) + (short == .reduceShort ? shortRows * 4 : 0))
                ))
        }
    }

    /// The FLOPs of a cube product of this edge.
    static func cube(_ edge: Int) -> Double { RatePoint.cube(edge, gflops: 0).flops }

    /// The FLOPs of the skinny probes: `rows` rows times the k×k matrix.
    static func skinny(rows: Int, scale: Int) -> Double {
        2 * Double(rows) * Double(Sizes.skinnyK(scale) * Sizes.skinnyK(scale))
    }

    /// The FLOPs of a depthwise probe at full scale: two per tap, nine taps per output.
    static func depthwise(edge: (Int) -> Int) -> Double {
        18 * Double(Sizes.depthwiseChannels(1) * edge(1) * edge(1))
    }

    /// Every term a calibration measures.
    static let cells: [Cell] = {
        let arithmetic: @Sendable (Measurements) -> Double? = { m in
            m.beyond(.chain, .launch).map { m.chainFLOPs / $0 / 1e9 }
        }
        let edges = DeviceProfile.matmulProbeEdges
        var cells: [Cell] = [
            Cell(costClass: .elementwise, term: .launchSeconds) { $0[.launch] },
            Cell(costClass: .elementwise, term: .secondsPerOperand) { m in
                m[.manyOperands].map { Swift.max(0, $0 - (m[.launch] ?? 0)) / 16 }
            },
            Cell(costClass: .elementwise, term: .gbPerSecond) { m in
                m.rate(.stream, bytes: Sizes.streamBytes(Sizes.streamCount(m.scale)))
            },
            Cell(costClass: .reduction, term: .launchSeconds) { $0[.reductionLaunch] },
            Cell(costClass: .reduction, term: .secondsPerLine) { m in
                m.lineFit(long: .reduceLong, short: .reduceShort, launch: .reductionLaunch) { $0 * 4 }?.perLine
            },
            Cell(costClass: .reduction, term: .gbPerSecond) { m in
                m.lineFit(long: .reduceLong, short: .reduceShort, launch: .reductionLaunch) { $0 * 4 }?.gbPerSecond
            },
            Cell(costClass: .lineWise, term: .launchSeconds) { $0[.lineWiseLaunch] },
            Cell(costClass: .lineWise, term: .secondsPerLine) { m in
                m.lineFit(long: .linesLong, short: .linesShort, launch: .lineWiseLaunch) { $0 * 8 }?.perLine
            },
            Cell(costClass: .lineWise, term: .gbPerSecond) { m in
                m.lineFit(long: .linesLong, short: .linesShort, launch: .lineWiseLaunch) { $0 * 8 }?.gbPerSecond
            },
            Cell(costClass: .movement, term: .launchSeconds) { $0[.movementLaunch] },
            Cell(costClass: .movement, term: .gbPerSecond) { m in
                m.rate(.movement, bytes: 2 * Sizes.longRows(m.scale) * 1024 * 4, launch: .movementLaunch)
            },
            Cell(costClass: .runMovement, term: .launchSeconds) { $0[.movementLaunch] },
            Cell(costClass: .runMovement, term: .gbPerSecond) { m in
                m.rate(.runMovement, bytes: 2 * Sizes.longRows(m.scale) * 1024 * 4, launch: .movementLaunch)
            },
            Cell(costClass: .matmul, term: .gflopsAt(flops: cube(edges.small))) {
                $0.matmulRate(.matmulSmall, edge: edges.small)
            },
            Cell(costClass: .matmul, term: .gflopsAt(flops: cube(edges.medium))) {
                $0.matmulRate(.matmulMedium, edge: edges.medium)
            },
            // The naive loops' large rate is their medium one (a 512³ product is not run there).
            Cell(costClass: .matmul, term: .gflopsAt(flops: cube(edges.large))) { m in
                m.matmulRate(.matmulLarge, edge: edges.large) ?? m.matmulRate(.matmulMedium, edge: edges.medium)
            },
            Cell(costClass: .matrixVector, term: .gflopsAt(flops: skinny(rows: 1, scale: 1))) { m in
                m.beyond(.matrixVector, .launch).map { skinny(rows: 1, scale: m.scale) / $0 / 1e9 }
            },
            Cell(costClass: .matrixVector, term: .gflopsAt(flops: skinny(rows: Sizes.fewRows, scale: 1))) { m in
                m.beyond(.fewRows, .launch).map { skinny(rows: Sizes.fewRows, scale: m.scale) / $0 / 1e9 }
            },
        ]
        // Every kind of work but line-wise and window work does its arithmetic at the chain's rate;
        // products and window work move their operands at the stream's and launch like
        // elementwise ops.
        // Line-wise work does its own at the softmax probe's: its exponentials run in a kernel of
        // their own, several times the chain's rate per FLOP.
        for costClass in [CostClass.elementwise, .reduction, .movement, .runMovement] {
            cells.append(Cell(costClass: costClass, term: .gflops, value: arithmetic))
        }
        cells.append(
            Cell(costClass: .lineWise, term: .gflops) { m in
                m.beyond(.softmaxLines, .lineWiseLaunch).map { m.lineFLOPs / $0 / 1e9 }
            })
        // Window work does its arithmetic at the depthwise probes' rates, a curve by size.
        cells.append(
            Cell(costClass: .window, term: .gflopsAt(flops: depthwise(edge: Sizes.depthwiseEdge))) { m in
                m.beyond(.depthwise, .launch).map { m.windowFLOPs / $0 / 1e9 }
            })
        cells.append(
            Cell(costClass: .window, term: .gflopsAt(flops: depthwise(edge: Sizes.largeDepthwiseEdge))) { m in
                m.beyond(.largeDepthwise, .launch).map { m.largeWindowFLOPs / $0 / 1e9 }
            })
        // Pointwise work at the 1 × 1 probes' rates, a curve by size (their FLOPs as the op table
        // counts them, whatever the backend: the probes run at full scale).
        for size in [Sizes.pointwise, Sizes.largePointwise] {
            cells.append(
                Cell(costClass: .pointwise, term: .gflopsAt(flops: size.flops)) { m in
                    m.beyond(size.name, .launch).map { size.flops / $0 / 1e9 }
                })
        }
        for costClass in [CostClass.matmul, .matrixVector, .window, .pointwise] {
            cells.append(
                Cell(costClass: costClass, term: .gbPerSecond) { m in
                    m.rate(.stream, bytes: Sizes.streamBytes(Sizes.streamCount(m.scale)))
                })
            cells.append(Cell(costClass: costClass, term: .launchSeconds) { $0[.launch] })
        }
        return cells
    }()

    // MARK: Measuring

    /// A planner of the backend alone (its default profile: with one backend, placement needs no
    /// figures), so that calibrating never reads the engine's profiles, which it is making.
    static func alone(_ backend: any Backend) -> Planner {
        Planner(backends: [backend], profiles: [backend.id: backend.defaultProfile], policy: .only(backend.id))
    }

    /// A probe input: a host constant, so that the probe measures the op, not the input's making.
    /// Uniform in [-1, 1), whose values cost a hash each: normal ones (a logarithm and a cosine
    /// each) took 0.3 s of a host backend's 1 s calibration to draw.
    static func input(_ shape: [Int], _ seed: UInt64) throws(TensorError) -> Tensor {
        let t = Tensor(randomUniform: shape, in: -1..<1, seed: seed)
        if let error = t.error { throw error }
        return t
    }

    /// The seconds of the probe's op on one backend in up to `runs` runs after `warmUpRuns`: the
    /// plan runs in measure mode and only the kernel steps count (copies of the host inputs do
    /// not). The calibration keeps their median, not the best run, because the planner predicts
    /// the typical time on a machine that may be shared, and `tensorplan quality` compares with
    /// medians too.
    static func samples(
        _ backend: any Backend, runs: Int, budget: Double = 2, warmUpRuns: Int = 1, afterFirstStep: Bool = false,
        _ build: () -> Tensor
    ) throws(TensorError) -> [Double] {
        var samples: [Double] = []
        let started = DispatchTime.now().uptimeNanoseconds
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        let planner = alone(backend)
        func run() throws(TensorError) -> Double {
            let target = build()
            guard let node = target.node else {
                throw target.error ?? TensorError(.invalidArgument, op: "calibrate", message: "a probe did not build")
            }
            let plan = try planner.plan(targets: [node])
            let (_, _, steps) = try Executor(backends: [backend]).run(plan, measure: true)
            return steps.dropFirst(afterFirstStep ? 1 : 0).reduce(0, +)
        }
        // Warm-up runs take at most half the budget (a slow device's transposes take 50 ms each).
        for _ in 0..<warmUpRuns where elapsed() <= budget / 2 { _ = try run() }
        for _ in 0..<runs {
            samples.append(try run())
            if elapsed() > budget { break }
        }
        return samples
    }

    /// Host ↔ device GB/s: the best of five round trips of 16 MiB.
    private static func transferGBPerSecond(_ backend: any Backend) throws(TensorError) -> Double {
        let bytes = 16 << 20
        let host = try input([bytes / 4], 10)
        guard let value = host.node?.storedResult else {
            throw TensorError(.backendFailure, op: "calibrate", message: "no host probe")
        }
        var best = Double.infinity
        for _ in 0..<5 {
            let start = DispatchTime.now().uptimeNanoseconds
            let uploaded = try backend.upload(value)
            _ = try backend.download(uploaded)
            try backend.synchronize()
            best = Swift.min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        return Double(2 * bytes) / best / 1e9
    }

    /// The floating-point operations of the probe's plan on one backend (a fused chain counts
    /// each of its instructions).
    static func flops(of probe: Tensor, on backend: any Backend) throws(TensorError) -> Double {
        guard let node = probe.node else {
            throw probe.error ?? TensorError(.invalidArgument, op: "calibrate", message: "a probe did not build")
        }
        let planner = alone(backend)
        return try planner.plan(targets: [node]).steps.reduce(0) { $0 + $1.cost.flops }
    }

    /// Solves `seconds = lines · perLine + bytes / bandwidth` from a probe with few long lines and
    /// one with many short ones (launch costs already taken off); a negative share is taken as
    /// zero and the other fitted alone. Returns seconds per line and GB/s.
    static func perLineAndBandwidth(
        long: (seconds: Double, lines: Double, bytes: Double),
        short: (seconds: Double, lines: Double, bytes: Double)
    ) -> (Double, Double) {
        let a = Swift.max(long.seconds, 1e-9)
        let b = Swift.max(short.seconds, 1e-9)
        let determinant = long.lines * short.bytes - short.lines * long.bytes
        var perLine = determinant == 0 ? 0 : (a * short.bytes - b * long.bytes) / determinant
        var secondsPerByte = determinant == 0 ? a / long.bytes : (long.lines * b - short.lines * a) / determinant
        if perLine < 0 {
            perLine = 0
            secondsPerByte = a / long.bytes
        } else if secondsPerByte <= 0 {
            perLine = b / short.lines
            secondsPerByte = Swift.max(a - long.lines * perLine, 1e-9) / long.bytes
        }
        return (perLine, 1 / secondsPerByte / 1e9)
    }
}
