import Testing
@testable import TensorEngine

/// Many tasks building and evaluating graphs at once, some sharing subgraphs, on every backend.
@Suite("Concurrency")
struct ConcurrencyTests {
    static func graph(_ seed: Int, _ shared: Tensor) -> Tensor {
        let x = Tensor(randomNormal: [32, 48], seed: seed)
        return ((x.matmul(shared) + 0.5).relu().softmax(alongAxis: -1) * Float(seed)).sum(alongAxes: 1)
    }

    @Test func parallelEvaluationsMatchSerialOnes() async throws {
        let policies = Engine.shared.backends.map { ComputePolicy.only($0.kind) } + [.all]
        let shared = Tensor(randomNormal: [48, 16], seed: 99)
        var expected: [Int: [Float]] = [:]
        for seed in 0..<8 {
            expected[seed] = try await withComputePolicy(.only(.naive)) { try await Self.graph(seed, shared).shapedArray(of: Float.self).scalars }
        }
        let reference = expected
        try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for iteration in 0..<64 {
                let policy = policies[iteration % policies.count]
                group.addTask {
                    let seed = iteration % 8
                    let values = try await withComputePolicy(policy) { try await Self.graph(seed, shared).shapedArray(of: Float.self).scalars }
                    return (seed, values)
                }
            }
            for try await (seed, values) in group {
                let want = try #require(reference[seed])
                #expect(zip(values, want).allSatisfy { Swift.abs($0 - $1) <= 1e-4 * Swift.max(1, Swift.abs($1)) })
            }
        }
    }

    @Test func aSharedTensorMaterializedByManyTasksGivesOneResultKeptAfterwards() async throws {
        let x = Tensor(randomNormal: [64, 64], seed: 5)
        let shared = x.matmul(x).tanh()
        let results = try await withThrowingTaskGroup(of: ShapedArray<Float>.self) { group in
            for _ in 0..<16 { group.addTask { try await shared.shapedArray(of: Float.self) } }
            var all: [ShapedArray<Float>] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(Set(results.map(\.scalars.count)) == [4096])
        #expect(results.allSatisfy { $0 == results[0] })
        let statistics = try await Tensor.evaluate([shared])
        #expect(statistics.steps == 0, "once kept, the result is never computed again")
    }
}
