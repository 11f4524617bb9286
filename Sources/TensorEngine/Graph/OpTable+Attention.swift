// The attention row of the op table: its shape and cost rules, its decomposition (the reference)
// and its parity samples.

extension ShapeRules {
    /// `query [..., Lq, d]`, `key [..., Lk, d]`, `value [..., Lk, dv]` with the same leading axes,
    /// and an optional additive mask that broadcasts to `[..., Lq, Lk]`: the result is
    /// `[..., Lq, dv]`.
    static let attention: ShapeRule = { _, inputs throws(RuleViolation) in
        let (q, k, v) = (inputs[0].shape, inputs[1].shape, inputs[2].shape)
        let rank = q.count
        guard inputs.count <= 4 else {
            throw RuleViolation(.invalidArgument, "attention takes a query, a key, a value and an optional mask")
        }
        guard rank >= 2, k.count == rank, v.count == rank, q.dropLast(2) == k.dropLast(2), k.dropLast(2) == v.dropLast(2),
            q[rank - 1] == k[rank - 1], k[rank - 2] == v[rank - 2]
        else {
            throw RuleViolation(
                .shapeMismatch,
                "query \(describe(q)), key \(describe(k)) and value \(describe(v)) must be [..., Lq, d], [..., Lk, d] "
                    + "and [..., Lk, dv] with the same leading axes")
        }
        let scores = Array(q.dropLast()) + [k[rank - 2]]
        if inputs.count == 4 {
            let mask = inputs[3].shape
            guard mask.count <= rank, Op.broadcastShape(mask, scores) == scores else {
                throw RuleViolation(.shapeMismatch, "mask \(describe(mask)) does not broadcast to the scores \(describe(scores))")
            }
        }
        return TensorSignature(shape: Array(q.dropLast()) + [v[rank - 1]], scalarType: inputs[0].scalarType)
    }
}

extension CostRules {
    /// Two products (`2·Lq·Lk·d` and `2·Lq·Lk·dv` per batch) and a softmax over the scores,
    /// reading the operands once and writing the result: the traffic of the fused kernel, which
    /// keeps each block of scores in cache. The whole op is priced at the device's product rate,
    /// so each score's softmax counts as the products' FLOPs that take as long: about 50 (an
    /// exponential and its share of two passes take 0.15 ns per score on the 2-core development
    /// machine, where products run at about 0.003 ns per FLOP).
    static let attention: CostRule = { op, inputs, output in
        let q = inputs[0].signature.shape
        let (rank, lk, dv) = (q.count, Double(inputs[1].signature.shape[q.count - 2]), Double(output.shape.last ?? 0))
        let d = Double(q[rank - 1])
        let perOutput = dv > 0 ? (2 * lk * (d + dv) + 50 * lk) / dv : 0
        return streaming(op, inputs, output, flopsPerElement: perOutput, costClass: .matmul)
    }
}

extension Decompositions {
    /// `softmax(query · keyᵀ · scale + mask) · value`, the causal positions hidden with -inf; in
    /// `Float` for `Float16` operands, rounded once at the end.
    static let attention: @Sendable (Op, [Tensor]) -> Tensor = { op, operands in
        let half = operands[0].dtype == .float16
        let x = half ? operands.map { $0.cast(to: Float.self) } : operands
        let rank = x[0].rank
        let (lq, lk) = (x[0].shape[rank - 2], x[1].shape[rank - 2])
        var swapLast = Array(0..<rank)
        swapLast.swapAt(rank - 1, rank - 2)
        var scores = x[0].matmul(x[1].transposed(permutation: swapLast)) * op.attentionScale
        if x.count > 3 { scores = scores + x[3] }
        if op.isCausal {
            let hidden = (0..<(lq * lk)).map { index in index % lk > index / lk + lk - lq }
            scores = scores.replacing(with: -Float.infinity, where: Tensor(shape: [lq, lk], scalars: hidden))
        }
        // Recorded as a plain product: `matmul` would recognise the written-out attention and record
        // this op again.
        let result = Tensor.record(.matmul, [scores.softmax(alongAxis: -1), x[2]], at: nil)
        return half ? result.cast(to: Float16.self) : result
    }
}

extension Samples {
    /// Heads and batches, Lq ≠ Lk, causal (square, and a decoder's one query after a cache), masks
    /// broadcast from a row or a column, transposed and strided operands, `Float16`, a single key,
    /// no depth, no keys, an empty batch, products large enough for the backends' own paths, more
    /// queries than a block of 32 and more keys than such a block's scores hold.
    static let attention: [ParitySample] = {
        func input(_ shape: [Int], _ type: ScalarType = .float32, _ layout: SampleLayout = .contiguous) -> SampleInput {
            SampleInput(shape: shape, type: type, layout: layout)
        }
        let cases: [(String, [SampleInput], Float, Bool)] = [
            ("one head", [input([5, 8]), input([7, 8]), input([7, 3])], 0.35, false),
            ("heads", [input([2, 3, 6, 4]), input([2, 3, 6, 4]), input([2, 3, 6, 5])], 0.5, false),
            ("causal", [input([3, 9, 8]), input([3, 9, 8]), input([3, 9, 8])], 0.25, true),
            ("causal, one query after a cache", [input([2, 1, 16]), input([2, 12, 16]), input([2, 12, 16])], 0.25, true),
            ("mask per key", [input([2, 4, 6, 8]), input([2, 4, 10, 8]), input([2, 4, 10, 8]), input([2, 1, 1, 10])], 0.3, false),
            ("mask per query and key", [input([3, 5, 4]), input([3, 7, 4]), input([3, 7, 2]), input([5, 7])], 1, false),
            ("causal and masked", [input([2, 6, 4]), input([2, 6, 4]), input([2, 6, 4]), input([2, 1, 6])], 0.5, true),
            ("transposed operands", [input([6, 5], .float32, .transposed), input([9, 5]), input([9, 4], .float32, .transposed)], 0.4, false),
            ("strided key", [input([4, 6]), input([7, 6], .float32, .strided), input([7, 3], .float32, .reversed)], 0.4, false),
            ("float16", [input([2, 5, 8], .float16), input([2, 6, 8], .float16), input([2, 6, 8], .float16)], 0.35, false),
            ("one key", [input([4, 3]), input([1, 3]), input([1, 5])], 1, false),
            ("no depth: the mask alone weighs the values", [input([2, 3, 0]), input([2, 4, 0]), input([2, 4, 5]), input([3, 4])], 1, true),
            ("no keys", [input([2, 3, 4]), input([2, 0, 4]), input([2, 0, 5])], 1, false),
            ("empty batch", [input([0, 4, 8]), input([0, 5, 8]), input([0, 5, 8])], 1, false),
            ("large", [input([2, 12, 64, 32]), input([2, 12, 96, 32]), input([2, 12, 96, 32]), input([2, 1, 1, 96])], 0.18, true),
            // Blocks of 32 queries and a last one short, with a mask per query and key, causal.
            ("queries past a block",
             [input([2, 70, 16]), input([2, 75, 16]), input([2, 75, 24]), input([70, 75])], 0.25, true),
            ("transposed, queries past a block",
             [input([40, 20], .float32, .transposed), input([50, 20], .float32, .transposed),
              input([50, 18], .float32, .transposed), input([40, 1])], 0.3, false),
            // A thousand keys and more: the softmax's long-row kernel, with a limit per row and a mask.
            ("long keys", [input([2, 5, 8]), input([2, 1100, 8]), input([2, 1100, 4])], 0.3, false),
            ("long keys, causal and masked",
             [input([1, 20, 8]), input([1, 1100, 8]), input([1, 1100, 4]), input([1, 1100])], 0.3, true),
            // More keys than a block of 32 queries' scores holds on the openblas backend: blocks of query rows.
            ("very long keys",
             [input([1, 3, 4]), input([1, 8200, 4]), input([1, 8200, 2]), input([1, 8200])], 0.5, false),
        ]
        return cases.map { label, inputs, scale, causal in
            ParitySample(label: label, inputs: inputs, apply: .op(.attention(scale: scale, causal: causal)),
                         reductionLength: inputs[1].shape.last ?? 1)
        }
    }()
}
