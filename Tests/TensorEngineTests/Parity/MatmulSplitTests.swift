import Testing
@testable import TensorEngine

/// Products the OpenBLAS backend cuts into pieces (rows, columns, batches) against the naive
/// backend's, for each operand layout BLAS reads in place.
@Suite("MatmulSplit")
struct MatmulSplitTests {
    /// With OpenBLAS's `sgemm`: its own threads for the largest products.
    @Test func piecesFollowTheShape() {
        #expect(Parallel.balancedPieces(3, workers: 2) == 2 && Parallel.balancedPieces(5, workers: 4) == 4)
        #expect(Parallel.balancedPieces(2, workers: 4) == 2 && Parallel.balancedPieces(6, workers: 3) == 6)
        let projection = MatmulSplit(batches: 1, m: 12, n: 384, k: 384, workers: 2, kernel: .openBLAS)
        #expect(projection == MatmulSplit(batches: 1, m: 12, n: 384, k: 384, workers: 2, kernel: .openBLAS))
        // 2²¹·0.84 multiply-adds are worth 3 pieces of 2¹⁹, made 2: 3 on 2 workers leave one doing 2.
        #expect(projection.axis == .columns && projection.parts == 2 && projection.alignment == 16)
        #expect(projection.libraryThreads == 1)
        let tall = MatmulSplit(batches: 1, m: 704, n: 384, k: 384, workers: 2, kernel: .openBLAS)
        #expect(tall.axis == .rows && tall.parts == 4 && tall.libraryThreads == 1)
        let attention = MatmulSplit(batches: 384, m: 22, n: 22, k: 32, workers: 2, kernel: .openBLAS)
        #expect(attention.axis == .batch && attention.parts == 4 && attention.alignment == 1)
        #expect(MatmulSplit(batches: 1, m: 8, n: 8, k: 8, workers: 2, kernel: .openBLAS).parts == 1)
        // 2¹⁸ multiply-adds: a piece per worker (2¹⁷ each), where pieces of 2¹⁹ would make one.
        #expect(MatmulSplit(batches: 1, m: 64, n: 64, k: 64, workers: 2, kernel: .avx512).parts == 2)
        #expect(MatmulSplit(batches: 1, m: 64, n: 64, k: 32, workers: 2, kernel: .avx512).parts == 1)
        #expect(MatmulSplit(batches: 1, m: 4096, n: 4096, k: 4096, workers: 1, kernel: .openBLAS).parts == 1)
        let large = MatmulSplit(batches: 1, m: 1024, n: 1024, k: 1024, workers: 2, kernel: .openBLAS)
        #expect(large.parts == 1 && large.libraryThreads == 2)
        // Matrix·vector: pieces below 2²¹ multiply-adds, one threaded sgemv from there.
        #expect(MatmulSplit(batches: 1, m: 1, n: 1024, k: 1024, workers: 2, kernel: .openBLAS).parts == 2)
        let gemv = MatmulSplit(batches: 1, m: 1, n: 3072, k: 768, workers: 2, kernel: .openBLAS)
        #expect(gemv.parts == 1 && gemv.libraryThreads == 2)
        #expect(MatmulSplit(batches: 1, m: 3072, n: 1, k: 768, workers: 2, kernel: .openBLAS).libraryThreads == 2)
    }

    /// With the engine's single-threaded AVX-512 kernel: always pieces, rows whenever each piece
    /// gets 16 of them (they share one packed B), whole 32-column tiles otherwise.
    @Test func piecesForTheEngineKernel() {
        let projection = MatmulSplit(batches: 1, m: 12, n: 384, k: 384, workers: 2, kernel: .avx512)
        #expect(projection.axis == .columns && projection.parts == 2 && projection.alignment == 32)
        let mlp = MatmulSplit(batches: 1, m: 64, n: 512, k: 784, workers: 2, kernel: .avx512)
        #expect(mlp.axis == .rows && mlp.parts == 4 && mlp.alignment == 16)
        let large = MatmulSplit(batches: 1, m: 1024, n: 1024, k: 1024, workers: 2, kernel: .avx512)
        #expect(large.axis == .rows && large.parts == 4 && large.libraryThreads == 1)
        // Matrix·vector products stay OpenBLAS's, threaded by it when large.
        let gemv = MatmulSplit(batches: 1, m: 1, n: 3072, k: 768, workers: 2, kernel: .avx512)
        #expect(gemv.parts == 1 && gemv.libraryThreads == 2)
    }

    /// (m, k, n, batch, A stored transposed, B stored transposed)
    static let cases: [(Int, Int, Int, Int, Bool, Bool)] = [
        (12, 384, 384, 1, false, true),     // columns, B as a [n, k] weight
        (12, 384, 384, 1, false, false),    // columns, B row-major
        (700, 64, 40, 1, false, false),     // rows
        (700, 64, 40, 1, true, false),      // rows, A stored [k, m]
        (1, 1024, 1024, 1, false, true),    // sgemv over column pieces (below 2²¹ multiply-adds)
        (1, 1024, 1024, 1, false, false),
        (1024, 1024, 1, 1, false, false),   // sgemv over row pieces
        (1024, 1024, 1, 1, true, false),
        (1, 768, 3072, 1, false, false),    // sgemv as one OpenBLAS-threaded call
        (3072, 768, 1, 1, true, false),
        (32, 32, 32, 64, false, true),      // batches
        (64, 784, 512, 1, false, false),    // rows sharing one packed B (engine kernel)
        (64, 784, 10, 1, false, true),      // one partial 32-column panel
        (200, 300, 130, 1, true, true),     // both stored transposed
        (30, 1030, 70, 1, false, false),    // columns, k in 5 blocks
    ]

    @Test(arguments: cases.indices) func splitProductsMatchNaive(_ index: Int) async throws {
        let (m, k, n, batch, aTransposed, bTransposed) = Self.cases[index]
        func operand(_ rows: Int, _ columns: Int, transposed: Bool, seed: Int) -> Tensor {
            let prefix = batch > 1 ? [batch] : []
            guard transposed else { return Tensor(randomNormal: prefix + [rows, columns], seed: UInt64(seed)) }
            let stored = Tensor(randomNormal: prefix + [columns, rows], seed: UInt64(seed))
            return batch > 1 ? stored.transposed(permutation: 0, 2, 1) : stored.transposed()
        }
        let a = operand(m, k, transposed: aTransposed, seed: 1)
        let b = operand(k, n, transposed: bTransposed, seed: 2)
        try await Tensor.evaluate([a, b])
        let want = try await withComputePolicy(.only(.naive)) { try await a.matmul(b).shapedArray(of: Float.self).scalars }
        let got = try await withComputePolicy(.only(.openblas)) { try await a.matmul(b).shapedArray(of: Float.self).scalars }
        #expect(got.count == want.count)
        let worst = zip(got, want).map { Swift.abs($0 - $1) / (1 + Swift.abs($1)) }.max() ?? 0
        #expect(worst < 1e-4, "case \(Self.cases[index]): worst relative difference \(worst)")
    }
}
