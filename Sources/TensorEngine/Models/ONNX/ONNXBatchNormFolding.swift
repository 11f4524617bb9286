/// Inference-time `BatchNormalization` after a `Conv` folded into the convolution's weights, as
/// onnxruntime and every inference engine do: `BN(conv(x, W) + B) = conv(x, W·s) + (B - mean)·s +
/// β` with `s = γ / √(var + ε)` per output channel. The folded weights are computed once per
/// prepared prediction (the prepared plan keeps them), and the convolution's result is not
/// written and read again by a separate normalization.
enum ONNXBatchNormFolding {
    /// The `Conv` nodes (by position in the sorted nodes) whose result only a
    /// `BatchNormalization` reads, with that node's position, when the weights, the bias and the
    /// normalization's parameters are all static (initializers, or computed from them alone).
    static func pairs(
        _ nodes: [ONNXNodeProto], initializers: Set<String>, graphOutputs: Set<String>
    ) -> [Int: Int] {
        var readers: [String: [Int]] = [:]
        for (index, node) in nodes.enumerated() {
            for input in node.inputs where !input.isEmpty { readers[input, default: []].append(index) }
        }
        // Values known without the inputs: initializers, and what nodes compute from them alone
        // (ConstantOfShape weights); random generators are not.
        var isStatic = initializers
        for node in nodes where !node.opType.hasPrefix("Random") && node.domain.isEmpty {
            if node.inputs.allSatisfy({ $0.isEmpty || isStatic.contains($0) }) {
                isStatic.formUnion(node.outputs.filter { !$0.isEmpty })
            }
        }
        var pairs: [Int: Int] = [:]
        for (index, node) in nodes.enumerated() where node.opType == "Conv" && node.domain.isEmpty {
            guard let output = node.outputs.first, !graphOutputs.contains(output),
                let readersOfOutput = readers[output], readersOfOutput.count == 1,
                node.inputs.count >= 2, node.inputs.dropFirst().allSatisfy({ $0.isEmpty || isStatic.contains($0) })
            else { continue }
            let reader = readersOfOutput[0]
            let normalization = nodes[reader]
            guard normalization.opType == "BatchNormalization", normalization.domain.isEmpty,
                normalization.inputs.first == output, normalization.inputs.count == 5,
                normalization.inputs.dropFirst().allSatisfy(isStatic.contains),
                normalization.outputs.count == 1 || normalization.outputs.dropFirst().allSatisfy(\.isEmpty)
            else { continue }
            pairs[index] = reader
        }
        return pairs
    }

    /// The convolution with the normalization folded in, under the normalization's output (the
    /// normalization's context has no operand 0: the convolution's result is never made).
    static func lower(
        _ conv: ONNXNodeContext, _ normalization: ONNXNodeContext
    ) throws(ModelError) -> [ONNXValue] {
        if normalization.opset >= 14, try normalization.int("training_mode", default: 0) != 0 {
            throw normalization.error(
                "training-mode BatchNormalization (batch statistics) is not supported", .unsupportedOperators)
        }
        if normalization.opset < 7, try normalization.int("spatial", default: 1) != 1 {
            throw normalization.error("BatchNormalization with spatial = 0 is not supported", .unsupportedOperators)
        }
        let weight = try conv.tensor(1)
        let channels = weight.shape.first ?? 0
        let epsilon = try normalization.float("epsilon", default: 1e-5)
        let (gamma, beta, mean, variance) = try (
            normalization.tensor(1), normalization.tensor(2), normalization.tensor(3), normalization.tensor(4)
        )
        guard [gamma, beta, mean, variance].allSatisfy({ $0.shape == [channels] }) else {
            throw normalization.error("needs parameters of one value per channel ([\(channels)])")
        }
        let scale = gamma * (variance + epsilon).rsqrt()
        let spatial = [Int](repeating: 1, count: Swift.max(weight.rank - 1, 0))
        let folded = weight * scale.reshaped(to: [channels] + spatial)
        let bias = conv.hasInput(2) ? try conv.tensor(2) : Tensor(zerosOf: weight.dtype, shape: [channels])
        let shift = (bias - mean) * scale + beta
        do {
            try Tensor.evaluateNow([folded, shift])
        } catch {
            throw normalization.error("cannot fold into the convolution: \(error.message)")
        }
        return try ONNXOperators.conv(conv, weight: folded, bias: shift)
    }
}
