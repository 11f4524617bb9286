extension Tensor {
    /// Attention written out op by op, `softmax(Q·Kᵀ · c + M) · V` (or `/ c`, with or without the
    /// mask), recognised when its last product is recorded, and recorded as the one
    /// ``scaledDotProductAttention(query:key:value:mask:scale:causal:file:line:)`` op instead.
    ///
    /// Every front end writes attention this way: ONNX exports (`MatMul → Div → Add → Softmax →
    /// MatMul`), Core ML programs and code written against MLTensor. The nodes of the written-out
    /// form stay in the graph, and are computed only if something else reads them. `nil` when the
    /// shape differs in any way (a softmax along another axis, a scale that is not a one-element
    /// constant, operands broadcast for the products, other scalar types).
    static func recognizedAttention(probabilities: Tensor, values: Tensor, at location: SourceLocation?) -> Tensor? {
        guard let softmax = probabilities.node, let value = values.node, softmax.op.kind == .softmax else { return nil }
        let (p, v) = (softmax.signature, value.signature)
        let rank = p.shape.count
        guard rank >= 2, v.shape.count == rank, softmax.op.axis == rank - 1, p.scalarType == v.scalarType,
            p.scalarType == .float32 || p.scalarType == .float16,
            p.shape.dropLast(2) == v.shape.dropLast(2), p.shape[rank - 1] == v.shape[rank - 2]
        else { return nil }
        // Scores, then an optional additive mask on either side.
        var scores = softmax.inputs[0]
        var mask: Node?
        if scores.op.kind == .add {
            let (left, right) = (scores.inputs[0], scores.inputs[1])
            if scaledProduct(left) != nil {
                (scores, mask) = (left, unbroadcast(right))
            } else if scaledProduct(right) != nil {
                (scores, mask) = (right, unbroadcast(left))
            } else {
                return nil
            }
        }
        guard let (product, scale) = scaledProduct(scores) else { return nil }
        let (query, keyTransposed) = (product.inputs[0], product.inputs[1])
        guard query.op.kind != .broadcast, keyTransposed.op.kind != .broadcast else { return nil }
        var swapLast = Array(0..<rank)
        swapLast.swapAt(rank - 1, rank - 2)
        let key = Tensor.record(.permute(swapLast), [Tensor(node: keyTransposed)], at: location)
        let fused = attention(
            Tensor(node: query), key, values, mask: mask.map(Tensor.init(node:)), scale: scale, causal: false, at: location)
        return fused.error == nil && fused.shape == probabilities.shape.dropLast() + [v.shape[rank - 1]] ? fused : nil
    }

    /// A matrix product, times or divided by a one-element constant (or neither): the product's
    /// node and the factor.
    private static func scaledProduct(_ node: Node) -> (product: Node, scale: Float)? {
        if node.op.kind == .matmul { return (node, 1) }
        guard node.op.kind == .multiply || node.op.kind == .divide else { return nil }
        let (left, right) = (node.inputs[0], node.inputs[1])
        if right.op.kind == .matmul, let factor = scalarConstant(left), node.op.kind == .multiply {
            return (right, Float(factor))
        }
        guard left.op.kind == .matmul, let factor = scalarConstant(right) else { return nil }
        let scale = node.op.kind == .multiply ? factor : 1 / factor
        return scale.isFinite ? (left, Float(scale)) : nil
    }

    /// The value of a one-element constant, seen through a broadcast.
    static func scalarConstant(_ node: Node) -> Double? {
        let constant = unbroadcast(node)
        guard constant.op.kind == .constant, constant.signature.elementCount == 1,
            let stored = constant.storedResult, let buffer = stored.buffer as? HostBuffer
        else { return nil }
        let offset = stored.layout.offset
        switch stored.scalarType {
        case .float32: return Double(buffer.elements(as: Float.self)[offset])
        case .float16: return Double(buffer.elements(as: Float16.self)[offset])
        case .float64: return buffer.elements(as: Double.self)[offset]
        case .int32, .int64, .bool: return nil
        }
    }

    /// The operand of a broadcast, or the node itself.
    static func unbroadcast(_ node: Node) -> Node {
        node.op.kind == .broadcast ? node.inputs[0] : node
    }
}
