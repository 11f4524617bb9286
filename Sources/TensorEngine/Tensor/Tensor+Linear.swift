extension Tensor {
    /// This product's result with `bias` added along its last axis, recorded again as one `linear`
    /// op so that the kernels add the bias as they finish each piece of the product, instead of
    /// a separate pass reading the product back. `nil` when this is not the result of a 2-D
    /// product (or of one reshaped back to more axes, as ``matmul(_:file:line:)`` records a
    /// batch of rows times a matrix), or when `bias` is not one value per column (`[n]`, or
    /// `[1, ..., 1, n]` of no more axes than this).
    ///
    /// The product itself is not recorded again, so a caller fuses only a product that nothing
    /// else reads (the ONNX importer checks its graph first, ``ONNXBiasFusion``).
    func addingBias(_ bias: Tensor) -> Tensor? {
        guard error == nil, bias.error == nil, var product = node, product.storedResult == nil else { return nil }
        var restored: [Int]?
        if product.op.kind == .reshape, let inner = product.inputs.first, inner.op.kind == .matmul {
            restored = product.signature.shape
            product = inner
        }
        let shape = product.signature.shape
        guard product.op.kind == .matmul, product.storedResult == nil, product.inputs.count == 2, shape.count == 2,
            restored?.last ?? shape[1] == shape[1], bias.dtype == dtype, bias.rank >= 1, bias.rank <= rank,
            bias.shape.last == shape[1], bias.shape.dropLast().allSatisfy({ $0 == 1 })
        else { return nil }
        let column = bias.rank == 1 ? bias : bias.reshaped(to: [shape[1]])
        let operands = [Tensor(node: product.inputs[0]), Tensor(node: product.inputs[1]), column]
        let fused = Tensor.record(.linear, operands, at: product.location)
        return restored.map { fused.reshaped(to: $0) } ?? fused
    }
}
