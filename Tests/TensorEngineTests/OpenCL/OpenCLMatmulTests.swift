import Testing
@testable import TensorEngine
import TensorEngineChecks

@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLMatmulTests {
    @Test(arguments: [(1, 1, 1), (3, 5, 7), (17, 33, 9), (64, 64, 64), (130, 70, 257), (1, 300, 1), (65, 1, 129)])
    func matmulMatches(m: Int, k: Int, n: Int) async throws {
        try await expectParity("matmul \(m)x\(k)x\(n)", .matmul, reductionLength: k) { random([m, k], seed: m + 70).matmul(random([k, n], seed: n + 71)) }
    }

    @Test func batchedTransposedAndHalfMatmulMatch() async throws {
        try await expectParity("batched", .matmul, reductionLength: 30) { random([3, 20, 30], seed: 72).matmul(random([3, 30, 10], seed: 73)) }
        try await expectParity("transposed operands", .matmul, reductionLength: 40) { random([40, 33], seed: 74).transposed().matmul(random([25, 40], seed: 75).transposed()) }
        try await expectParity("sliced and reversed", .matmul, reductionLength: 10) { random([20, 30], seed: 76)[2..<12, 0..<10].reversed(alongAxes: 1).matmul(random([10, 7], seed: 77)) }
        try await expectParity("batch axes permuted", .matmul, reductionLength: 8) {
            random([4, 2, 3, 5, 8], seed: 78).transposed(permutation: [1, 0, 2, 3, 4]).reshaped(to: [2, 4, 3, 5, 8]).matmul(random([2, 4, 3, 8, 6], seed: 79))
        }
        try await expectParity("broadcast batch", .matmul, reductionLength: 16) { random([5, 9, 16], seed: 80).matmul(random([16, 4], seed: 81)) }
        try await expectParity("float16", .matmul, reductionLength: 48) { random([33, 48], seed: 82).cast(to: Float16.self).matmul(random([48, 21], seed: 83).cast(to: Float16.self)) }
        try await expectParity("k = 0", .matmul) { random([3, 0], seed: 84).matmul(random([0, 4], seed: 85)) }
        try await expectParity("large", .matmul, reductionLength: 512) { random([256, 512], seed: 86).matmul(random([512, 384], seed: 87)) }
    }

    /// A second backend on a device (what `TENSORENGINE_OPENCL_DEVICES=all` makes of a second
    /// device) runs plans of its own: backends are values, not one per kind.
    @Test func aSecondOpenCLBackendRunsPlansOfItsOwn() throws {
        let primary = try #require(Engine.shared.backend(.opencl) as? OpenCLBackend)
        let second = OpenCLBackend(runtime: primary.runtime, id: BackendID("opencl:9"))
        let backends: [any Backend] = [NaiveBackend(), primary, second]
        func graph() throws -> Node { try #require((random([40, 24], seed: 5).matmul(random([24, 16], seed: 6)) + 1).softmax().node) }
        let (expected, _) = try Engine.shared.run([try graph()], policy: .only(.naive), backends: backends)
        let (actual, _) = try Engine.shared.run([try graph()], policy: .only(BackendID("opencl:9")), backends: backends)
        let tolerance = OpKind.softmax.parityTolerance(reductionLength: 24)
        let want = try ParityHarness.doubles(expected[0])
        let got = try ParityHarness.doubles(actual[0])
        #expect(want.count == got.count && zip(want, got).allSatisfy { tolerance.accepts(Float($1), Float($0)) })
    }

    /// Batch axes that merge into two levels but not one (attention's [batch, heads] over
    /// head-split views) are read in place, in both operands, packed or not.
    @Test func twoLevelBatchesMatch() async throws {
        try await expectParity("head-split A", .matmul, reductionLength: 8) {
            random([3, 5, 4, 8], seed: 96).transposed(permutation: [0, 2, 1, 3]).matmul(random([3, 4, 8, 6], seed: 97))
        }
        try await expectParity("head-split A and B, packed", .matmul, reductionLength: 8) {
            random([2, 50, 3, 8], seed: 98).transposed(permutation: [0, 2, 1, 3])
                .matmul(random([3, 2, 8, 20], seed: 99).transposed(permutation: [1, 0, 2, 3]))
        }
        try await expectParity("head-split B transposed", .matmul, reductionLength: 8) {
            random([2, 3, 7, 8], seed: 100).matmul(random([2, 9, 3, 8], seed: 101).transposed(permutation: [0, 2, 3, 1]))
        }
    }

    /// The tiled kernel (local-memory tiles, the GPU path) on this device: the same products as
    /// the blocked kernel's tests, against the naive backend.
    @Test func tiledKernelMatches() throws {
        let shared = try #require(Engine.shared.backend(.opencl) as? OpenCLBackend)
        let tuning = MatmulTuning(tileM: 32, tileN: 32, tileK: 16, workPerItemM: 4, workPerItemN: 4)
        #expect(tuning.fits(shared.runtime.device))
        let tiled = OpenCLBackend(runtime: shared.runtime, matmulTuning: tuning)
        let cases: [(String, Int, () -> Tensor)] = [
            ("plain", 70, { random([45, 70], seed: 102).matmul(random([70, 37], seed: 103)) }),
            ("batched", 30, { random([3, 20, 30], seed: 104).matmul(random([3, 30, 10], seed: 105)) }),
            ("transposed", 40, { random([40, 33], seed: 106).transposed().matmul(random([25, 40], seed: 107).transposed()) }),
            ("broadcast batch", 16, { random([5, 9, 16], seed: 108).matmul(random([16, 4], seed: 109)) }),
            ("head-split", 8, { random([2, 50, 3, 8], seed: 110).transposed(permutation: [0, 2, 1, 3]).matmul(random([2, 3, 8, 20], seed: 111)) }),
            ("batch axes permuted", 8, {
                random([4, 2, 3, 5, 8], seed: 112).transposed(permutation: [1, 0, 2, 3, 4]).reshaped(to: [2, 4, 3, 5, 8]).matmul(random([2, 4, 3, 8, 6], seed: 113))
            }),
        ]
        for (label, reduction, make) in cases {
            let (actual, _) = try Engine.shared.run([try #require(make().node)], policy: .only(.opencl), backends: [NaiveBackend(), tiled])
            let (expected, _) = try Engine.shared.run([try #require(make().node)], policy: .only(.naive), backends: [NaiveBackend()])
            let (got, want) = (try ParityHarness.doubles(actual[0]), try ParityHarness.doubles(expected[0]))
            let tolerance = OpKind.matmul.parityTolerance(reductionLength: reduction)
            #expect(got.count == want.count && zip(got, want).allSatisfy { tolerance.accepts(Float($0), Float($1)) }, "\(label)")
        }
    }

    /// Products with more rows than one tile, where CPU devices pack B into column panels first.
    @Test func packedOperandsMatch() async throws {
        try await expectParity("packed batched", .matmul, reductionLength: 20) { random([2, 50, 20], seed: 88).matmul(random([2, 20, 19], seed: 89)) }
        try await expectParity("packed broadcast batch", .matmul, reductionLength: 16) { random([3, 60, 16], seed: 90).matmul(random([16, 37], seed: 91)) }
        try await expectParity("packed transposed", .matmul, reductionLength: 33) { random([70, 33], seed: 92).matmul(random([45, 33], seed: 93).transposed()) }
        try await expectParity("packed float16", .matmul, reductionLength: 48) { random([97, 48], seed: 94).cast(to: Float16.self).matmul(random([48, 21], seed: 95).cast(to: Float16.self)) }
    }
}
