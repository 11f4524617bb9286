import Foundation

/// ONNX normalizations and global pools, composed from the op table's reductions and
/// elementwise ops (so every backend runs them): `BatchNormalization` (inference),
/// `InstanceNormalization`, `GroupNormalization`, `RMSNormalization`, `MeanVarianceNormalization`,
/// `LpNormalization`, `LRN`, `GlobalAveragePool`, `GlobalMaxPool`.
extension ONNXOperators {
    static let normalization: [String: ONNXOperator] = [
        "BatchNormalization": ONNXOperator(since: 6, lower: batchNormalization),
        "InstanceNormalization": ONNXOperator(since: 6, lower: instanceNormalization),
        "GroupNormalization": ONNXOperator(since: 18, lower: groupNormalization),
        "RMSNormalization": ONNXOperator(since: 23, lower: rmsNormalization),
        "MeanVarianceNormalization": ONNXOperator(since: 9) { node throws(ModelError) in
            let x = try node.tensor(0)
            let axes = try normalized(
                node, axes: try node.ints("axes") ?? [0, 2, 3].filter { $0 < x.rank }, rank: x.rank)
            let centered = x - x.mean(alongAxes: axes, keepRank: true)
            let deviation = (centered * centered).mean(alongAxes: axes, keepRank: true).squareRoot()
            return [try node.output(centered / (deviation + 1e-9), try node.type(0))]
        },
        "LpNormalization": ONNXOperator { node throws(ModelError) in
            let x = try node.tensor(0)
            let axis = try axis(node, try node.int("axis", default: -1), rank: x.rank)
            let norm: Tensor
            switch try node.int("p", default: 2) {
            case 1: norm = x.abs().sum(alongAxes: axis, keepRank: true)
            case 2: norm = (x * x).sum(alongAxes: axis, keepRank: true).squareRoot()
            case let p: throw node.error("p = \(p) is neither 1 nor 2", .invalidModel)
            }
            // A zero vector stays zero (its norm taken as 1), as ONNX's reference does.
            return [try node.output(x / norm.replacing(with: 1, where: norm .== 0), try node.type(0))]
        },
        "LRN": ONNXOperator(lower: localResponseNormalization),
        "GlobalAveragePool": ONNXOperator { node throws(ModelError) in
            let x = try node.tensor(0)
            guard x.rank >= 3 else { throw node.error("needs [N, C, spatial...], not \(describe(x.shape))") }
            return [try node.output(x.mean(alongAxes: Array(2..<x.rank), keepRank: true), try node.type(0))]
        },
        "GlobalMaxPool": ONNXOperator { node throws(ModelError) in
            let x = try node.tensor(0)
            guard x.rank >= 3 else { throw node.error("needs [N, C, spatial...], not \(describe(x.shape))") }
            return [try node.output(x.max(alongAxes: Array(2..<x.rank), keepRank: true), try node.type(0))]
        },
    ]

    /// A per-channel vector shaped to broadcast along axis 1 of a rank-`rank` tensor.
    static func perChannel(_ t: Tensor, rank: Int) -> Tensor {
        guard t.rank == 1, rank > 2 else { return t }
        return t.reshaped(to: [t.shape[0]] + [Int](repeating: 1, count: rank - 2))
    }

    /// `BatchNormalization` with running statistics: `(x - mean) / √(var + ε) · scale + bias`.
    static func batchNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        if node.opset >= 14, try node.int("training_mode", default: 0) != 0 {
            throw node.error(
                "training-mode BatchNormalization (batch statistics) is not supported", .unsupportedOperators)
        }
        let x = try node.tensor(0)
        let y = x.batchNormalized(
            mean: try node.tensor(3), variance: try node.tensor(4), scale: try node.tensor(1), offset: try node.tensor(2),
            epsilon: try node.float("epsilon", default: 1e-5))
        return [try node.output(y, try node.type(0))]
    }

    static func instanceNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard x.rank >= 3 else { throw node.error("needs [N, C, spatial...], not \(describe(x.shape))") }
        let y = x.instanceNormalized(
            scale: try node.tensor(1), offset: try node.tensor(2), epsilon: try node.float("epsilon", default: 1e-5))
        return [try node.output(y, try node.type(0))]
    }

    /// `GroupNormalization`: channels in `num_groups` groups, each standardized over its channels
    /// and spatial axes; scale and bias per channel (opset 21) or per group (opset 18).
    static func groupNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard x.rank >= 2, let groups = try node.int("num_groups"), groups > 0, x.shape[1] % groups == 0 else {
            throw node.error("needs [N, C, ...] with C divisible by num_groups")
        }
        let epsilon = try node.float("epsilon", default: 1e-5)
        let channels = x.shape[1]
        let grouped = x.reshaped(to: [x.shape[0], groups, x.scalarCount / Swift.max(x.shape[0] * groups, 1)])
        var y = grouped.standardized(alongAxes: [2], epsilon: epsilon).reshaped(to: x.shape)
        func channelwise(_ t: Tensor) -> Tensor {
            guard t.rank == 1, t.shape[0] == groups, groups != channels else { return perChannel(t, rank: x.rank) }
            let picks = Tensor(shape: [channels], scalars: (0..<channels).map { Int32($0 / (channels / groups)) })
            return perChannel(t.gathering(atIndices: picks, alongAxis: 0), rank: x.rank)
        }
        y = Tensor.binary(.multiply, y, channelwise(try node.tensor(1)), at: nil)
        y = Tensor.binary(.add, y, channelwise(try node.tensor(2)), at: nil)
        return [try node.output(y, try node.type(0))]
    }

    /// `RMSNormalization`: `x / √(mean(x²) + ε) · scale` over the axes from `axis` on.
    static func rmsNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        let axis = try axis(node, try node.int("axis", default: -1), rank: x.rank)
        let epsilon = try node.float("epsilon", default: 1e-5)
        let meanSquare = (x * x).mean(alongAxes: Array(axis..<x.rank), keepRank: true)
        let y = Tensor.binary(.multiply, x * (meanSquare + epsilon).rsqrt(), try node.tensor(1), at: nil)
        return [try node.output(y, try node.type(0))]
    }

    /// `LRN` across channels: `x / (bias + α/size · Σ x²)^β` over a window of `size` channels.
    static func localResponseNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        guard x.rank >= 3, let size = try node.int("size"), size > 0, size <= 2 * x.shape[1] + 1 else {
            throw node.error("needs [N, C, ...] and a positive size")
        }
        let y = x.localResponseNormalized(
            size: size, alpha: try node.float("alpha", default: 1e-4), beta: try node.float("beta", default: 0.75),
            bias: try node.float("bias", default: 1))
        return [try node.output(y, try node.type(0))]
    }
}

extension Tensor {
    /// Local response normalization across channels (axis 1 of `[N, C, ...]`):
    /// `x / (bias + alpha / size · Σ x²)^beta`, the sum over `size` channels centred on each
    /// (ONNX's `LRN`, MIL's `local_response_norm`).
    func localResponseNormalized(size: Int, alpha: Float, beta: Float, bias: Float) -> Tensor {
        let before = (size - 1) / 2
        let after = size - 1 - before
        var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: rank)
        sizes[1] = (before, after)
        let padded = (self * self).padded(forSizes: sizes, with: 0)
        var total: Tensor?
        for offset in 0..<size {
            let window = padded.slice(alongAxis: 1, start: offset, count: shape[1])
            total = total.map { $0 + window } ?? window
        }
        guard let total else { return self }
        return self / (total * (alpha / Float(size)) + bias).pow(beta)
    }
}
