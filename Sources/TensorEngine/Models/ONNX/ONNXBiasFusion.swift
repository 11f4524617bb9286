/// An `Add` of a bias to a `MatMul`'s result fused into one `linear` op, as onnxruntime fuses
/// them: the product adds the bias to each piece of its result as it finishes it, and no
/// separate pass reads the product back. Every projection of an exported transformer is a
/// `MatMul` followed by such an `Add`.
enum ONNXBiasFusion {
    /// An `Add` fused into a product: which of its operands is the product, and the `MatMul`
    /// node (its position in the sorted nodes) that computes it.
    struct Pair {
        let productOperand: Int
        let product: Int
    }

    /// The `Add` nodes (by position in the sorted nodes) one of whose two operands is a `MatMul`'s
    /// result that only they read and that is no graph output.
    static func pairs(_ nodes: [ONNXNodeProto], graphOutputs: Set<String>) -> [Int: Pair] {
        let uses = ONNXValueUses(nodes)
        var pairs: [Int: Pair] = [:]
        for (index, node) in nodes.enumerated() where node.domain.isEmpty && node.opType == "Add" {
            guard node.inputs.count == 2 else { continue }
            for (position, input) in node.inputs.enumerated() {
                guard let source = uses.soleProducer(of: input, graphOutputs: graphOutputs),
                    nodes[source].opType == "MatMul", nodes[source].domain.isEmpty
                else { continue }
                pairs[index] = Pair(productOperand: position, product: source)
                break
            }
        }
        return pairs
    }

    /// The sum as the product that is its operand, recorded again with the other operand as its
    /// bias (``Tensor/addingBias(_:)``); `nil` when that operand is not one value per column of a
    /// 2-D product: the `Add` is then lowered on its own.
    static func lower(_ add: ONNXNodeContext, _ pair: Pair) throws(ModelError) -> [ONNXValue]? {
        guard case .tensor(let product, let type) = try add.value(pair.productOperand),
            let fused = product.addingBias(try add.tensor(1 - pair.productOperand))
        else { return nil }
        return [try add.output(fused, type)]
    }
}
