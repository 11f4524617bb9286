import Foundation
import Testing
@testable import TensorEngine

/// The cost formulas behind the planner's estimates, checked by hand.
@Suite("Cost model")
struct CostModelTests {
    static func signature(_ shape: [Int], _ type: ScalarType = .float32) -> TensorSignature {
        TensorSignature(shape: shape, scalarType: type)
    }

    /// The op table's cost of `op` on operands of these signatures (layouts unknown).
    static func cost(_ op: Op, _ inputs: [TensorSignature], _ output: TensorSignature) -> OpCost {
        op.descriptor.cost(op, inputs.map { CostOperand(signature: $0, layout: nil) }, output)
    }

    /// A product's rate grows with its size: the calibrated rates at the probes' sizes, linear in
    /// log FLOPs between them, flat beyond; products with a dimension under 16 take the
    /// matrix·vector row.
    @Test func matrixProductRatesFollowTheProbes() {
        func cube(_ edge: Double) -> Double { 2 * edge * edge * edge }
        // Two points: 64³ → 10, 512³ → 100; 128³ lies a third of the way in log FLOPs (a factor 8
        // of 512 in FLOPs).
        var row = CostTerms(gflops: [.cube(64, gflops: 10), .cube(512, gflops: 100)], gbPerSecond: 1, launchSeconds: 0)
        #expect(row.gflops(forFLOPs: cube(64)) == 10)
        #expect(abs(row.gflops(forFLOPs: cube(128)) - 40) < 1e-9)
        #expect(row.gflops(forFLOPs: cube(512)) == 100)
        #expect(row.gflops(forFLOPs: cube(8)) == 10, "below the small probe: flat")
        #expect(row.gflops(forFLOPs: cube(4096)) == 100, "above the large probe: flat")
        // A product with a dimension under 16 is matrix·vector work, priced by that row.
        let skinny = Self.cost(.matmul, [Self.signature([15, 512]), Self.signature([512, 4096])], Self.signature([15, 4096]))
        #expect(skinny.costClass == .matrixVector)
        #expect(Self.cost(.matmul, [Self.signature([16, 8]), Self.signature([8, 16])], Self.signature([16, 16])).costClass == .matmul)
        // With a medium point at 192³: 64³…192³ is a factor 27 in FLOPs, so 128³ (a factor 8) is
        // log 8 / log 27 = 0.631 of the way from 10 to 70; 192³ → 70 exactly.
        row.gflops.insert(.cube(192, gflops: 70), at: 1)
        #expect(abs(row.gflops(forFLOPs: cube(192)) - 70) < 1e-9)
        #expect(abs(row.gflops(forFLOPs: cube(128)) - (10 + 60 * log(8) / log(27))) < 1e-9)
        // The seconds of a 256³ product: its FLOPs at the interpolated rate, plus the launch.
        row.launchSeconds = 1e-5
        var profile = PlannerTests.profile(.openblas, gflops: 1, bandwidth: 1, launch: 0, link: nil)
        profile.rows[.matmul] = row
        profile.rows[.matrixVector] = CostTerms(gflops: 5, gbPerSecond: 1, launchSeconds: 0)
        let product = Cost(flops: cube(256), bytesRead: 0, bytesWritten: 0, launches: 1)
        let rate = 70 + 30 * log(cube(256) / cube(192)) / log(cube(512) / cube(192))
        #expect(abs(profile.seconds(for: product, costClass: .matmul) - (cube(256) / (rate * 1e9) + 1e-5)) < 1e-12)
        #expect(profile.seconds(for: Cost(flops: 5e9), costClass: .matrixVector) == 1, "5 GFLOP at 5 GFLOP/s")
    }

    /// A class without a row of its own is priced by its fallback's.
    @Test func missingRowsFallBack() {
        var profile = PlannerTests.profile(.openblas, gflops: 1, bandwidth: 1, launch: 0, link: nil)
        profile.rows = [.elementwise: CostTerms(gflops: 1, gbPerSecond: 2, launchSeconds: 0),
                        .movement: CostTerms(gflops: 1, gbPerSecond: 4, launchSeconds: 0)]
        let cost = Cost(bytesRead: 8e9)
        #expect(profile.seconds(for: cost, costClass: .runMovement) == 2, "run movement falls back to movement")
        #expect(profile.seconds(for: cost, costClass: .lineWise) == 4, "line-wise work to reductions, then elementwise")
    }

    /// Work that fits in the last-level cache moves at its row's GB/s; from twice the cache's
    /// size, at the memory's (or the row's, when slower); between, a blend in harmonic terms.
    @Test func bytesBeyondTheCacheStreamFromMemory() {
        var profile = PlannerTests.profile(.openblas, gflops: 1000, bandwidth: 1, launch: 0, link: nil)
        profile.rows = [.elementwise: CostTerms(gflops: 1000, gbPerSecond: 100, launchSeconds: 0),
                        .movement: CostTerms(gflops: 1000, gbPerSecond: 5, launchSeconds: 0)]
        let cache = 32e6
        func seconds(_ bytes: Double, _ costClass: CostClass = .elementwise) -> Double {
            profile.seconds(for: Cost(bytesRead: bytes), costClass: costClass)
        }
        #expect(seconds(64e6) == 64e6 / 100e9, "no memory terms: the row's rate at every size")
        profile.memory = MemoryTerms(cacheBytes: cache, gbPerSecond: 20)
        #expect(seconds(cache) == cache / 100e9, "a working set of the cache's size: in cache")
        #expect(abs(seconds(2 * cache) - 2 * cache / 20e9) < 1e-15, "twice the cache: all from memory")
        #expect(abs(seconds(10 * cache) - 10 * cache / 20e9) < 1e-15)
        // 1.5 times the cache: half of the bytes at 100 GB/s, half at 20.
        #expect(abs(seconds(48e6) - (24e6 / 100e9 + 24e6 / 20e9)) < 1e-15)
        // A row slower than the memory keeps its own rate.
        #expect(abs(seconds(10 * cache, .movement) - 10 * cache / 5e9) < 1e-15)
        // A row with a memory rate of its own (a transpose's) moves at it beyond the cache, and
        // at its own rate in the cache.
        var transposes = CostTerms(gflops: 1000, gbPerSecond: 100, launchSeconds: 0)
        transposes.memoryGBPerSecond = 12
        profile.rows[.runMovement] = transposes
        #expect(abs(seconds(10 * cache, .runMovement) - 10 * cache / 12e9) < 1e-15)
        #expect(abs(seconds(48e6, .runMovement) - (24e6 / 100e9 + 24e6 / 12e9)) < 1e-15)
        #expect(seconds(cache, .runMovement) == cache / 100e9)
    }

    /// Operand bytes streamed from memory (a model's weights beyond the cache) bound the time
    /// from below like the work's own bytes, at the memory's rate; without memory terms, nothing.
    @Test func streamedOperandsBoundTheTime() {
        var profile = PlannerTests.profile(.openblas, gflops: 100, bandwidth: 50, launch: 0, link: nil)
        let product = Cost(flops: 2e6, bytesRead: 1e6, launches: 0)
        #expect(profile.seconds(for: product, costClass: .matmul, streamedBytes: 4e6) == 2e6 / 100e9)
        profile.memory = MemoryTerms(cacheBytes: 32e6, gbPerSecond: 20)
        #expect(profile.seconds(for: product, costClass: .matmul) == 2e6 / 100e9, "compute-bound in cache")
        #expect(abs(profile.seconds(for: product, costClass: .matmul, streamedBytes: 4e6) - 4e6 / 20e9) < 1e-15)
        #expect(profile.seconds(for: product, costClass: .matmul, streamedBytes: 1e3) == 2e6 / 100e9)
    }

    /// The planner streams a step's source operands only when the graph's sources together
    /// outgrow the cache: a product by a 4 MB weight beside 40 MB of other weights (beyond twice a
    /// 16 MB cache) is priced at the memory's rate for its weight, alone at its arithmetic's; with
    /// a 32 MB cache, whose share of the 44 MB of sources falls straight from all at 32 MB to none
    /// at 64, the share it does not keep (0.3755) is streamed.
    @Test func weightsBeyondTheCacheAreStreamed() throws {
        var profile = PlannerTests.profile(.openblas, gflops: 1000, bandwidth: 1000, launch: 0, link: nil)
        profile.memory = MemoryTerms(cacheBytes: 16e6, gbPerSecond: 20)
        let planner = Planner(
            backends: [SyntheticDevice(id: .openblas, memorySpace: .host)], profiles: [.openblas: profile],
            policy: .only(.openblas))
        let x = Tensor(shape: [4, 1000], scalars: [Float](repeating: 1, count: 4000))
        let weight = Tensor(shape: [1000, 1000], scalars: [Float](repeating: 0.5, count: 1_000_000))
        func productSeconds(_ targets: [Tensor]) throws -> Double {
            let plan = ComputePlan(try planner.plan(targets: targets.compactMap(\.node)), cached: false)
            return try #require(plan.operations.first { $0.op == "matmul" }).estimatedCost.seconds
        }
        let alone = try productSeconds([x.matmul(weight)])
        #expect(alone < 1e-5, "8 MFLOP at 1000 GFLOP/s, its 4 MB in cache: \(alone)")
        let others = Tensor(shape: [10_000, 1000], scalars: [Float](repeating: 2, count: 10_000_000))
        let beside = try productSeconds([x.matmul(weight), others.sum()])
        #expect(abs(beside - 4.016e6 / 20e9) < 1e-9, "its 4 MB weight and 16 kB input at 20 GB/s: \(beside)")
        // A weight read through a view (transposed) streams all the same.
        let transposed = try productSeconds([x.matmul(weight.transposed()), others.sum()])
        #expect(abs(transposed - 4.016e6 / 20e9) < 1e-9, "the transposed weight's 4 MB: \(transposed)")
        // A gather streams the rows it reads, not its whole 40 MB table.
        let rows = others.gathering(atIndices: Tensor([1, 5, 7] as [Int32]), alongAxis: 0)
        let plan = ComputePlan(try planner.plan(targets: [rows].compactMap(\.node)), cached: false)
        let gather = try #require(plan.operations.first { $0.op == "gather" }).estimatedCost.seconds
        #expect(gather < 1e-5, "3 rows of 4 kB: \(gather)")
        // A 32 MB cache keeps 2 - 44.016 / 32 of the sources; the rest of the weight is streamed.
        profile.memory = MemoryTerms(cacheBytes: 32e6, gbPerSecond: 20)
        let blended = Planner(
            backends: [SyntheticDevice(id: .openblas, memorySpace: .host)], profiles: [.openblas: profile],
            policy: .only(.openblas))
        let partly = ComputePlan(
            try blended.plan(targets: [x.matmul(weight), others.sum()].compactMap(\.node)), cached: false)
        let share = 44.016e6 / 32e6 - 1
        let product = try #require(partly.operations.first { $0.op == "matmul" }).estimatedCost.seconds
        #expect(abs(product - share * 4.016e6 / 20e9) < 1e-9, "\(product)")
    }

    /// Sizes of caches as sysfs writes them.
    @Test func cacheSizesParse() {
        #expect(HostCaches.parseSize("32768K") == 32 << 20)
        #expect(HostCaches.parseSize("1M") == 1 << 20)
        #expect(HostCaches.parseSize("4096") == 4096)
        for bad in ["", "K", "-1K", "12Q", "0K", "99999999999999999999G"] { #expect(HostCaches.parseSize(bad) == nil, "\(bad)") }
    }

    @Test func lineWiseOpsAndReductionsCountTheirLines() {
        let x = Self.signature([4, 6, 8])
        // Softmax along the middle axis: 4 · 8 rows of 6.
        #expect(Self.cost(.alongAxis(.softmax, 1), [x], x).cost.lines == 32)
        #expect(Self.cost(.layerNorm(axis: 2, epsilon: 1e-5), [x], x).cost.lines == 24)
        // A reduction has one line per output.
        let reduced = Self.signature([4, 8])
        #expect(Self.cost(.reduction(.sum, axes: [1], keepRank: false), [x], reduced).cost.lines == 32)
        // Elementwise ops have none; an empty softmax axis has no lines.
        #expect(Self.cost(Op(.exp), [x], x).cost.lines == 0)
        let empty = Self.signature([4, 0])
        #expect(Self.cost(.alongAxis(.softmax, 1), [empty], empty).cost.lines == 0)
        // An elementwise op's FLOPs are its expression's: exp is 10 per element, sigmoid (negate,
        // exp, add, divide) 16.
        #expect(Self.cost(Op(.exp), [x], x).cost.flops == 10 * 192)
        #expect(Self.cost(Op(.sigmoid), [x], x).cost.flops == 16 * 192)
    }

    @Test func gatherReadsOnlyTheGatheredSlices() {
        // 3 rows of a [30000, 384] table: 3 · 384 floats and 3 indices read, not the table.
        let table = Self.signature([30_000, 384])
        let indices = Self.signature([3], .int32)
        let cost = Self.cost(.alongAxis(.gather, 0), [table, indices], Self.signature([3, 384])).cost
        #expect(cost.bytesRead == Double(3 * 384 * 4 + 3 * 4))
        #expect(cost.bytesWritten == Double(3 * 384 * 4))
    }

    /// Copies that read and write whole cache lines (a head split keeps its last axis, a gather
    /// takes whole rows) move at the run rate; a transpose's single elements do not.
    @Test func movementInRunsIsToldApartFromTransposes() throws {
        func candidate(_ tensor: Tensor) throws -> Planner.Candidate {
            let plan = try PlannerTests.planner(policy: .only(.openblas)).plan(targets: [tensor].compactMap(\.node))
            let step = try #require(plan.steps.last { if case .op(let op) = plan.kernel(of: $0) { op.kind.descriptor.category == .dataMovement } else { false } })
            return Planner.Candidate(node: plan.node(of: step), kernel: plan.kernel(of: step), operands: step.operands.map { plan.nodes[$0] },
                                     absorbed: step.absorbed.map { plan.nodes[$0] })
        }
        func runs(_ tensor: Tensor) throws -> Bool {
            Planner.cost(of: try candidate(tensor)).costClass == .runMovement
        }
        let heads = Tensor(randomNormal: [8, 12, 32], seed: 1)
        #expect(try runs(heads.transposed(permutation: [1, 0, 2]).reshaped(to: [12 * 8 * 32])))
        let matrix = Tensor(randomNormal: [64, 48], seed: 2)
        #expect(try !runs(matrix.transposed().reshaped(to: [64 * 48])))
        // Runs of 8 floats (32 bytes) are under a line.
        let narrow = Tensor(randomNormal: [8, 12, 8], seed: 3)
        #expect(try !runs(narrow.transposed(permutation: [1, 0, 2]).reshaped(to: [12 * 8 * 8])))
        let table = Tensor(randomNormal: [100, 64], seed: 4)
        #expect(try runs(table.gathering(atIndices: Tensor([Int32(3), 7, 9]), alongAxis: 0)))
        // The run rate applies only where a profile has one.
        var profile = PlannerTests.profile(.openblas, gflops: 1, bandwidth: 10, launch: 0, link: nil)
        profile.rows[.movement] = CostTerms(gflops: 1, gbPerSecond: 1, launchSeconds: 0)
        profile.rows[.runMovement] = nil
        let cost = Cost(bytesRead: 1e9, bytesWritten: 0, launches: 1)
        #expect(profile.seconds(for: cost, costClass: .runMovement) == 1)
        profile.rows[.runMovement] = CostTerms(gflops: 1, gbPerSecond: 4, launchSeconds: 0)
        #expect(profile.seconds(for: cost, costClass: .runMovement) == 0.25)
        #expect(profile.seconds(for: cost, costClass: .movement) == 1)
    }

    /// Each operand of an elementwise launch beyond the first adds the profile's cost per operand.
    @Test func elementwiseLaunchesPayPerOperand() {
        var profile = PlannerTests.profile(.opencl, gflops: 1e9, bandwidth: 1e9, launch: 1e-5, link: nil)
        let cost = Cost(bytesRead: 0, bytesWritten: 0, launches: 1)
        #expect(profile.seconds(for: cost, costClass: .elementwise, operands: 32) == 1e-5)
        profile.rows[.elementwise]?.secondsPerOperand = 2e-6
        #expect(abs(profile.seconds(for: cost, costClass: .elementwise, operands: 32) - (1e-5 + 31 * 2e-6)) < 1e-12)
        #expect(profile.seconds(for: cost, costClass: .elementwise, operands: 1) == 1e-5)
    }

    @Test func perLineCostsAddToLineWiseAndReductionEstimates() {
        var profile = PlannerTests.profile(.opencl, gflops: 1000, bandwidth: 1, launch: 1e-5, link: nil)
        profile.rows[.lineWise]?.secondsPerLine = 1e-6
        profile.rows[.lineWise]?.launchSeconds = 2e-5
        profile.rows[.reduction]?.secondsPerLine = 5e-7
        let cost = Cost(bytesRead: 1e9, bytesWritten: 0, launches: 1, lines: 1000)
        // 1 GB at 1 GB/s, plus 1000 lines, plus the category's own launch.
        #expect(abs(profile.seconds(for: cost, costClass: .lineWise) - (1 + 1e-3 + 2e-5)) < 1e-12)
        #expect(abs(profile.seconds(for: cost, costClass: .reduction) - (1 + 5e-4 + 1e-5)) < 1e-12)
        // Elementwise work pays no per-line cost.
        #expect(abs(profile.seconds(for: cost, costClass: .elementwise) - (1 + 1e-5)) < 1e-12)
    }

    @Test func calibrationSeparatesPerLineCostFromBandwidth() {
        // Made from 2 µs per line and 4 GB/s: few long lines and many short ones.
        func seconds(lines: Double, bytes: Double) -> Double { lines * 2e-6 + bytes / 4e9 }
        let long = (seconds(lines: 1024, bytes: 8_388_608), 1024.0, 8_388_608.0)
        let short = (seconds(lines: 16_384, bytes: 1_048_576), 16_384.0, 1_048_576.0)
        let (perLine, gbPerSecond) = Calibration.perLineAndBandwidth(long: long, short: short)
        #expect(abs(perLine - 2e-6) < 1e-12)
        #expect(abs(gbPerSecond - 4) < 1e-9)
        // Short lines no slower per byte than long ones: the fit's negative per-line cost is taken
        // as none, and the bandwidth comes from the long lines alone (8 MB in 2 ms).
        let flat = Calibration.perLineAndBandwidth(long: (0.002, 1024, 8e6), short: (0.0002, 16_384, 1e6))
        #expect(flat.0 == 0)
        #expect(abs(flat.1 - 4) < 1e-9)
    }
}

/// The engine's own work in estimates, and the matrix·vector rate curve by rows.
@Suite("Cost model: bookkeeping and few-row products")
struct BookkeepingCostTests {
    /// Every recorded operation pays the profile's seconds per operation, on top of its kernel's
    /// roofline time; a fused region pays once per op it holds, and a view (no launch, no bytes)
    /// pays only that.
    @Test func operationsPayTheirBookkeeping() {
        var profile = PlannerTests.profile(.openblas, gflops: 1, bandwidth: 1, launch: 1e-6, link: nil)
        profile.secondsPerOperation = 2e-6
        let single = Cost(flops: 1e3, bytesRead: 0, bytesWritten: 0, launches: 1, operations: 1)
        // 1e3 FLOPs at 1 GFLOP/s, one launch, one operation.
        #expect(abs(profile.seconds(for: single, costClass: .elementwise) - (1e-6 + 1e-6 + 2e-6)) < 1e-15)
        let fused = Cost(flops: 1e3, bytesRead: 0, bytesWritten: 0, launches: 1, operations: 10)
        #expect(abs(profile.seconds(for: fused, costClass: .elementwise) - (1e-6 + 1e-6 + 20e-6)) < 1e-15)
        #expect(profile.seconds(for: Cost(operations: 1), costClass: .movement) == 2e-6)
        #expect((single + fused).operations == 11)
    }

    /// The planner counts one operation per op it places, and each op of a fused region.
    @Test func plansCountOperations() throws {
        let x = Tensor(shape: [4], scalars: [1, 2, 3, 4] as [Float])
        let chain = ((x * 2 + 1).exp() - 3) * 0.5
        let plan = try ComputePlan(for: [chain], policy: .only(.openblas))
        let operations = plan.plan.steps.reduce(0.0) { $0 + $1.cost.operations }
        // Five ops fused into one region, and the four views broadcasting their scalars to [4].
        #expect(operations == 9, "\(plan.plan.steps.map(\.cost))")
        #expect(plan.totalEstimatedSeconds >= plan.operations.reduce(0) { $0 + $1.estimatedCost.seconds })
    }

    /// A prepared model's plan is run again without recording or planning its graph: its
    /// estimate leaves out the seconds per recorded operation and keeps the kernels'. A chain of
    /// 40 scalar steps at 2 µs per operation: 80 µs apart, in all and summed over the steps.
    @Test func preparedRunsPayNoRecording() throws {
        var profile = PlannerTests.profile(.openblas, gflops: 1, bandwidth: 1, launch: 1e-6, link: nil)
        profile.secondsPerOperation = 2e-6
        let planner = Planner(
            backends: [SyntheticDevice(id: .openblas, memorySpace: .host)], profiles: [.openblas: profile],
            policy: .only(.openblas))
        var chain = Tensor(shape: [], scalars: [Float(1)])
        for step in 0..<40 { chain = step % 2 == 0 ? chain * 1.5 : chain + 0.5 }
        let plan = try planner.plan(targets: [try #require(chain.node)])
        let (recorded, prepared) = (ComputePlan(plan, cached: false), ComputePlan(plan, cached: false, prepared: true))
        #expect(abs(recorded.totalEstimatedSeconds - prepared.totalEstimatedSeconds - 80e-6) < 1e-12)
        #expect(prepared.totalEstimatedSeconds >= Double(plan.steps.count) * 1e-6, "every step still launches")
        let perOperation = zip(recorded.operations, prepared.operations).map {
            $0.estimatedCost.seconds - $1.estimatedCost.seconds
        }
        #expect(abs(perOperation.reduce(0, +) - 80e-6) < 1e-12)
    }

    /// A matrix·vector row with points at one and at twelve rows of a k×k matrix: a product with
    /// a few rows takes the rate between them by its FLOPs, so more rows run faster per FLOP.
    @Test func fewRowProductsInterpolateBetweenTheProbes() {
        let k = 768.0
        let one = RatePoint(flops: 2 * k * k, gflops: 10)
        let twelve = RatePoint(flops: 2 * 12 * k * k, gflops: 60)
        let row = CostTerms(gflops: [one, twelve], gbPerSecond: 1000, launchSeconds: 0)
        // Four rows: log 4 / log 12 of the way from 10 to 60.
        #expect(abs(row.gflops(forFLOPs: 2 * 4 * k * k) - (10 + 50 * log(4) / log(12))) < 1e-9)
        #expect(row.gflops(forFLOPs: 2 * 15 * k * k) == 60, "past the twelve-row probe: flat")
        let product = CostModelTests.cost(
            .matmul, [CostModelTests.signature([12, 768]), CostModelTests.signature([768, 768])],
            CostModelTests.signature([12, 768]))
        #expect(product.costClass == .matrixVector)
        #expect(product.cost.flops == twelve.flops)
    }

    /// 1 × 1 convolutions in one group are pointwise work, rated by their own probes at their
    /// FLOPs (counted as the op table counts them: two per input channel per output); other
    /// blocked convolutions (3 × 3, grouped 1 × 1) are products, narrow ones window work. A
    /// profile without a pointwise row prices it as products, and a calibration starts the row's
    /// curve afresh rather than from the products' points.
    @Test func pointwiseConvolutionsHaveTheirOwnRates() throws {
        func costClass(_ weight: [Int], groups: Int = 1, channels: Int = 64) -> CostClass {
            let x = CostModelTests.signature([1, channels, 28, 28])
            let op = Op.convolution(
                ConvolutionGeometry(
                    strides: [1, 1], dilations: [1, 1],
                    padding: [Padding(before: 0, after: 0), Padding(before: 0, after: 0)], groups: groups,
                    outputPadding: [0, 0]))
            let output = CostModelTests.signature([1, weight[0], 28, 28])
            return CostModelTests.cost(op, [x, CostModelTests.signature(weight)], output).costClass
        }
        #expect(costClass([128, 64, 1, 1]) == .pointwise)
        #expect(costClass([128, 64, 3, 3]) == .matmul)
        #expect(costClass([128, 16, 1, 1], groups: 4) == .matmul)
        #expect(costClass([128, 4, 1, 1], channels: 4) == .window)
        for size in [Calibration.Sizes.pointwise, Calibration.Sizes.largePointwise] {
            let x = Tensor(zeros: [1, size.inputs, size.edge, size.edge])
            let y = x.convolution(weight: Tensor(zeros: [size.outputs, size.inputs, 1, 1]))
            #expect(try Calibration.flops(of: y, on: OpenBLASBackend()) == size.flops)
        }
        #expect(Calibration.Sizes.pointwise.flops == 2 * 64 * 64 * 28 * 28)
        var profile = PlannerTests.profile(.openblas, gflops: 100, bandwidth: 1000, launch: 0, link: nil)
        profile.rows[.pointwise] = nil
        let work = Cost(flops: 1e9)
        #expect(profile.seconds(for: work, costClass: .pointwise) == profile.seconds(for: work, costClass: .matmul))
        let calibrated = try Calibration.calibrate(OpenBLASBackend())
        let points = calibrated.row(.pointwise).gflops.map(\.flops)
        #expect(points == [Calibration.Sizes.pointwise.flops, Calibration.Sizes.largePointwise.flops])
    }

    /// Window work is rated by two depthwise probes, each rate kept at the probe's FLOPs at full
    /// scale; the op table counts exactly those FLOPs for a depthwise 3 × 3 convolution of the
    /// probe's shape, so each rate lands where the cost model looks it up, and a plane between the
    /// two takes a rate between theirs.
    @Test func depthwiseProbesAreKeyedByTheirFLOPs() throws {
        let channels = Calibration.Sizes.depthwiseChannels(1)
        var flops: [Double] = []
        for edge in [Calibration.Sizes.depthwiseEdge, Calibration.Sizes.largeDepthwiseEdge] {
            let x = Tensor(zeros: [1, channels, edge(1), edge(1)])
            let weight = Tensor(zeros: [channels, 1, 3, 3])
            let y = x.convolution(weight: weight, padding: .symmetric([1, 1]), groupCount: channels)
            flops.append(try Calibration.flops(of: y, on: OpenBLASBackend()))
            #expect(flops.last == Calibration.depthwise(edge: edge))
        }
        let byHand: [Double] = [18 * 32 * 56 * 56, 18 * 32 * 112 * 112]
        #expect(flops == byHand)
        let row = CostTerms(
            gflops: [RatePoint(flops: flops[0], gflops: 120), RatePoint(flops: flops[1], gflops: 200)],
            gbPerSecond: 1000, launchSeconds: 0)
        let between = row.gflops(forFLOPs: 18 * 32 * 80 * 80)
        #expect(between > 120 && between < 200)
    }

    /// `TENSORENGINE_CALIBRATION` turns the first-use calibration off with `off`, `0`, `no` or
    /// `false` (any case); anything else leaves it on.
    @Test func calibrationSettingParses() {
        for off in ["off", "OFF", "0", "no", "False"] { #expect(Calibration.FirstUse(setting: off) == .off) }
        for on in [nil, "", "auto", "on", "1", "yes"] { #expect(Calibration.FirstUse(setting: on) == .auto) }
    }
}
