import Foundation

/// ONNX's `Attention` (opset 23): scaled dot-product attention over 4-D `[batch, heads, sequence,
/// head]` or 3-D `[batch, sequence, heads · head]` inputs, with an additive or boolean mask, causal
/// masking aligned to the key cache, grouped-query heads, a key/value cache (`past_key`,
/// `past_value` → `present_key`, `present_value`), softcapping, and the optional `qk_matmul_output`.
/// The output is the engine's attention op (without softcapping); the optional scores and
/// weights are composed from matmul, softmax and elementwise ops, and computed only when read.
extension ONNXOperators {
    static let attention: [String: ONNXOperator] = [
        "Attention": ONNXOperator(since: 23, lower: scaledDotProductAttention)
    ]

    /// `[batch, sequence, heads · head]` as `[batch, heads, sequence, head]`.
    private static func splitHeads(_ node: ONNXNodeContext, _ x: Tensor, heads: Int?) throws(ModelError) -> Tensor {
        guard x.rank == 3 else { return x }
        guard let heads, heads > 0, x.shape[2] % heads == 0 else {
            throw node.error("3-D inputs need q_num_heads and kv_num_heads dividing their hidden sizes", .invalidModel)
        }
        return x.reshaped(to: [x.shape[0], x.shape[1], heads, x.shape[2] / heads]).transposed(permutation: 0, 2, 1, 3)
    }

    static func scaledDotProductAttention(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        if node.hasInput(6) { throw node.error("nonpad_kv_seqlen is not supported", .unsupportedOperators) }
        let type = try node.type(0)
        let threeD = try node.value(0).shape.count == 3
        let q = try splitHeads(node, try node.tensor(0), heads: try node.int("q_num_heads"))
        var k = try splitHeads(node, try node.tensor(1), heads: try node.int("kv_num_heads"))
        var v = try splitHeads(node, try node.tensor(2), heads: try node.int("kv_num_heads"))
        guard q.rank == 4, k.rank == 4, v.rank == 4 else { throw node.error("Q, K and V must all be 3-D or all 4-D") }
        let pastShape = node.hasInput(4) ? try node.value(4).shape : []
        guard !node.hasInput(4) || pastShape.count == 4 else { throw node.error("past_key must be [batch, heads, sequence, head]") }
        let pastLength = node.hasInput(4) ? pastShape[2] : 0
        if node.hasInput(4) { k = Tensor(concatenating: [try node.tensor(4), k], alongAxis: 2) }
        if node.hasInput(5) { v = Tensor(concatenating: [try node.tensor(5), v], alongAxis: 2) }
        let (presentKey, presentValue) = (k, v)
        let (queries, keys) = (q.shape[2], k.shape[2])
        // Grouped-query attention: each key/value head serves `repeats` consecutive query heads.
        let (queryHeads, keyHeads) = (q.shape[1], k.shape[1])
        if queryHeads != keyHeads {
            guard keyHeads > 0, queryHeads % keyHeads == 0, v.shape[1] == keyHeads else {
                throw node.error("\(queryHeads) query heads cannot share \(keyHeads) key heads")
            }
            let repeats = queryHeads / keyHeads
            func interleave(_ t: Tensor) -> Tensor {
                let (b, h, s, d) = (t.shape[0], t.shape[1], t.shape[2], t.shape[3])
                return t.reshaped(to: [b, h, 1, s, d]).broadcastIfNeeded(to: [b, h, repeats, s, d], at: nil).reshaped(
                    to: [b, h * repeats, s, d])
            }
            (k, v) = (interleave(k), interleave(v))
        }
        let scale = try node.has("scale") ? node.float("scale", default: 1) : 1 / Float(q.shape[3]).squareRoot()
        let root = scale.squareRoot()
        var scores = (q * root).matmul((k * root).transposed(permutation: 0, 1, 3, 2))
        let softcap = try node.float("softcap", default: 0)
        if softcap > 0 { scores = (scores / softcap).tanh() * softcap }
        let bias = try attentionBias(node, queries: queries, keys: keys, pastLength: pastLength, dtype: scores.dtype)
        let biased = bias.map { Tensor.binary(.add, scores, $0, at: nil) } ?? scores
        var weights = biased.softmax(alongAxis: -1)
        // A row with no key to attend to (its bias all -inf) has zero weights, not NaNs.
        let blocked = bias.map { $0.max(alongAxes: [$0.rank - 1], keepRank: true) .== -Float.infinity }
        if let blocked { weights = weights.replacing(with: 0, where: blocked) }
        // The output through the engine's attention op (scores, weights and the rest are only
        // computed when output 3 asks for them); softcapping has no place in it.
        var y: Tensor
        if softcap > 0 {
            y = weights.matmul(v)
        } else {
            y = Tensor.scaledDotProductAttention(query: q, key: k, value: v, mask: bias, scale: scale)
            if let blocked { y = y.replacing(with: 0, where: blocked) }
        }
        if threeD {
            y = y.transposed(permutation: 0, 2, 1, 3).reshaped(to: [y.shape[0], y.shape[2], y.shape[1] * y.shape[3]])
        }
        let exposed: Tensor =
            switch try node.int("qk_matmul_output_mode", default: 0) {
            case 2: biased
            case 3: weights
            default: scores
            }
        return [
            try node.output(y, type), try node.output(presentKey, type), try node.output(presentValue, type),
            try node.output(exposed, type),
        ]
    }

    /// The additive bias `[..., queries, keys]`: the mask (booleans as 0 or -inf, padded with -inf
    /// to the keys' length) plus, when `is_causal`, -inf where a key lies after the query's
    /// position (`key ≤ query + pastLength` attends).
    private static func attentionBias(
        _ node: ONNXNodeContext, queries: Int, keys: Int, pastLength: Int, dtype: ScalarType
    ) throws(ModelError) -> Tensor? {
        var bias: Tensor?
        if node.hasInput(3) {
            var mask = try node.tensor(3)
            if mask.dtype == .bool {
                let zero = Tensor.scalar(0, dtype)
                let blocked = Tensor.scalar(-.infinity, dtype)
                mask = blocked.broadcastIfNeeded(to: mask.shape, at: nil).replacing(with: zero, where: mask)
            }
            if let last = mask.shape.last, last < keys {
                var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: mask.rank)
                sizes[mask.rank - 1] = (0, keys - last)
                mask = mask.padded(forSizes: sizes, with: -.infinity)
            }
            bias = mask
        }
        if try node.int("is_causal", default: 0) != 0 {
            var values: [Float] = []
            values.reserveCapacity(queries * keys)
            for query in 0..<queries {
                for key in 0..<keys { values.append(key <= query + pastLength ? 0 : -.infinity) }
            }
            let causal = Tensor.constant(values, shape: [queries, keys], op: "Attention", at: nil).converted(to: dtype)
            bias = bias.map { Tensor.binary(.add, $0, causal, at: nil) } ?? causal
        }
        return bias
    }
}
