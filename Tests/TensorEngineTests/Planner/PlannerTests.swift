import Foundation
import Testing
@testable import TensorEngine
import TensorEngineChecks

/// A device backend for planning tests: claims what it is told, runs nothing.
final class SyntheticDevice: Backend {
    let id: BackendID
    let memorySpace: MemorySpace
    let lacks: Set<OpKind>
    var deviceName: String { "synthetic \(id)" }
    var defaultProfile: DeviceProfile { PlannerTests.profile(id, gflops: 1, bandwidth: 1, launch: 0, link: nil) }
    var cacheBytes: Int? { nil }

    init(id: BackendID, memorySpace: MemorySpace, lacks: Set<OpKind> = []) {
        self.id = id
        self.memorySpace = memorySpace
        self.lacks = lacks
    }

    static let kernels: KernelRegistry<SyntheticDevice> = {
        var registry = KernelRegistry<SyntheticDevice>()
        let gap = KernelCondition<SyntheticDevice> { device, query in
            guard case .op(let op) = query.kernel, device.lacks.contains(op.kind) else { return nil }
            return "synthetic gap"
        }
        registry.register(OpKind.allCases, when: gap) { _, _, _, _ throws(TensorError) in
            throw TensorError(.backendFailure, op: "synthetic", message: "planning only")
        }
        registry.registerFused { _, _, _, _ throws(TensorError) in
            throw TensorError(.backendFailure, op: "synthetic", message: "planning only")
        }
        return registry
    }()

    func upload(_ value: Value) throws(TensorError) -> Value { value }
    func download(_ value: Value) throws(TensorError) -> Value { value }
    func synchronize() throws(TensorError) {}
}

@Suite("Planner")
struct PlannerTests {
    /// A device at one rate and one bandwidth for every kind of work.
    static func profile(_ id: BackendID, gflops: Double, bandwidth: Double, launch: Double, link: Double?) -> DeviceProfile {
        var profile = DeviceProfile.headline(
            backend: id, deviceName: "synthetic", threads: 1, matmul: (gflops, nil, gflops), matrixVector: gflops, stream: bandwidth,
            reduction: bandwidth, arithmetic: gflops, launch: launch, transfer: link)
        profile.calibrated = true
        return profile
    }

    struct NotAGraphWorkload: Error {}

    /// A graph workload's builder on inputs made once (not materialized).
    static func graph(of workload: Workload) throws -> () -> [Tensor] {
        switch workload.body {
        case .graph(let makeInputs, let graph):
            let inputs = makeInputs()
            return { graph(inputs) }
        case .sentenceEmbedding, .onnxModel:
            throw NotAGraphWorkload()
        }
    }

    /// A CPU at 50 GFLOP/s and a GPU 100× faster behind a 1 GB/s link with 20 µs launches.
    static func planner(policy: ComputePolicy = .all, gpuLacks: Set<OpKind> = []) -> Planner {
        let cpu = SyntheticDevice(id: .openblas, memorySpace: .host)
        let gpu = SyntheticDevice(id: .opencl, memorySpace: .openCL(device: 0), lacks: gpuLacks)
        return Planner(
            backends: [cpu, gpu],
            profiles: [
                .openblas: profile(.openblas, gflops: 50, bandwidth: 10, launch: 1e-6, link: nil),
                .opencl: profile(.opencl, gflops: 5000, bandwidth: 1000, launch: 2e-5, link: 1),
            ],
            policy: policy)
    }

    func plan(_ tensors: [Tensor], _ planner: Planner = planner()) throws -> ComputePlan {
        ComputePlan(try planner.plan(targets: tensors.compactMap(\.node)), cached: false)
    }

    @Test func smallOpStaysOffASlowLink() throws {
        let x = Tensor([1, 2, 3, 4] as [Float])
        let result = try plan([(x * x).exp()])
        #expect(result.operations.allSatisfy { $0.deviceUsage.preferred == .openblas })
        #expect(result.transferBytes == 0)
    }

    @Test func largeMatmulGoesToTheFastDevice() throws {
        let a = Tensor(shape: [1024, 1024], scalars: [Float](repeating: 1, count: 1 << 20))
        let product = a.matmul(a)
        let result = try plan([product])
        let matmul = try #require(result.operations.first { $0.op == "matmul" })
        #expect(matmul.deviceUsage.preferred == .opencl)
        #expect(matmul.deviceUsage.supported == [.openblas, .opencl])
        #expect(!matmul.copies.isEmpty, "its operand is copied to the device")
        #expect(result.transferBytes > 0)
    }

    @Test func anOpOnlyOneBackendHasGoesThere() throws {
        let a = Tensor(zeros: [1024, 1024])
        let result = try plan([a.matmul(a).cumulativeSum(alongAxis: -1)], Self.planner(gpuLacks: [.cumulativeSum]))
        let scan = try #require(result.operations.first { $0.op == "cumulativeSum" })
        #expect(scan.deviceUsage.preferred == .openblas)
        #expect(scan.deviceUsage.supported == [.openblas])
        #expect(scan.reason == "only openblas supports it")
    }

    /// A composite op a backend has no kernel for still runs there, as its decomposition, which
    /// the planner costs as the ops it is made of.
    @Test func aCompositeOpWithoutAKernelRunsAsItsDecomposition() throws {
        let a = Tensor(zeros: [1024, 1024])
        let result = try plan([a.matmul(a).softmax()], Self.planner(gpuLacks: [.softmax]))
        let softmax = try #require(result.operations.first { $0.op == "softmax" })
        #expect(softmax.deviceUsage.supported == [.openblas, .opencl])
        #expect(softmax.reason.contains("as its decomposition on opencl"), "\(softmax.reason)")
        // Without the primitives its decomposition needs, the backend cannot run it at all.
        let without = try plan([a.matmul(a).softmax()], Self.planner(gpuLacks: [.softmax, .exp]))
        #expect(try #require(without.operations.first { $0.op == "softmax" }).deviceUsage.supported == [.openblas])
    }

    /// Backends are values: two devices of one kind are two backends, and the planner places
    /// work on the faster one; a policy can name either.
    @Test func twoDevicesOfOneKindAreTwoBackends() throws {
        let cpu = SyntheticDevice(id: .openblas, memorySpace: .host)
        let slow = SyntheticDevice(id: .opencl, memorySpace: .openCL(device: 0))
        let fast = SyntheticDevice(id: BackendID("opencl:1"), memorySpace: .openCL(device: 1))
        let planner = { (policy: ComputePolicy) in
            Planner(backends: [cpu, slow, fast], profiles: [
                .openblas: Self.profile(.openblas, gflops: 50, bandwidth: 10, launch: 1e-6, link: nil),
                .opencl: Self.profile(.opencl, gflops: 500, bandwidth: 100, launch: 2e-5, link: 8),
                BackendID("opencl:1"): Self.profile(BackendID("opencl:1"), gflops: 5000, bandwidth: 1000, launch: 2e-5, link: 8),
            ], policy: policy)
        }
        let a = Tensor(zeros: [2048, 2048])
        let product = try #require(try plan([a.matmul(a)], planner(.all)).operations.first { $0.op == "matmul" })
        #expect(product.deviceUsage.preferred == BackendID("opencl:1"))
        #expect(product.deviceUsage.supported == [.openblas, .opencl, BackendID("opencl:1")])
        let pinned = try plan([a.matmul(a)], planner(.only(.opencl)))
        #expect(pinned.operations.allSatisfy { $0.deviceUsage.preferred == .opencl })
        let cpuOnly = try plan([a.matmul(a)], planner(.cpuOnly))
        #expect(cpuOnly.operations.allSatisfy { $0.deviceUsage.preferred == .openblas }, "cpuOnly keeps to host memory")
    }

    @Test func policiesAreObeyed() throws {
        let a = Tensor(zeros: [1024, 1024])
        let product = a.matmul(a).relu()
        let cpu = try plan([product], Self.planner(policy: .cpuOnly))
        #expect(cpu.operations.allSatisfy { $0.deviceUsage.preferred == .openblas })
        let gpu = try plan([product], Self.planner(policy: .only(.opencl)))
        #expect(gpu.operations.allSatisfy { $0.deviceUsage.preferred == .opencl })
        #expect(throws: TensorError.self) { try Self.planner(policy: .only(.naive)).plan(targets: product.node.map { [$0] } ?? []) }
    }

    @Test func weightsSumToOne() throws {
        let graph = try Self.graph(of: Workload.bertLayer)
        let result = try ComputePlan(for: graph(), policy: .all)
        let total = result.operations.reduce(0) { $0 + $1.estimatedCost.weight }
        #expect(Swift.abs(total - 1) < 1e-9)
        #expect(result.operations.allSatisfy { (0...1).contains($0.estimatedCost.weight) })
    }

    @Test func jsonRoundTrips() throws {
        let graph = try Self.graph(of: try #require(Workload.named("mlp")))
        let result = try ComputePlan(for: graph(), policy: .all)
        let json = result.json()
        let document = try ComputePlanDocument(json: Data(json.utf8))
        #expect(document == ComputePlanDocument(result))
        #expect(document.operations.count == result.operations.count)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["total_estimated_seconds"] is Double)
        let first = try #require((object["operations"] as? [[String: Any]])?.first)
        for key in ["op", "shape", "preferred", "supported", "estimated_seconds", "weight", "reason"] {
            #expect(first[key] != nil, "operation JSON lacks \(key)")
        }
    }

    @Test func dotIsWellFormed() throws {
        let a = Tensor(zeros: [1024, 1024])
        let dot = try plan([a.matmul(a).relu() + 1]).dot()
        #expect(dot.hasPrefix("digraph plan {"))
        #expect(dot.hasSuffix("}"))
        #expect(dot.filter { $0 == "{" }.count == dot.filter { $0 == "}" }.count)
        let declared = Set(dot.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("\""), !trimmed.contains("->") else { return nil }
            return String(trimmed.dropFirst().prefix { $0 != "\"" })
        })
        for line in dot.split(separator: "\n") where line.contains("->") {
            let names = line.split(separator: "\"").enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            #expect(declared.contains(names[0]) && declared.contains(names[1]), "edge to an undeclared node: \(line)")
        }
        #expect(dot.contains("color=red"), "the copy to the device is drawn")
    }

    @Test func planCacheHitsAndIsBounded() throws {
        let cache = PlanCache(capacity: 2)
        let planner = Self.planner()
        func graph(_ n: Int) -> [Node] { [(Tensor(zeros: [n]) + 1).exp()].compactMap(\.node) }
        let (_, firstCached) = try planner.plan(targets: graph(8), cache: cache)
        let (_, secondCached) = try planner.plan(targets: graph(8), cache: cache)
        #expect(!firstCached)
        #expect(secondCached, "a graph of the same structure is not planned again")
        // Sizes more than twice apart: plans of their own (a plan serves similar sizes only).
        _ = try planner.plan(targets: graph(100), cache: cache)
        _ = try planner.plan(targets: graph(1000), cache: cache)
        #expect(cache.statistics.entries == 2)
        let (_, evicted) = try planner.plan(targets: graph(8), cache: cache)
        #expect(!evicted, "the least recently used entry went")
    }

    /// A graph of a cached structure at similar sizes (within a factor of two per node) reuses its
    /// plan, which then runs correctly at the new sizes; farther sizes, or another elementwise op,
    /// are planned afresh.
    @Test func planCacheReusesAPlanAtSimilarSizes() async throws {
        let cache = PlanCache(capacity: 8)
        let planner = Planner(backends: Engine.shared.backends, profiles: Engine.shared.profiles, policy: .cpuOnly)
        func graph(_ n: Int, _ scale: Float = 2) -> [Node] {
            [((Tensor(repeating: 0.5, shape: [n, 3]) * scale).exp().sum(alongAxes: 1))].compactMap(\.node)
        }
        let (first, firstCached) = try planner.plan(targets: graph(100), cache: cache)
        #expect(!firstCached)
        let (similar, similarCached) = try planner.plan(targets: graph(150), cache: cache)
        #expect(similarCached, "the plan for 100 rows serves 150")
        #expect(similar.steps.map(\.backend) == first.steps.map(\.backend))
        let values = try Executor(backends: Engine.shared.backends).run(similar).results
        let sums = try #require(values.first?.buffer as? HostBuffer)
        #expect(values.first?.shape == [150])
        let expected = 3 * Float(M_E)
        #expect((0..<150).allSatisfy { Swift.abs(sums.elements(as: Float.self)[$0] - expected) < 1e-5 })
        let (_, fartherCached) = try planner.plan(targets: graph(400), cache: cache)
        #expect(!fartherCached, "400 rows is more than twice 150 and 100")
        let (_, otherCached) = try planner.plan(targets: [(Tensor(repeating: 0.5, shape: [120, 3]) + 2).exp()
            .sum(alongAxes: 1)].compactMap(\.node), cache: cache)
        #expect(!otherCached, "another elementwise op is another structure")
    }

    /// A key matches only its own structure: the same ops and shapes wired differently, another
    /// shape, another target set or another policy is another key (whatever the hashes say).
    @Test func planKeysCompareStructure() throws {
        let x = Tensor(randomNormal: [4, 3], seed: 1), y = Tensor(randomNormal: [4, 3], seed: 2)
        func graph(_ targets: [Tensor]) -> (PendingGraph, [Node]) {
            let nodes = targets.compactMap(\.node)
            return (PendingGraph(targets: nodes), nodes)
        }
        let (base, baseTargets) = graph([(x * y) + x])
        let key = PlanKey(graph: base, targets: baseTargets, policy: .all)
        let (same, _) = graph([(x * y) + x])
        #expect(key.matches(same, policy: .all))
        #expect(key.contentHash == same.structureHash)
        #expect(!key.matches(same, policy: .cpuOnly))
        let (rewired, _) = graph([(x * y) + y])
        #expect(!key.matches(rewired, policy: .all))
        let z = Tensor(randomNormal: [4, 1], seed: 3)
        let (reshaped, _) = graph([(x * z) + x])
        #expect(!key.matches(reshaped, policy: .all))
        let product = x * y
        let (twoTargets, _) = graph([product + x, product])
        #expect(!key.matches(twoTargets, policy: .all))
    }

    /// A chain of 300 ops on a one-element tensor over two shared constants reads three operands
    /// in all: it is cut by the instruction cap alone, into regions of at most 128 instructions
    /// (three, not one per 32 operand reads), which compute what the unfused ops do. (On a larger
    /// shape each use of a constant is a broadcast of its own, an operand each.)
    @Test func chainsOverSharedOperandsSplitAtTheInstructionCap() async throws {
        let x = Tensor(shape: [1], scalars: [0.5] as [Float])
        // Constants of its own (a literal's is shared through a table other tests write too).
        let scale = Tensor(shape: [1], scalars: [1.0001] as [Float])
        let shift = Tensor(shape: [1], scalars: [0.0001] as [Float])
        func chain() -> Tensor {
            var t = x
            for step in 0..<300 { t = step % 2 == 0 ? t * scale : t + shift }
            return t
        }
        let plan = try Self.planner().plan(targets: [chain()].compactMap(\.node))
        let regions = plan.steps.compactMap(\.region)
        #expect(plan.steps.count == 3 && regions.count == 3)
        #expect(regions.map(\.instructions.count) == [44, 128, 128])
        #expect(plan.steps.allSatisfy { $0.operands.count <= 3 })
        let want = try await withComputePolicy(.only(.naive)) { try await chain().shapedArray(of: Float.self).scalars }
        let got = try await withComputePolicy(.only(.openblas)) { try await chain().shapedArray(of: Float.self).scalars }
        #expect(got == want)
    }

    /// A chain reading more operands than a region may take becomes several regions, each within
    /// the cap, which together compute what the unfused ops do.
    @Test func longChainsSplitAtTheOperandCap() async throws {
        let x = Tensor(randomNormal: [5, 7], seed: 4)
        func chain() -> Tensor {
            var t = x
            for step in 0..<150 { t = step % 2 == 0 ? t * Float(1 + Double(step) * 1e-4) : t + Float(step) * 1e-3 }
            return t
        }
        let plan = try Self.planner().plan(targets: [chain()].compactMap(\.node))
        let regions = plan.steps.filter { $0.region != nil }
        #expect(regions.count >= 150 / FusionPass.maximumOperands)
        #expect(regions.allSatisfy { $0.operands.count <= FusionPass.maximumOperands })
        #expect(plan.steps.reduce(0) { $0 + $1.absorbed.count + 1 } >= 150, "every op is in a step")
        let want = try await withComputePolicy(.only(.naive)) { try await chain().shapedArray(of: Float.self).scalars }
        let got = try await withComputePolicy(.only(.openblas)) { try await chain().shapedArray(of: Float.self).scalars }
        #expect(got == want)
    }

    /// A plan from the cache names nodes by position: on a new graph of the same structure it
    /// must resolve to the plan made from scratch for that graph, node for node, on a graph with
    /// fused chains, a shared operand, a matmul, a materialized input and two targets.
    @Test func cachedPlanMatchesAFreshOne() async throws {
        let cache = PlanCache(capacity: 4)
        let planner = Self.planner()
        func graph() async throws -> [Node] {
            let x = Tensor(randomNormal: [16, 32], seed: 1), w = Tensor(randomNormal: [32, 8], seed: 2)
            let bias = Tensor(randomNormal: [8], seed: 3) * 2
            try await Tensor.evaluate([bias])
            let shared = (x * 2 + 1).tanh()
            let product = shared.matmul(w) + bias
            return [(product.relu() * 0.5 - 1).exp(), shared.sum(alongAxes: 1)].compactMap(\.node)
        }
        func describe(_ plan: Plan) -> [String] {
            plan.steps.map { step in
                let node = plan.node(of: step)
                let operands = step.operands.map { "\(plan.nodes[$0].id)" }, absorbed = step.absorbed.map { "\(plan.nodes[$0].id)" }
                return "\(node.id) = \(plan.kernel(of: step)) \(operands) absorbed \(absorbed) on \(step.backend)"
            }
        }
        let (first, firstCached) = try planner.plan(targets: try await graph(), cache: cache)
        let targets = try await graph()
        let (again, secondCached) = try planner.plan(targets: targets, cache: cache)
        #expect(!firstCached && secondCached)
        #expect(describe(again) == describe(try planner.plan(targets: targets)))
        #expect(again.template.targets.map { again.nodes[$0] } .elementsEqual(targets, by: ===))
        #expect(first.steps.contains { $0.region != nil }, "the graph has a fused region")
    }

    @Test func engineEvaluationUsesTheCache() async throws {
        func run() async throws -> Bool {
            let x = Tensor(randomNormal: [3, 5], seed: 3)
            return try ComputePlan(for: [(x * 2).softmax()]).cached
        }
        _ = try await run()
        #expect(try await run())
    }

    @Test func planningIsDeterministic() throws {
        let graph = try Self.graph(of: Workload.bertLayer)
        let a = try plan(graph())
        let b = try plan(graph())
        #expect(a.operations.map(\.deviceUsage) == b.operations.map(\.deviceUsage))
        #expect(a.operations.map(\.estimatedCost) == b.operations.map(\.estimatedCost))
        #expect(a.text() == b.text())
    }

    @Test func corruptProfileFileIsIgnoredWithAWarning() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("profiles-\(UUID().uuidString).json")
        try Data("{ not json".utf8).write(to: url)
        var warnings: [String] = []
        #expect(ProfileStore.load(from: url) { warnings.append($0) }.isEmpty)
        #expect(warnings.count == 1 && warnings[0].contains("tensorplan calibrate"))
        let profile = Self.profile(.openblas, gflops: 1, bandwidth: 1, launch: 1e-6, link: nil)
        try ProfileStore.save([profile], to: url)
        #expect(ProfileStore.load(from: url) { warnings.append($0) }.values.first == profile, "a calibration replaces it")
        try? FileManager.default.removeItem(at: url)
    }

    @Test func measureModeReportsTimes() async throws {
        let x = Tensor(randomNormal: [64, 64], seed: 1)
        let measured = try await ComputePlan(for: [x.matmul(x).relu()], policy: .all).measured()
        #expect(measured.operations.allSatisfy { $0.measuredSeconds != nil })
        #expect(measured.text().contains("measured"))
    }

    @Test func spearmanAndMedianError() {
        #expect(PlanQuality.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1)
        #expect(PlanQuality.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1)
        #expect(PlanQuality.medianRelativeError(estimated: [1, 2, 3], measured: [2, 2, 2]) == 0.5)
    }
}
