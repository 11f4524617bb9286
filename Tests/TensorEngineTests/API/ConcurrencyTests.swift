import Foundation
import Testing
@testable import TensorEngine

/// Many tasks building and evaluating graphs at once, some sharing subgraphs, on every backend.
@Suite("Concurrency")
struct ConcurrencyTests {
    /// Rounds of 64 parallel evaluations (scripts/reliability.sh raises it; the suite runs one).
    static let rounds = Swift.max(1, Int(ProcessInfo.processInfo.environment["TENSORENGINE_STRESS_ROUNDS"] ?? "") ?? 1)

    static func graph(_ seed: Int, _ shared: Tensor) -> Tensor {
        let x = Tensor(randomNormal: [32, 48], seed: UInt64(seed))
        return ((x.matmul(shared) + 0.5).relu().softmax(alongAxis: -1) * Float(seed)).sum(alongAxes: 1)
    }

    @Test func parallelEvaluationsMatchSerialOnes() async throws {
        let policies = Engine.shared.backends.map { ComputePolicy.only($0.id) } + [.all]
        let shared = Tensor(randomNormal: [48, 16], seed: 99)
        var expected: [Int: [Float]] = [:]
        for seed in 0..<8 {
            expected[seed] = try await withComputePolicy(.only(.naive)) { try await Self.graph(seed, shared).shapedArray(of: Float.self).scalars }
        }
        let reference = expected
        try await withThrowingTaskGroup(of: (Int, [Float]).self) { group in
            for iteration in 0..<(64 * Self.rounds) {
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

    @Test func aTensorManyTasksAskForAtOnceIsComputedOnce() async throws {
        func graph() -> Tensor {
            let x = Tensor(randomNormal: [96, 96], seed: 11)
            return x.matmul(x).tanh().softmax(alongAxis: -1).sum(alongAxes: 1)
        }
        let once = try await Tensor.evaluate([graph()]).steps
        let shared = graph()
        let steps = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { try await Tensor.evaluate([shared]).steps } }
            return try await group.reduce(0, +)
        }
        #expect(once > 0)
        #expect(steps == once, "16 tasks asking at once run the graph's \(once) steps once, not \(steps / Swift.max(once, 1)) times")
    }

    @Test func aFailedEvaluationLeavesItsWaitersToFailOnTheirOwn() async throws {
        let bad = Tensor(shape: [3], scalars: [1, 2, 3] as [Float]).gathering(atIndices: Tensor([7] as [Int32]), alongAxis: 0)
        let kinds = await withTaskGroup(of: TensorError.Kind?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do throws(TensorError) { try await Tensor.evaluate([bad]); return nil } catch { return error.kind }
                }
            }
            return await group.reduce(into: [TensorError.Kind?]()) { $0.append($1) }
        }
        #expect(kinds.count == 8 && kinds.allSatisfy { $0 == TensorError.Kind.indexOutOfRange }, "\(kinds)")
    }
}
