/// The decompositions of the composite ops into other ops, written with the public `Tensor` API.
///
/// A backend without a faster kernel for a composite op runs its decomposition, planned and
/// fused like any graph, on itself; the naive backend always does, so these are the reference the
/// faster kernels are checked against. `Float16` inputs are computed in `Float` and rounded once
/// at the end, as the faster kernels do (an intermediate rounded to half precision at every step
/// would be a different and worse result).
enum Decompositions {
    /// `exp(x - max) / sum(exp(x - max))` along the axis.
    static let softmax: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        inFloat(x[0]) { x in
            let exponentials = (x - x.reduce(.max, axes: op.axes, keepRank: true)).exp()
            return exponentials / exponentials.reduce(.sum, axes: op.axes, keepRank: true)
        }
    }

    /// `(x - max) - log(sum(exp(x - max)))` along the axis (the shift subtracted first: folding
    /// `max + log sum` into one shift rounds the logarithm away when |max| is large).
    static let logSoftmax: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        inFloat(x[0]) { x in
            let shifted = x - x.reduce(.max, axes: op.axes, keepRank: true)
            return shifted - shifted.exp().reduce(.sum, axes: op.axes, keepRank: true).log()
        }
    }

    /// `(x - mean) / sqrt(variance + epsilon)` along the axis, the variance taken about the mean
    /// (not `E[x²] - mean²`, which cancels catastrophically); then `· scale + bias`, each of the
    /// axis's extent, when the op has them.
    static let layerNorm: @Sendable (Op, [Tensor]) -> Tensor = { op, operands in
        inFloat(operands[0]) { x in
            let centered = x - x.reduce(.mean, axes: op.axes, keepRank: true)
            let variance = centered.squared().reduce(.mean, axes: op.axes, keepRank: true)
            let normalized = centered * (variance + op.epsilon).rsqrt()
            guard operands.count == 3 else { return normalized }
            // Scale and bias along the axis: their extent, then ones for the axes after it.
            let along = [x.shape[op.axis]] + [Int](repeating: 1, count: x.rank - 1 - op.axis)
            let (scale, bias) = (operands[1].reshaped(to: along), operands[2].reshaped(to: along))
            return normalized * (scale.dtype == .float16 ? scale.cast(to: Float.self) : scale)
                + (bias.dtype == .float16 ? bias.cast(to: Float.self) : bias)
        }
    }

    /// The population variance: the mean of the squared deviations from the mean.
    static let variance: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        inFloat(x[0]) { x in
            let centered = x - x.reduce(.mean, axes: op.axes, keepRank: true)
            return centered.squared().reduce(.mean, axes: op.axes, keepRank: op.keepRank)
        }
    }

    /// Whether every element along the axes is true: the least of them as integers is 1 (an
    /// empty reduction gives `Int32.max`, so `all` of nothing is true).
    static let all: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        x[0].cast(to: Int32.self).reduce(.min, axes: op.axes, keepRank: op.keepRank) .> 0
    }

    /// Whether some element along the axes is true: the greatest of them as integers is 1 (an
    /// empty reduction gives `Int32.min`, so `any` of nothing is false).
    static let any: @Sendable (Op, [Tensor]) -> Tensor = { op, x in
        x[0].cast(to: Int32.self).reduce(.max, axes: op.axes, keepRank: op.keepRank) .> 0
    }

    /// `body` on `x`, widened to `Float` and rounded back when `x` is `Float16`.
    private static func inFloat(_ x: Tensor, _ body: (Tensor) -> Tensor) -> Tensor {
        guard x.dtype == .float16 else { return body(x) }
        return body(x.cast(to: Float.self)).cast(to: Float16.self)
    }
}
