extension OpenBLASBackend {
    /// Scores of at most this many floats per task (1 MiB): a task's block of queries is cut
    /// shorter when its keys are many, so the scores stay in L2.
    static let attentionScoreFloats = 1 << 18

    /// Multiply-adds of attention (both products) per piece of work shared across the workers, at
    /// least: a model's heads at batch 1 (12 of 12 × 12 × 32 in MiniLM) are a few microseconds of
    /// work, which more pieces would spend waiting for each other.
    static let attentionMultiplyAddsPerPiece = 1 << 16

    /// `softmax(query · keyᵀ · scale + mask) · value` by blocks of queries: each task computes
    /// its block's scores into a buffer of its own, masks them, takes the softmax in place and
    /// multiplies by the values, so the `[..., Lq, Lk]` scores never exist in memory at once.
    /// Tasks (batches, then blocks of queries) are shared across the workers; the products are
    /// single-threaded (``HostProducts``). Queries, keys and values are read in place, as products
    /// read their operands, when BLAS can describe each batch's matrix (the heads of a
    /// `[batch, length, heads, depth]` projection, permuted; a transposed key), else copied
    /// row-major first.
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

        // Tasks: whole batches when there are enough of them, else blocks of queries.
        let wanted = Parallel.workers * MatmulSplit.piecesPerWorker
        let blocksPerBatch = batches >= wanted ? 1 : (wanted + batches - 1) / batches
        let rowsPerTask = Swift.max(1, Swift.min((lq + blocksPerBatch - 1) / blocksPerBatch, Self.attentionScoreFloats / lk))
        let tasksPerBatch = (lq + rowsPerTask - 1) / rowsPerTask
        let tasks = batches * tasksPerBatch
        let multiplyAdds = Double(batches) * Double(lq) * Double(lk) * Double(d + dv)
        let enough = multiplyAdds / Double(Self.attentionMultiplyAddsPerPiece)
        let pieces = Int(Swift.min(Swift.max(1, enough), Double(wanted)))
        let (scale, causal) = (op.attentionScale, op.isCausal)
        BLASThreads.use(1)
        Parallel.forEachRange(tasks, parts: Swift.min(tasks, pieces)) { range in
            let scores = UnsafeMutablePointer<Float>.allocate(capacity: rowsPerTask * lk)
            defer { scores.deallocate() }
            for task in range {
                let (batch, block) = task.quotientAndRemainder(dividingBy: tasksPerBatch)
                let first = block * rowsPerTask
                let rows = Swift.min(rowsPerTask, lq - first)
                // Scores = Q·Kᵀ: a row-major key is Kᵀ stored transposed, a transposed one is Kᵀ as it is.
                let firstQuery = query.transposed ? first : first * query.leading
                HostProducts.multiply(
                    transposeA: query.transposed, transposeB: !key.transposed, m: rows, n: lk, k: d,
                    query.pointer + queryBatches[batch] + firstQuery, lda: query.leading,
                    key.pointer + keyBatches[batch], ldb: key.leading, scores, ldc: lk, accumulate: false)
                for row in 0..<rows {
                    Self.weigh(scores + row * lk, keys: lk, query: first + row, of: lq, scale: scale,
                               mask: mask?.row(batch: batch, query: first + row), causal: causal)
                }
                HostProducts.multiply(
                    transposeA: false, transposeB: value.transposed, m: rows, n: dv, k: lk, scores, lda: lk,
                    value.pointer + valueBatches[batch], ldb: value.leading, out + (batch * lq + first) * dv, ldc: dv,
                    accumulate: false)
            }
        }
        withExtendedLifetime((queries, keys, values, mask)) {}
        return result
    }

    /// One query's scores turned into its weights, in place: scaled, masked, the keys after its
    /// position hidden when `causal` (query i of Lq sees keys j ≤ i + Lk - Lq), then the softmax.
    private static func weigh(_ line: UnsafeMutablePointer<Float>, keys lk: Int, query position: Int, of lq: Int,
                              scale: Float, mask: (pointer: UnsafePointer<Float>, stride: Int)?, causal: Bool) {
        scaleAndMask(line, lk, scale: scale, mask: mask)
        if causal {
            let visible = Swift.max(0, position + lk - lq + 1)
            if visible < lk { (line + visible).update(repeating: -.infinity, count: lk - visible) }
        }
        RowKernels.softmax(line, line, lk, logarithmic: false)
    }

    /// `line[j] = line[j] · scale + mask[j]`.
    private static func scaleAndMask(_ line: UnsafeMutablePointer<Float>, _ count: Int, scale: Float,
                                     mask: (pointer: UnsafePointer<Float>, stride: Int)?) {
        guard let mask else {
            for j in 0..<count { line[j] *= scale }
            return
        }
        if mask.stride == 1 {
            for j in 0..<count { line[j] = line[j] * scale + mask.pointer[j] }
        } else {
            for j in 0..<count { line[j] = line[j] * scale + mask.pointer[j * mask.stride] }
        }
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
                    Self.weigh(base, keys: lk, query: position, of: lq, scale: 1,
                               mask: mask?.row(batch: batch, query: position), causal: op.isCausal)
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

    /// The mask's row for one query of one batch, and the distance between its keys.
    func row(batch: Int, query: Int) -> (pointer: UnsafePointer<Float>, stride: Int) {
        (base + batchOffsets[batch] + query * queryStride, keyStride)
    }
}
