import CIntrinsics

extension OpenBLASBackend {
    /// Multiply-adds of attention (both products) per piece of work shared across the workers, at
    /// least: a model's heads at batch 1 (12 of 12 × 12 × 32 in MiniLM) are a few microseconds of
    /// work, which more pieces would spend waiting for each other.
    static let attentionMultiplyAddsPerPiece = 1 << 16

    /// Scores of a block of queries, in floats (16 KiB): small enough to stay in L1 from the first
    /// product through the softmax to the second, which reads them as its A.
    static let attentionBlockScoreFloats = 1 << 12

    /// Queries per block at least, however many the keys: two of the product kernel's tiles.
    static let attentionBlockRows = 24

    /// Scores of a block at most, in floats (1 MiB): with very many keys a block has fewer
    /// queries than ``attentionBlockRows``, down to one.
    static let attentionMostScoreFloats = 1 << 18

    /// `softmax(query · keyᵀ · scale + mask) · value` by blocks of queries: each task computes
    /// its block's scores into a buffer of its own, masks them, takes the softmax in place and
    /// multiplies by the values, so the `[..., Lq, Lk]` scores never exist in memory at once.
    /// Tasks (batches, then ranges of queries) are shared across the workers; the products are
    /// single-threaded (``HostProducts``). With the engine's kernel a task packs its keys and
    /// values once and takes its queries 32 at a time, their scores transposed
    /// (``te_attention_queries``, up to ``attentionTransposedMostKeys`` keys), or past that in
    /// blocks of query rows (``attentionBlockScoreFloats``). Queries, keys and values are read in
    /// place, as products read their operands, when BLAS can describe each batch's matrix (the
    /// heads of a `[batch, length, heads, depth]` projection, permuted; a transposed key), else
    /// copied row-major first.
    func attention(_ op: Op, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "attention")
        let out = buffer.elements(as: Float.self)
        let shape = inputs[0].shape
        let rank = shape.count
        let (lq, d, lk, dv) = (shape[rank - 2], shape[rank - 1], inputs[1].shape[rank - 2], output.shape[rank - 1])
        let batchShape = Array(shape.dropLast(2))
        let batches = batchShape.reduce(1, *)
        guard output.elementCount > 0 else { return result }
        guard [lq, d, lk, dv].allSatisfy({ $0 < Int(Int32.max) }) else {
            throw TensorError(.unsupported, op: "attention", message: "a dimension of 2^31 or more exceeds BLAS's indices")
        }
        guard lk > 0, d > 0 else {
            // No keys: each result is an empty sum of values, 0. No depth: every score is the mask's.
            if lk == 0 {
                out.update(repeating: 0, count: output.elementCount)
            } else {
                try attentionWithoutDepth(op, inputs, output, into: out)
            }
            return result
        }
        // Copies, where BLAS cannot read an operand in place, must outlive the products.
        let queries = try contiguousIfNeeded(inputs[0], rows: lq, columns: d)
        let keys = try contiguousIfNeeded(inputs[1], rows: lk, columns: d)
        let values = try contiguousIfNeeded(inputs[2], rows: lk, columns: dv)
        let (query, queryBatches) = try operand(queries, rows: lq, columns: d)
        let (key, keyBatches) = try operand(keys, rows: lk, columns: d)
        let (value, valueBatches) = try operand(values, rows: lk, columns: dv)
        let mask = try inputs.count > 3 ? AttentionMask(inputs[3], batchShape: batchShape, lq: lq, lk: lk) : nil

        // Tasks: whole batches when there are enough of them, else ranges of queries.
        let wanted = Parallel.workers * MatmulSplit.piecesPerWorker
        let blocksPerBatch = batches >= wanted ? 1 : (wanted + batches - 1) / batches
        let rowsPerTask = Swift.max(1, (lq + blocksPerBatch - 1) / blocksPerBatch)
        let tasksPerBatch = (lq + rowsPerTask - 1) / rowsPerTask
        let tasks = batches * tasksPerBatch
        let multiplyAdds = Double(batches) * Double(lq) * Double(lk) * Double(d + dv)
        let enough = multiplyAdds / Double(Self.attentionMultiplyAddsPerPiece)
        let pieces = Parallel.balancedPieces(Int(Swift.min(Swift.max(1, enough), Double(wanted))))
        let (scale, causal) = (op.attentionScale, op.isCausal)
        BLASThreads.use(1)
        if HostProducts.kernel == .avx512 && lk <= Self.attentionTransposedMostKeys {
            let operands = AttentionOperands(
                query: query, queryBatches: queryBatches, key: key, keyBatches: keyBatches, value: value,
                valueBatches: valueBatches, mask: mask)
            Parallel.forEachRange(tasks, parts: Swift.min(tasks, pieces)) { range in
                Self.attendTransposed(operands, tasks: range, tasksPerBatch: tasksPerBatch, rowsPerTask: rowsPerTask,
                                      lq: lq, lk: lk, d: d, dv: dv, scale: scale, causal: causal, into: out)
            }
            withExtendedLifetime((queries, keys, values, mask)) {}
            return result
        }
        let blockRows = Swift.max(1, Swift.min(
            rowsPerTask, Swift.max(Self.attentionBlockRows, Self.attentionBlockScoreFloats / lk),
            Self.attentionMostScoreFloats / lk))
        let packsOperands = HostProducts.kernel == .avx512
        Parallel.forEachRange(tasks, parts: Swift.min(tasks, pieces)) { range in
            let scores = UnsafeMutablePointer<Float>.allocate(capacity: blockRows * lk)
            defer { scores.deallocate() }
            // The keys and values packed once per task, for all its blocks of queries.
            let (keyFloats, valueFloats) =
                packsOperands ? (te_packed_b_floats(d, lk), te_packed_b_floats(lk, dv)) : (0, 0)
            let packed = UnsafeMutableRawPointer.allocate(
                byteCount: (keyFloats + valueFloats) * MemoryLayout<Float>.stride, alignment: 64
            ).bindMemory(to: Float.self, capacity: keyFloats + valueFloats)
            defer { packed.deallocate() }
            for task in range {
                let (batch, block) = task.quotientAndRemainder(dividingBy: tasksPerBatch)
                let (keyBase, valueBase) = (key.pointer + keyBatches[batch], value.pointer + valueBatches[batch])
                if packsOperands {
                    // Kᵀ: a row-major key is Kᵀ stored transposed, a transposed one is Kᵀ as it is.
                    te_pack_b_panels(key.transposed ? 0 : 1, d, lk, keyBase, key.leading, packed, 0, (lk + 31) / 32)
                    te_pack_b_panels(value.transposed ? 1 : 0, lk, dv, valueBase, value.leading, packed + keyFloats,
                                     0, (dv + 31) / 32)
                }
                let taskEnd = Swift.min(lq, (block + 1) * rowsPerTask)
                for first in stride(from: block * rowsPerTask, to: taskEnd, by: blockRows) {
                    let rows = Swift.min(blockRows, taskEnd - first)
                    let queryBlock =
                        query.pointer + queryBatches[batch] + (query.transposed ? first : first * query.leading)
                    let target = out + (batch * lq + first) * dv
                    if packsOperands {
                        te_sgemm_packed(query.transposed ? 1 : 0, rows, lk, d, queryBlock, query.leading, packed, 0, lk,
                                        scores, lk, 0)
                    } else {
                        HostProducts.multiply(
                            transposeA: query.transposed, transposeB: !key.transposed, m: rows, n: lk, k: d, queryBlock,
                            lda: query.leading, keyBase, ldb: key.leading, scores, ldc: lk, accumulate: false)
                    }
                    Self.weigh(scores, rows: rows, keys: lk, firstQuery: first, of: lq, scale: scale,
                               mask: mask?.rows(batch: batch, firstQuery: first), causal: causal)
                    if packsOperands {
                        te_sgemm_packed(0, rows, dv, lk, scores, lk, packed + keyFloats, 0, dv, target, dv, 0)
                    } else {
                        HostProducts.multiply(
                            transposeA: false, transposeB: value.transposed, m: rows, n: dv, k: lk, scores, lda: lk,
                            valueBase, ldb: value.leading, target, ldc: dv, accumulate: false)
                    }
                }
            }
        }
        withExtendedLifetime((queries, keys, values, mask)) {}
        return result
    }

    /// Keys at most for ``attendTransposed``, whose blocks hold the scores of 32 queries whatever
    /// the keys (1 MiB at this many); past it, blocks of fewer query rows.
    static let attentionTransposedMostKeys = attentionMostScoreFloats / Int(TE_ATTENTION_QUERIES)

    /// Attention for a worker's tasks by the engine's AVX-512 kernel (``te_attention_queries``):
    /// per task the batch's keys and values packed once, then its queries 32 at a time with their
    /// scores transposed, keys down and queries across.
    private static func attendTransposed(
        _ operands: AttentionOperands, tasks: Range<Int>, tasksPerBatch: Int, rowsPerTask: Int, lq: Int, lk: Int,
        d: Int, dv: Int, scale: Float, causal: Bool, into out: UnsafeMutablePointer<Float>
    ) {
        let floats = te_attention_scratch_floats(lk, d, dv)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: floats * MemoryLayout<Float>.stride, alignment: 64)
            .bindMemory(to: Float.self, capacity: floats)
        defer { scratch.deallocate() }
        for task in tasks {
            let (batch, block) = task.quotientAndRemainder(dividingBy: tasksPerBatch)
            let first = block * rowsPerTask
            let rows = operands.mask?.rows(batch: batch, firstQuery: 0)
            let mask = te_attention_mask(
                base: rows?.pointer, queryStride: rows?.queryStride ?? 0, keyStride: rows?.keyStride ?? 0)
            te_attention_queries(
                lq, lk, d, dv, operands.query.matrix(at: operands.queryBatches[batch]),
                operands.key.matrix(at: operands.keyBatches[batch]),
                operands.value.matrix(at: operands.valueBatches[batch]), mask, scale, causal ? 1 : 0, first,
                Swift.min(lq, first + rowsPerTask), out + batch * lq * dv, dv, scratch)
        }
    }

    /// A block of queries' scores (`rows` rows of `lk`, contiguous) turned into their weights in
    /// place: scaled, masked, the keys after each query's position hidden when `causal` (query i
    /// of Lq sees keys j ≤ i + Lk - Lq), then the softmax (``RowKernels/softmaxRows``, which reads
    /// a mask whose keys are contiguous as it goes; another is added to the scores first).
    private static func weigh(_ scores: UnsafeMutablePointer<Float>, rows: Int, keys lk: Int, firstQuery: Int,
                              of lq: Int, scale: Float, mask: AttentionMask.Rows?, causal: Bool) {
        let visible = causal ? firstQuery + lk - lq + 1 : nil
        guard let mask, mask.keyStride != 1 else {
            RowKernels.softmaxRows(scores, ldx: lk, scores, ldo: lk, rows: rows, lk, scale: scale,
                                   mask: mask.map { ($0.pointer, $0.queryStride) }, causalVisible: visible)
            return
        }
        for row in 0..<rows {
            let (line, maskRow) = (scores + row * lk, mask.pointer + row * mask.queryStride)
            for j in 0..<lk { line[j] = line[j] * scale + maskRow[j * mask.keyStride] }
        }
        RowKernels.softmaxRows(scores, ldx: lk, scores, ldo: lk, rows: rows, lk, scale: 1, mask: nil,
                               causalVisible: visible)
    }

    /// Attention with queries and keys of depth 0: every score is the mask's (or 0), and the
    /// softmax of each query's row weighs the values, in plain loops (a rare case).
    private func attentionWithoutDepth(_ op: Op, _ inputs: [Value], _ output: TensorSignature,
                                       into out: UnsafeMutablePointer<Float>) throws(TensorError) {
        let shape = inputs[0].shape
        let rank = shape.count
        let (lq, lk, dv) = (shape[rank - 2], inputs[1].shape[rank - 2], output.shape[rank - 1])
        let batchShape = Array(shape.dropLast(2))
        let value = try contiguous(inputs[2])
        let v = UnsafePointer(value.pointer.assumingMemoryBound(to: Float.self))
        let mask = try inputs.count > 3 ? AttentionMask(inputs[3], batchShape: batchShape, lq: lq, lk: lk) : nil
        var line = [Float](repeating: 0, count: lk)
        for batch in 0..<batchShape.reduce(1, *) {
            for position in 0..<lq {
                line.withUnsafeMutableBufferPointer { row in
                    let base = row.baseAddress.unsafelyUnwrapped
                    base.update(repeating: 0, count: lk)
                    Self.weigh(base, rows: 1, keys: lk, firstQuery: position, of: lq, scale: 1,
                               mask: mask?.rows(batch: batch, firstQuery: position), causal: op.isCausal)
                    for j in 0..<dv {
                        var sum: Float = 0
                        for p in 0..<lk { sum += base[p] * v[(batch * lk + p) * dv + j] }
                        out[(batch * lq + position) * dv + j] = sum
                    }
                }
            }
        }
        withExtendedLifetime((value.keepAlive, mask)) {}
    }
}

/// Attention's queries, keys and values as BLAS reads them, with each batch's offset, and its mask.
private struct AttentionOperands {
    let query: OpenBLASBackend.MatrixOperand
    let queryBatches: [Int]
    let key: OpenBLASBackend.MatrixOperand
    let keyBatches: [Int]
    let value: OpenBLASBackend.MatrixOperand
    let valueBatches: [Int]
    let mask: AttentionMask?
}

extension OpenBLASBackend.MatrixOperand {
    /// The matrix `offset` floats on, as the attention kernel takes it: row-major with rows
    /// `leading` apart, or stored transposed.
    func matrix(at offset: Int) -> te_attention_matrix {
        te_attention_matrix(base: pointer + offset, rowStride: transposed ? 1 : leading,
                            columnStride: transposed ? leading : 1)
    }
}

/// An attention mask read in place, broadcast to `[batch..., Lq, Lk]` by its strides.
private struct AttentionMask {
    let keepAlive: Value
    let base: UnsafePointer<Float>
    let batchOffsets: [Int]
    let queryStride: Int
    let keyStride: Int

    init(_ mask: Value, batchShape: [Int], lq: Int, lk: Int) throws(TensorError) {
        let layout = mask.layout.broadcast(to: batchShape + [lq, lk])
        let rank = layout.rank
        keepAlive = mask
        base = UnsafePointer(try OpenBLASBackend.pointer(mask).assumingMemoryBound(to: Float.self))
        batchOffsets = Layout(shape: batchShape, strides: Array(layout.strides.dropLast(2)), offset: layout.offset)
            .elementOffsets()
        queryStride = layout.strides[rank - 2]
        keyStride = layout.strides[rank - 1]
    }

    /// The mask's rows for a block of queries of one batch, from its first.
    struct Rows {
        /// The first query's row.
        let pointer: UnsafePointer<Float>
        /// The distance between two queries' rows (0 for a mask broadcast along the queries).
        let queryStride: Int
        /// The distance between two keys of a row.
        let keyStride: Int
    }

    /// The mask's rows for the queries of one batch from `firstQuery` on.
    func rows(batch: Int, firstQuery: Int) -> Rows {
        Rows(pointer: base + batchOffsets[batch] + firstQuery * queryStride, queryStride: queryStride,
             keyStride: keyStride)
    }
}
