import Testing
@testable import TensorEngine

/// The engine's AVX-512 product kernel (`products.h`) against products summed in `Double` by plain
/// loops: every path (few rows with B read in place, dot products for B stored transposed, packed
/// tiles), tile edges, blocks of k, leading dimensions wider than the matrices, and `+=`. Runs
/// only on a CPU with AVX-512.
@Suite("HostProducts", .enabled(if: CPUFlags.current.isSuperset(of: CPUFlags.avx512), "the CPU has no AVX-512"))
struct HostProductsTests {
    /// A deterministic value in [-1, 1) for position `index` of operand `seed`.
    static func value(_ index: Int, seed: Int) -> Float {
        var x = UInt64(truncatingIfNeeded: index &* 2_654_435_761 &+ seed &* 40_503)
        x ^= x >> 13
        x = x &* 0x5bd1_e995
        x ^= x >> 15
        return Float(x % 2048) / 1024 - 1
    }

    @Test(arguments: [1, 2, 5, 11, 12, 13, 15, 24, 25, 37, 97, 130])
    func kernelMatchesPlainLoops(rows m: Int) {
        var checked = 0
        for n in [1, 3, 31, 32, 33, 70] {
            for k in [0, 1, 15, 16, 17, 300, 520] {
                let variant = (m + n + k) % 8
                let (transposeA, transposeB, accumulate) = (variant & 1 != 0, variant & 2 != 0, variant & 4 != 0)
                // Leading dimensions wider than the matrices; C's extra columns must stay untouched.
                let lda = (transposeA ? m : k) + 3
                let ldb = (transposeB ? k : n) + 5
                let ldc = n + 2
                let a = (0..<((transposeA ? k : m) * lda)).map { Self.value($0, seed: 1) }
                let b = (0..<((transposeB ? n : k) * ldb)).map { Self.value($0, seed: 2) }
                let initial = (0..<(m * ldc)).map { Self.value($0, seed: 3) }
                var c = initial
                let done = c.withUnsafeMutableBufferPointer { out in
                    HostProducts.multiplyWithEngineKernel(
                        transposeA: transposeA, transposeB: transposeB, m: m, n: n, k: k, a, lda: lda, b, ldb: ldb,
                        out.baseAddress!, ldc: ldc, accumulate: accumulate)
                }
                #expect(done)
                var worst = 0.0
                for i in 0..<m {
                    for j in 0..<ldc {
                        let got = Double(c[i * ldc + j])
                        guard j < n else {
                            #expect(got == Double(initial[i * ldc + j]), "column \(j) past n written")
                            continue
                        }
                        var sum = accumulate ? Double(initial[i * ldc + j]) : 0
                        var magnitude = Swift.abs(sum)
                        for p in 0..<k {
                            let x = Double(transposeA ? a[p * lda + i] : a[i * lda + p])
                            let y = Double(transposeB ? b[j * ldb + p] : b[p * ldb + j])
                            sum += x * y
                            magnitude += Swift.abs(x * y)
                        }
                        // Float accumulation over k + 1 terms: at most (k + 1) ε of the magnitudes.
                        let bound = Double(k + 1) * Double(Float.ulpOfOne) * magnitude
                        worst = Swift.max(worst, Swift.abs(got - sum) - bound)
                    }
                }
                #expect(worst <= 0, "m \(m) n \(n) k \(k) tA \(transposeA) tB \(transposeB) += \(accumulate)")
                checked += 1
            }
        }
        #expect(checked == 42)
    }
}

/// Weights packed once and kept (`PackedWeights`): the same operand multiplied again reads its kept
/// panels, and an operand in a new buffer where a freed one was is packed afresh.
@Suite("PackedWeights", .enabled(if: CPUFlags.usesAVX512, "the engine's AVX-512 products are off"))
struct PackedWeightsTests {
    func product(_ a: Tensor, _ b: Tensor, policy: ComputePolicy) async throws -> [Float] {
        try await withComputePolicy(policy) { try await a.matmul(b).shapedArray(of: Float.self).scalars }
    }

    @Test(arguments: [(12, 384, 200), (64, 100, 70), (30, 33, 65)])
    func repeatedWeightsMatchTheReference(m: Int, k: Int, n: Int) async throws {
        for round in 0..<3 {
            // A weight used three times (packed on its second use), stored and transposed.
            let weight = Tensor(randomNormal: [k, n], seed: UInt64(100 + round))
            let stored = Tensor(randomNormal: [n, k], seed: UInt64(200 + round)).transposed()
            try await Tensor.evaluate([weight, stored])
            for use in 0..<3 {
                let a = Tensor(randomNormal: [m, k], seed: UInt64(10 * round + use))
                try await Tensor.evaluate([a])
                for b in [weight, stored] {
                    let want = try await product(a, b, policy: .only(.naive))
                    let got = try await product(a, b, policy: .only(.openblas))
                    let worst = zip(got, want).map { Swift.abs($0 - $1) / (1 + Swift.abs($1)) }.max() ?? 0
                    #expect(worst < 1e-4, "round \(round), use \(use): worst relative difference \(worst)")
                }
            }
        }
    }
}
