import Testing
@testable import TensorEngine

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

    /// Products with more rows than one tile, where CPU devices pack B into column panels first.
    @Test func packedOperandsMatch() async throws {
        try await expectParity("packed batched", .matmul, reductionLength: 20) { random([2, 50, 20], seed: 88).matmul(random([2, 20, 19], seed: 89)) }
        try await expectParity("packed broadcast batch", .matmul, reductionLength: 16) { random([3, 60, 16], seed: 90).matmul(random([16, 37], seed: 91)) }
        try await expectParity("packed transposed", .matmul, reductionLength: 33) { random([70, 33], seed: 92).matmul(random([45, 33], seed: 93).transposed()) }
        try await expectParity("packed float16", .matmul, reductionLength: 48) { random([97, 48], seed: 94).cast(to: Float16.self).matmul(random([48, 21], seed: 95).cast(to: Float16.self)) }
    }
}
