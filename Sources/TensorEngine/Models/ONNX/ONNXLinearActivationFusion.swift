/// An activation after a projection (`MatMul → Add` of a bias, fused into one `linear` op by
/// ``ONNXBiasFusion``, or a `Gemm` with a bias per column) fused into the product's epilogue,
/// as onnxruntime fuses `BiasGelu`: the product applies it to each piece of its result as it
/// finishes it, after the bias, and no separate pass reads the result again. The activations:
/// `Relu`, `Gelu` (opset 20), and GELU written out as PyTorch exports it, `Div(x, √2) → Erf →
/// Add(1) → Mul(x) → Mul(0.5)`, which the engine records as one `gelu` op
/// (``Tensor/recognizedGELU(_:_:at:)``).
enum ONNXLinearActivationFusion {
    /// The nodes (by position in the sorted nodes) whose result is an activation of a projection's
    /// result that only the activation's own nodes read and that is no graph output; each with
    /// the position of the projection's `MatMul` or `Gemm`. `projections` maps the position of each
    /// node whose result is a projection's (a fused bias `Add`, a `Gemm`) to that position.
    static func activations(
        _ nodes: [ONNXNodeProto], graphOutputs: Set<String>, projections: [Int: Int]
    ) -> [Int: Int] {
        let uses = ONNXValueUses(nodes)
        var found: [Int: Int] = [:]
        for (index, node) in nodes.enumerated() where node.domain.isEmpty {
            let operand: String?
            let readers: Int
            switch node.opType {
            case "Relu", "Gelu": (operand, readers) = (node.inputs.first, 1)
            case "Mul": (operand, readers) = (writtenOutGELUOperand(node, nodes, uses, graphOutputs), 2)
            default: (operand, readers) = (nil, 0)
            }
            guard let operand, !graphOutputs.contains(operand), uses.readers[operand] == readers,
                let producer = uses.producer[operand], let product = projections[producer]
            else { continue }
            found[index] = product
        }
        return found
    }

    /// The activation's result recorded again as the projection with the activation as its
    /// epilogue (``Tensor/fusingActivation(_:)``); `nil` when what the activation's importer
    /// recorded is not a ReLU or GELU of a `linear` op's result: it then stands as recorded.
    static func fused(_ results: [ONNXValue]) -> [ONNXValue]? {
        guard results.count == 1, case .tensor(let result, let type) = results[0], let node = result.node,
            node.inputs.count == 1
        else { return nil }
        let activation: LinearActivation
        if node.op.kind == .relu {
            activation = .relu
        } else if node.op.kind == .gelu {
            activation = .gelu(node.op.geluApproximation)
        } else {
            return nil
        }
        guard let fused = Tensor(node: node.inputs[0]).fusingActivation(activation) else { return nil }
        return [.tensor(fused, type)]
    }

    /// `x` of a written-out GELU whose last product is `mul`: `Mul(Mul(x, s), c)` or any
    /// grouping of the three factors, `s = Add(Erf(Div or Mul(x, c')), c'')`, each inner value
    /// read once, by the pattern. The constants are checked when the engine records it.
    private static func writtenOutGELUOperand(
        _ mul: ONNXNodeProto, _ nodes: [ONNXNodeProto], _ uses: ONNXValueUses, _ graphOutputs: Set<String>
    ) -> String? {
        guard mul.inputs.count == 2 else { return nil }
        func sole(_ value: String, _ opType: String) -> ONNXNodeProto? {
            guard let index = uses.soleProducer(of: value, graphOutputs: graphOutputs),
                nodes[index].opType == opType, nodes[index].domain.isEmpty
            else { return nil }
            return nodes[index]
        }
        // The three factors: the operands of the inner product and the other operand.
        var factors: [String] = []
        for (position, value) in mul.inputs.enumerated() {
            guard let inner = sole(value, "Mul"), inner.inputs.count == 2 else { continue }
            factors = inner.inputs + [mul.inputs[1 - position]]
            break
        }
        for (position, value) in factors.enumerated() {
            guard let add = sole(value, "Add"), add.inputs.count == 2 else { continue }
            for term in add.inputs {
                guard let erf = sole(term, "Erf"), let scaledValue = erf.inputs.first,
                    let scaled = sole(scaledValue, "Div") ?? sole(scaledValue, "Mul"), scaled.inputs.count == 2
                else { continue }
                let others = factors.enumerated().filter { $0.offset != position }.map(\.element)
                if let x = scaled.inputs.first(where: { others.contains($0) }) { return x }
            }
        }
        return nil
    }
}
