extension Tensor {
    /// Scaled dot-product attention, `softmax(query · keyᵀ · scale + mask) · value`, as one op.
    ///
    /// - Parameters:
    ///   - query: `[..., Lq, d]`.
    ///   - key: `[..., Lk, d]`, with the query's leading axes (heads, batches).
    ///   - value: `[..., Lk, dv]`, with the same leading axes.
    ///   - mask: added to the scores before the softmax, broadcast to `[..., Lq, Lk]` (a padding
    ///     mask is `[batch, 1, 1, Lk]` of 0 and a large negative number); the query's scalar type.
    ///   - scale: the factor on the scores; `1 / √d` when `nil`.
    ///   - causal: whether each query sees only the keys up to its own position. Queries are
    ///     aligned with the last keys: query `i` of `Lq` sees keys `j ≤ i + Lk - Lq`. This is
    ///     PyTorch's `is_causal` when `Lq == Lk`, and what a decoder with a cache of earlier keys
    ///     needs.
    /// - Returns: `[..., Lq, dv]`. A query that sees no key (every score masked to -∞) gives NaN.
    ///
    /// The openblas backend computes it block by block with the scores kept in cache, never the
    /// whole `[..., Lq, Lk]` score tensor; the other backends run its decomposition.
    public static func scaledDotProductAttention(
        query: Tensor, key: Tensor, value: Tensor, mask: Tensor? = nil, scale: Float? = nil, causal: Bool = false,
        file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        attention(query, key, value, mask: mask, scale: scale, causal: causal, at: SourceLocation(file, line))
    }

    /// Records the attention op (the public form, and attention recognised in `matmul`).
    static func attention(
        _ query: Tensor, _ key: Tensor, _ value: Tensor, mask: Tensor?, scale: Float?, causal: Bool,
        at location: SourceLocation?
    ) -> Tensor {
        let operands = [query, key, value] + (mask.map { [$0] } ?? [])
        return Tensor.record("attention", operands, at: location) { signatures throws(RuleViolation) in
            let depth = signatures[0].shape.last ?? 0
            let factor = scale ?? 1 / Float(Swift.max(depth, 1)).squareRoot()
            guard factor.isFinite else { throw RuleViolation(.invalidArgument, "scale \(factor) must be finite") }
            return .attention(scale: factor, causal: causal)
        }
    }
}
