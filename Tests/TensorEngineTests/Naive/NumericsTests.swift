import Testing
@testable import TensorEngine

/// The documented behaviour for NaN and infinity (docs/NUMERICS.md), on every available backend.
@Suite("NaN and infinity")
struct NumericsTests {
    static let policies: [ComputePolicy] = [.only(.naive), .all]

    func floats(_ t: Tensor, _ policy: ComputePolicy) async throws -> [Float] {
        try await withComputePolicy(policy) { try await t.shapedArray(of: Float.self).scalars }
    }

    /// Equal, with NaN equal to NaN.
    func same(_ a: [Float], _ b: [Float]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
    }

    @Test(arguments: policies)
    func softmaxRows(_ policy: ComputePolicy) async throws {
        let rows = Tensor(shape: [3, 3], scalars: [0, -.infinity, 0, -.infinity, -.infinity, -.infinity, 1, .infinity, 1] as [Float])
        let result = try await floats(rows.softmax(), policy)
        #expect(same(Array(result[0..<3]), [0.5, 0, 0.5]), "-∞ entries get 0")
        let restIsNaN = result[3...].allSatisfy { $0.isNaN }
        #expect(restIsNaN, "an all -∞ row, and a row with +∞, are NaN")
    }

    @Test(arguments: policies)
    func reductionsPropagateNaN(_ policy: ComputePolicy) async throws {
        let x = Tensor(shape: [2, 3], scalars: [1, .nan, 3, .infinity, -.infinity, 2] as [Float])
        #expect(same(try await floats(x.sum(alongAxes: 1), policy), [.nan, .nan]))
        #expect(same(try await floats(x.max(alongAxes: 1), policy), [.nan, .infinity]))
        #expect(same(try await floats(x.min(alongAxes: 0), policy), [1, .nan, 2]))
        let argmax = try await withComputePolicy(policy) { try await Tensor([1, .nan, 5, .nan] as [Float]).argmax().shapedArray(of: Int32.self).scalars }
        #expect(argmax == [1])
    }

    @Test(arguments: policies)
    func elementwiseSpecials(_ policy: ComputePolicy) async throws {
        let x = Tensor([.nan, .infinity, -.infinity, 0] as [Float])
        #expect(same(try await floats(x.exp(), policy), [.nan, .infinity, 0, 1]))
        #expect(same(try await floats(x.tanh(), policy), [.nan, 1, -1, 0]))
        #expect(same(try await floats(x.sigmoid(), policy), [.nan, 1, 0, 0.5]))
        #expect(same(try await floats(x.erf(), policy), [.nan, 1, -1, 0]))
        #expect(same(try await floats(x.relu(), policy), [.nan, .infinity, 0, 0]))
        #expect(same(try await floats(x.pointwiseMax(0), policy), [.nan, .infinity, 0, 0]))
        #expect(same(try await floats(x - x, policy), [.nan, .nan, .nan, 0]))
        let compared = try await withComputePolicy(policy) { try await (x .!= x).shapedArray(of: Bool.self).scalars }
        #expect(compared == [true, false, false, false])
    }

    @Test func castsOfSpecials() async throws {
        let x = Tensor([.nan, .infinity, -.infinity, -0.0] as [Float])
        #expect(try await x.cast(to: Int32.self).shapedArray(of: Int32.self).scalars == [0, .max, .min, 0])
        #expect(try await x.cast(to: Bool.self).shapedArray(of: Bool.self).scalars == [true, true, true, false])
    }
}

@Suite("Memory limit")
struct MemoryLimitTests {
    @Test func aPlanOverTheLimitFailsBeforeRunning() async throws {
        let x = Tensor(randomNormal: [256, 256], seed: 1)
        let y = (x.matmul(x) + 1).exp().sum()
        do {
            _ = try await withMemoryLimit(100_000) { try await y.shapedArray(of: Float.self) }
            Issue.record("expected the limit to stop the plan")
        } catch let error as TensorError {
            #expect(error.kind == .memoryLimitExceeded)
            #expect(error.message.contains("[256, 256]"), "names the largest tensor: \(error.message)")
        }
        #expect(y.error == nil)
        let fits = try await withMemoryLimit(10_000_000) { try await y.shapedArray(of: Float.self) }
        #expect(fits.scalars.count == 1)
        #expect(MemoryLimit.parse("512M") == 512 << 20)
        #expect(MemoryLimit.parse("2g") == 2 << 30)
        #expect(MemoryLimit.parse("oops") == nil)
    }
}
