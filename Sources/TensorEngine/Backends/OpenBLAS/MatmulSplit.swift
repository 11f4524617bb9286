import COpenBLAS

/// How one matrix product is shared between the cores: OpenBLAS's own threads, or pieces that
/// the backend hands to its workers, each a single-threaded BLAS call.
///
/// OpenBLAS splits every call of more than 2¹⁸ multiply-adds over its threads and waits for all
/// of them, spinning and yielding. On cores shared with other work that wait dominates: on the
/// project's 2-core machine, under a load of about 3, a `[12, 384] · [384, 384]` product (one
/// BERT projection at batch 1) took 0.54 ms with 2 OpenBLAS threads and 0.16 ms with one, and
/// `[704, 384] · [384, 384]` 5.5 ms against 2.9 ms. Pieces run through `concurrentPerform`
/// instead: a worker that is not scheduled leaves its pieces to the others, so the product
/// degrades to one core's speed instead of below it. With OpenBLAS's `sgemm`, products of at
/// least ``libraryThreadingMultiplyAdds`` keep OpenBLAS's threads, which share the packed operand
/// (each piece packs its own copy of the operand it does not split); the engine's own product
/// kernel (``HostProducts``) is single-threaded, so its products are always cut into pieces.
struct MatmulSplit: Equatable {
    /// The dimension cut into pieces.
    enum Axis: Equatable {
        /// Whole products of a batch.
        case batch
        /// Rows of A and C.
        case rows
        /// Columns of B and C.
        case columns
    }

    /// Products this large (1024³ multiply-adds) use OpenBLAS's threads: the repeated packing
    /// of per-piece calls starts to cost more than the library's own split loses.
    static let libraryThreadingMultiplyAdds = 1 << 30
    /// Matrix·vector products this large (2²¹ multiply-adds, an 8 MiB matrix) also use OpenBLAS's
    /// threads: `sgemv` is a single pass over the matrix, and cut into column pieces each piece
    /// reads a short run of every row. `1×768 · 768×3072`: 131 µs median in pieces against 70-83
    /// µs as one threaded call (the bare `cblas_sgemv` of the same run: 98-131 µs).
    static let libraryThreadingMatrixVectorMultiplyAdds = 1 << 21
    /// The fewest multiply-adds worth a piece: 2¹⁹, about 10 µs of one core, beside a 5–10 µs
    /// dispatch (``Parallel``).
    static let minimumMultiplyAddsPerPiece = 1 << 19
    /// A product of this many multiply-adds per worker (2¹⁷, about 3 µs of one core with the
    /// AVX-512 kernel) or more gets a piece per worker even where it has too few for
    /// ``minimumMultiplyAddsPerPiece``: the other workers spin for the next loop (``WorkerPool``).
    /// A 64³ product in two pieces took 0.82 of its time as one, mlp 0.95 (AMD EPYC, builds
    /// interleaved); products of 2¹⁹ and more are unchanged.
    static let minimumMultiplyAddsPerWorker = 1 << 17
    /// Pieces per worker: more than one lets the scheduled workers take over a stalled one's.
    static let piecesPerWorker = 2
    /// Rows or columns per piece are a multiple of this (the BLAS micro-kernels' tile).
    static let tile = 16

    let axis: Axis
    /// The length of the split dimension.
    let extent: Int
    /// The number of pieces (1: one call on the calling thread).
    let parts: Int
    /// Piece boundaries are multiples of this.
    let alignment: Int
    /// The thread count OpenBLAS gets for the calls.
    let libraryThreads: Int

    init(batches: Int, m: Int, n: Int, k: Int, workers: Int = Parallel.workers,
         kernel: HostProducts.Kernel = HostProducts.kernel) {
        let multiplyAdds = batches * m * n * k
        // Matrix·vector products (one row or column) are OpenBLAS's `sgemv` or the backend's loop.
        let libraryProduct = kernel == .openBLAS || min(m, n) == 1
        let libraryThreaded = libraryProduct && multiplyAdds >= Self.libraryThreadingMultiplyAdds
            || (min(m, n) == 1 && multiplyAdds >= Self.libraryThreadingMatrixVectorMultiplyAdds)
        if batches == 1 && libraryThreaded {
            self.init(axis: .rows, extent: m, parts: 1, alignment: 1, libraryThreads: workers)
            return
        }
        var worthwhile = max(1, min(workers * Self.piecesPerWorker, multiplyAdds / Self.minimumMultiplyAddsPerPiece))
        if worthwhile < workers, multiplyAdds / workers >= Self.minimumMultiplyAddsPerWorker { worthwhile = workers }
        let wanted = Parallel.balancedPieces(worthwhile, workers: workers)
        if batches > 1 {
            self.init(axis: .batch, extent: batches, parts: min(wanted, batches), alignment: 1, libraryThreads: 1)
        } else if m >= n || (!libraryProduct && m >= Self.tile * wanted) {
            // The engine's kernel shares one packed B between row pieces, and each column piece
            // would pack all of A: rows whenever every piece gets a tile's worth of them.
            self.init(axis: .rows, extent: m, parts: min(wanted, max(1, m / Self.tile)), alignment: Self.tile, libraryThreads: 1)
        } else {
            // Whole 32-column tiles of the engine's kernel per piece.
            let columnTile = libraryProduct ? Self.tile : 2 * Self.tile
            self.init(axis: .columns, extent: n, parts: min(wanted, max(1, n / columnTile)), alignment: columnTile,
                      libraryThreads: 1)
        }
    }

    private init(axis: Axis, extent: Int, parts: Int, alignment: Int, libraryThreads: Int) {
        self.axis = axis
        self.extent = extent
        self.parts = parts
        self.alignment = alignment
        self.libraryThreads = libraryThreads
    }
}

/// OpenBLAS's thread count, a process-wide setting, set before each product to what its split
/// wants. Evaluations running at once may see each other's setting; that changes how many
/// threads a call uses, never its result.
enum BLASThreads {
    static func use(_ count: Int) {
        if openblas_get_num_threads() != Int32(count) { openblas_set_num_threads(Int32(count)) }
        // OpenBLAS's threads need the cores the pool's helpers would spin on.
        if count > 1 { WorkerPool.shared?.park() }
    }
}
