/// ONNX's losses and linear quantization: `NegativeLogLikelihoodLoss`, `SoftmaxCrossEntropyLoss`,
/// `QuantizeLinear`, `DequantizeLinear`, composed from table ops.
extension ONNXOperators {
    static let losses: [String: ONNXOperator] = [
        "NegativeLogLikelihoodLoss": ONNXOperator(since: 12) { node throws(ModelError) in
            let loss = try negativeLogLikelihood(
                node, logProbabilities: try node.tensor(0), targetInput: 1, weightInput: 2)
            return [try node.output(loss, try node.type(0))]
        },
        "SoftmaxCrossEntropyLoss": ONNXOperator(since: 12) { node throws(ModelError) in
            let scores = try node.tensor(0)
            guard scores.rank >= 2 else { throw node.error("scores need [N, C, ...]") }
            let logProbabilities = scores.logSoftmax(alongAxis: 1)
            let loss = try negativeLogLikelihood(
                node, logProbabilities: logProbabilities, targetInput: 1, weightInput: 2)
            return [try node.output(loss, try node.type(0)), try node.output(logProbabilities, try node.type(0))]
        },
        "QuantizeLinear": ONNXOperator(since: 10, lower: quantizeLinear),
        "DequantizeLinear": ONNXOperator(since: 10, lower: dequantizeLinear),
    ]

    /// `-log p[n, target[n, ...], ...] · weight[target]`, reduced as `reduction` says (`mean`
    /// divides by the summed weights of the targets not ignored).
    private static func negativeLogLikelihood(
        _ node: ONNXNodeContext, logProbabilities x: Tensor, targetInput: Int, weightInput: Int
    ) throws(ModelError) -> Tensor {
        guard x.rank >= 2 else { throw node.error("the input needs [N, C, ...]") }
        var target = try node.tensor(targetInput)
        target = target.dtype == .int32 ? target : target.converted(to: .int32)
        guard target.shape == [x.shape[0]] + x.shape.dropFirst(2) else {
            throw node.error("target \(describe(target.shape)) does not match input \(describe(x.shape))")
        }
        let classes = x.shape[1]
        let ignored = try node.int("ignore_index")
        // One-hot of the target along axis 1: out-of-range (ignored) targets pick nothing.
        var hot = Tensor.binary(
            .equal, target.expandingShape(at: 1), Tensor.iota(classes, alongAxis: 1, rank: x.rank), at: nil)
        var valid = Tensor.scalar(1, .bool).broadcastIfNeeded(to: target.shape, at: nil)
        if let ignored {
            valid = Tensor.binary(.notEqual, target, Tensor.scalar(Double(ignored), .int32), at: nil)
            hot = Tensor.binary(.logicalAnd, hot, valid.expandingShape(at: 1), at: nil)
        }
        let mask = hot.converted(to: x.dtype)
        let picked = (x * mask).sum(alongAxes: [1])
        var weights = valid.converted(to: x.dtype)
        if node.hasInput(weightInput) {
            let classWeights = try node.tensor(weightInput).reshaped(
                to: [1, classes] + [Int](repeating: 1, count: x.rank - 2))
            weights = Tensor.binary(.multiply, mask, classWeights, at: nil).sum(alongAxes: [1])
        }
        let loss = -(picked * weights)
        switch try node.string("reduction", default: "mean") {
        case "none": return loss
        case "sum": return loss.sum()
        case "mean": return loss.sum() / weights.sum()
        case let other: throw node.error("reduction '\(other)' is not none, sum or mean", .invalidModel)
        }
    }

    /// A per-tensor scale or zero point as it is; a per-axis one shaped to broadcast along `axis`.
    private static func alongAxis(_ node: ONNXNodeContext, _ parameter: Tensor, rank: Int) throws(ModelError) -> Tensor
    {
        guard parameter.rank == 1, parameter.scalarCount > 1 || rank > 0 else { return parameter }
        if parameter.scalarCount == 1 { return parameter.reshaped(to: []) }
        let axis = try axis(node, try node.int("axis", default: 1), rank: rank)
        return parameter.reshaped(to: (0..<rank).map { $0 == axis ? parameter.scalarCount : 1 })
    }

    /// The range an integer type saturates to.
    private static func saturationRange(_ type: ONNXDataType) -> (Double, Double)? {
        switch type.rawValue {
        case 2: (0, 255)
        case 3: (-128, 127)
        case 4: (0, 65535)
        case 5: (-32768, 32767)
        case 6: (-2_147_483_648, 2_147_483_647)
        default: nil
        }
    }

    /// `QuantizeLinear`: `saturate(round(x / scale) + zero_point)`, rounding half to even.
    static func quantizeLinear(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        if try node.int("block_size", default: 0) != 0 {
            throw node.error("blocked quantization is not supported", .unsupportedOperators)
        }
        let x = try node.tensor(0)
        let scale = try alongAxis(node, try node.tensor(1), rank: x.rank)
        var type = ONNXDataType.uint8
        if let number = try node.int("output_dtype"), number != 0 { type = try castTarget(node, number).0 }
        var shifted = Tensor.binary(.divide, x.converted(to: .float32), scale.converted(to: .float32), at: nil).round()
        if node.hasInput(2) {
            type = try node.type(2)
            shifted = Tensor.binary(
                .add, shifted, try alongAxis(node, try node.tensor(2), rank: x.rank).converted(to: .float32), at: nil)
        }
        guard let (low, high) = saturationRange(type) else {
            throw node.error("quantizing to \(type) is not supported", .unsupportedType)
        }
        let clamped = shifted.pointwiseMax(Float(low)).pointwiseMin(Float(high))
        return [try node.output(clamped.converted(to: .int32), type)]
    }

    /// `DequantizeLinear`: `(x - zero_point) · scale`.
    static func dequantizeLinear(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        if try node.int("block_size", default: 0) != 0 {
            throw node.error("blocked dequantization is not supported", .unsupportedOperators)
        }
        let x = try node.tensor(0)
        let scale = try alongAxis(node, try node.tensor(1), rank: x.rank)
        var value = x.converted(to: .float32)
        if node.hasInput(2) {
            value = Tensor.binary(
                .subtract, value, try alongAxis(node, try node.tensor(2), rank: x.rank).converted(to: .float32), at: nil
            )
        }
        let y = Tensor.binary(.multiply, value, scale.converted(to: .float32), at: nil)
        let type = try node.type(1)
        return [try node.output(scale.dtype == .float32 ? y : y.converted(to: scale.dtype), type)]
    }
}
