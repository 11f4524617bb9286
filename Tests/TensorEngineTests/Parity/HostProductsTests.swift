import CIntrinsics
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

    /// The epilogue (bias, residual, bounds) on tiles of every width: whole panels, a last panel
    /// of fewer than 16 columns, and one across the two halves (masked loads and stores), against
    /// plain loops in `Double` bounded the same way, a NaN kept.
    @Test(arguments: [7, 20, 32, 45, 77])
    func epilogueOnPartialPanels(n: Int) {
        let (m, k, ldc) = (13, 9, n + 5)
        let a = (0..<(m * k)).map { HostProductsTests.value($0, seed: 11) }
        var b = (0..<(k * n)).map { HostProductsTests.value($0, seed: 12) }
        b[n - 1] = .nan
        let bias = (0..<m).map { HostProductsTests.value($0, seed: 13) }
        let residual = (0..<(m * ldc)).map { HostProductsTests.value($0, seed: 14) }
        let bounds: [Float] = [-0.5, 0.75]
        var packedB = [Float](repeating: 0, count: te_packed_b_floats(k, n))
        packedB.withUnsafeMutableBufferPointer { te_pack_b_panels(0, k, n, b, n, $0.baseAddress, 0, (n + 31) / 32) }
        var c = [Float](repeating: 42, count: m * ldc)
        c.withUnsafeMutableBufferPointer {
            te_sgemm_packed_epilogue(m, n, k, a, k, packedB, 0, n, $0.baseAddress, ldc, bias, residual, bounds)
        }
        for i in 0..<m {
            for j in 0..<ldc {
                let got = c[i * ldc + j]
                guard j < n else {
                    #expect(got == 42, "row \(i) column \(j) past the product was written")
                    continue
                }
                var sum = Double(bias[i]) + Double(residual[i * ldc + j])
                for p in 0..<k { sum += Double(a[i * k + p]) * Double(b[p * n + j]) }
                let want = sum.isNaN ? sum : Swift.min(Swift.max(sum, Double(bounds[0])), Double(bounds[1]))
                let close = want.isNaN ? got.isNaN : Swift.abs(Double(got) - want) <= 1e-5
                #expect(close, "n \(n): [\(i), \(j)] \(got), expected \(want)")
            }
        }
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

    /// A left-hand operand in a host buffer: not packed on its first sighting, packed whole on its
    /// second (`te_pack_a_whole`), and the product from both packed operands matching plain loops
    /// across tile, row-block (96) and depth-block (256) edges, with rows wider than the matrix.
    @Test(arguments: [(13, 17), (100, 600), (25, 256)])
    func leftOperandPackedOnItsSecondSighting(m: Int, k: Int) throws {
        let (n, lda) = (33, k + 3)
        let source = try HostBuffer(byteCount: m * lda * MemoryLayout<Float>.stride)
        let a = source.elements(as: Float.self)
        for index in 0..<(m * lda) { a[index] = HostProductsTests.value(index, seed: 4) }
        let b = (0..<(k * n)).map { HostProductsTests.value($0, seed: 5) }
        #expect(PackedWeights.shared.packedLeft(a, in: source, m: m, k: k, lda: lda) == nil)
        let kept = try #require(PackedWeights.shared.packedLeft(a, in: source, m: m, k: k, lda: lda))
        var packedB = [Float](repeating: 0, count: te_packed_b_floats(k, n))
        packedB.withUnsafeMutableBufferPointer { te_pack_b_panels(0, k, n, b, n, $0.baseAddress, 0, (n + 31) / 32) }
        var c = [Float](repeating: 0, count: m * n)
        c.withUnsafeMutableBufferPointer {
            te_sgemm_packed_ab(m, n, k, kept.elements(as: Float.self), packedB, 0, n, $0.baseAddress, n, 0)
        }
        var worst = 0.0
        for i in 0..<m {
            for j in 0..<n {
                var (sum, magnitude) = (0.0, 0.0)
                for p in 0..<k {
                    let term = Double(a[i * lda + p]) * Double(b[p * n + j])
                    (sum, magnitude) = (sum + term, magnitude + Swift.abs(term))
                }
                let bound = Double(k + 1) * Double(Float.ulpOfOne) * magnitude
                worst = Swift.max(worst, Swift.abs(Double(c[i * n + j]) - sum) - bound)
            }
        }
        #expect(worst <= 0, "m \(m) k \(k)")
        withExtendedLifetime(source) {}
    }

    /// A convolution's filters, kept packed from their second use: by pieces of output rows (3×3
    /// and pointwise), by slices of output channels (a 7×7 plane), and per group.
    @Test(arguments: [
        (input: [1, 16, 40, 40], weight: [64, 16, 3, 3], groups: 1),
        (input: [1, 32, 24, 24], weight: [48, 32, 1, 1], groups: 1),
        (input: [1, 64, 7, 7], weight: [256, 64, 3, 3], groups: 1),
        (input: [1, 32, 20, 20], weight: [60, 16, 3, 3], groups: 2),
    ])
    func repeatedFiltersMatchTheReference(input: [Int], weight: [Int], groups: Int) async throws {
        let filters = Tensor(randomNormal: weight, seed: 7)
        let bias = Tensor(randomNormal: [weight[0]], seed: 8)
        try await Tensor.evaluate([filters, bias])
        for use in 0..<3 {
            let x = Tensor(randomNormal: input, seed: UInt64(20 + use))
            try await Tensor.evaluate([x])
            func convolved(_ policy: ComputePolicy) async throws -> [Float] {
                try await withComputePolicy(policy) {
                    try await x.convolution(weight: filters, bias: bias, padding: .same, groupCount: groups)
                        .shapedArray(of: Float.self).scalars
                }
            }
            let want = try await convolved(.only(.naive))
            let got = try await convolved(.only(.openblas))
            let worst = zip(got, want).map { Swift.abs($0 - $1) / (1 + Swift.abs($1)) }.max() ?? 0
            #expect(got.count == want.count)
            #expect(worst < 1e-4, "use \(use): worst relative difference \(worst)")
        }
    }
}
