/// An `Add` (or two-operand `Sum`) of a `Conv`'s result and a shortcut of the same shape fused
/// into the convolution, as onnxruntime fuses them: the convolution adds the shortcut to its
/// results as it writes them (``ConvolutionGeometry/addsResidual``), and no separate pass reads
/// them again. Every residual block of a ResNet ends `Conv → BatchNormalization → Add → Relu`,
/// which becomes one operation with ``ONNXBatchNormFolding`` and ``ONNXActivationFusion``.
/// A projection (`MatMul → Add` of a bias, ``ONNXBiasFusion``) takes its shortcut the same way:
/// every encoder layer of a transformer adds its input back to its two output projections.
enum ONNXResidualFusion {
    /// A sum fused into a convolution: which of its two operands is the convolution's result, and
    /// the `Conv` node (its position in the sorted nodes) that computes it.
    struct Pair {
        let convolutionOperand: Int
        let convolution: Int
    }

    /// The `Add` and two-operand `Sum` nodes (by position in the sorted nodes) one of whose
    /// operands is a `Conv`'s result, or the result of a `BatchNormalization` folded into one
    /// (`foldedConvolutions`: the normalization's position to the convolution's), that only they
    /// read and that is no graph output.
    static func pairs(
        _ nodes: [ONNXNodeProto], graphOutputs: Set<String>, foldedConvolutions: [Int: Int]
    ) -> [Int: Pair] {
        let uses = ONNXValueUses(nodes)
        var pairs: [Int: Pair] = [:]
        for (index, node) in nodes.enumerated() where node.domain.isEmpty && ["Add", "Sum"].contains(node.opType) {
            guard node.inputs.count == 2 else { continue }
            for (position, input) in node.inputs.enumerated() {
                if let convolution = uses.soleConvolution(
                    of: input, in: nodes, graphOutputs: graphOutputs, convolutionResults: foldedConvolutions)
                {
                    pairs[index] = Pair(convolutionOperand: position, convolution: convolution)
                    break
                }
            }
        }
        return pairs
    }

    /// The sum as the convolution that is its operand, recorded again with the other operand as
    /// its residual (``Tensor/fusingResidual(_:)``); `nil` when that operand is not of the
    /// convolution's shape and type, or the convolution is not one the engine extends: the sum is
    /// then lowered on its own.
    static func lower(_ sum: ONNXNodeContext, _ pair: Pair) throws(ModelError) -> [ONNXValue]? {
        guard case .tensor(let convolution, let type) = try sum.value(pair.convolutionOperand),
            let fused = convolution.fusingResidual(try sum.tensor(1 - pair.convolutionOperand))
        else { return nil }
        return [try sum.output(fused, type)]
    }
}
