/// A `Relu` or `Clip` after a `Conv` fused into the convolution's epilogue, as onnxruntime fuses
/// them: the convolution bounds its results as it writes them (``OutputClamp``), and no separate
/// pass reads them again. The convolution may have a `BatchNormalization` folded into it first
/// (``ONNXBatchNormFolding``): `Conv → BatchNormalization → Relu` becomes one operation.
enum ONNXActivationFusion {
    /// The activation nodes (by position in the sorted nodes) whose operand is a `Conv`'s result,
    /// or the result of a node that becomes one (`foldedConvolutions`: the position of a
    /// `BatchNormalization` folded into a convolution or of a sum fused into one, to the
    /// convolution's), that only they read and that is no graph output; each with the
    /// convolution's position.
    static func pairs(
        _ nodes: [ONNXNodeProto], graphOutputs: Set<String>, foldedConvolutions: [Int: Int]
    ) -> [Int: Int] {
        let uses = ONNXValueUses(nodes)
        var pairs: [Int: Int] = [:]
        for (index, node) in nodes.enumerated() where node.domain.isEmpty && ["Relu", "Clip"].contains(node.opType) {
            guard let input = node.inputs.first else { continue }
            pairs[index] = uses.soleConvolution(
                of: input, in: nodes, graphOutputs: graphOutputs, convolutionResults: foldedConvolutions)
        }
        return pairs
    }

    /// The activation's result as the convolution that is its operand, recorded again with the
    /// activation's bounds; `nil` when the bounds are not constants or the operand is not a
    /// convolution the engine bounds (``Tensor/fusingClamp(_:)``): the activation is then
    /// lowered on its own.
    static func lower(_ activation: ONNXNodeContext) throws(ModelError) -> [ONNXValue]? {
        guard case .tensor(let convolution, let type) = try activation.value(0),
            let clamp = try bounds(activation, type), let fused = convolution.fusingClamp(clamp)
        else { return nil }
        return [try activation.output(fused, type)]
    }

    /// The bounds `Relu` and `Clip` apply, each rounded to the operand's precision as the
    /// unfused `Clip` compares in it; `nil` for a `Clip` whose bounds are computed at run time.
    private static func bounds(_ node: ONNXNodeContext, _ type: ONNXDataType) throws(ModelError) -> OutputClamp? {
        func rounded(_ value: Double) -> Float {
            type == .float16 ? Float(Float16(Float(value))) : Float(value)
        }
        switch node.node.opType {
        case "Relu":
            return .relu
        case "Clip" where node.opset < 11:
            let low = try node.float("min", default: -.greatestFiniteMagnitude)
            let high = try node.float("max", default: .greatestFiniteMagnitude)
            return OutputClamp(lower: rounded(Double(low)), upper: rounded(Double(high)))
        default:
            var limits: [Float] = [-.infinity, .infinity]
            for position in 1...2 where node.hasInput(position) {
                guard case .constant(let constant) = try node.value(position), constant.count == 1,
                    let value = constant.reals.first
                else { return nil }
                limits[position - 1] = rounded(value)
            }
            return OutputClamp(lower: limits[0], upper: limits[1])
        }
    }
}
