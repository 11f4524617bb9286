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
        guard bias.error == nil, let (product, restored) = recording(of: .matmul) else { return nil }
        let shape = product.signature.shape
        guard product.inputs.count == 2, shape.count == 2,
            restored?.last ?? shape[1] == shape[1], bias.dtype == dtype, bias.rank >= 1, bias.rank <= rank,
            bias.shape.last == shape[1], bias.shape.dropLast().allSatisfy({ $0 == 1 })
        else { return nil }
        let column = bias.rank == 1 ? bias : bias.reshaped(to: [shape[1]])
        let operands = [Tensor(node: product.inputs[0]), Tensor(node: product.inputs[1]), column]
        let fused = Tensor.record(.linear, operands, at: product.location)
        return restored.map { fused.reshaped(to: $0) } ?? fused
    }
}

extension Tensor {
    /// This `linear` op's result (or one reshaped back to more axes, as ``addingBias(_:)``
    /// records it) recorded again with `activation` as its epilogue: the kernels apply it to each
    /// piece of the result as they finish it, after the bias, and no separate pass reads the
    /// product back. `nil` unless this is such a result, not yet computed and without an
    /// activation of its own; the activation is then recorded apart.
    ///
    /// As with ``addingBias(_:)``, the plain `linear` op is not recorded again, so a caller fuses
    /// only a result that nothing else reads (the ONNX importer checks its graph first,
    /// ``ONNXLinearActivationFusion``).
    package func fusingActivation(_ activation: LinearActivation) -> Tensor? {
        guard let (linear, restored) = recording(of: .linear), linear.op.linearActivation == nil,
            linear.signature.scalarType == .float32 || linear.signature.scalarType == .float16
        else { return nil }
        let fused = Tensor.record(
            .linear(activation: activation), linear.inputs.map(Tensor.init(node:)), at: linear.location)
        return restored.map { fused.reshaped(to: $0) } ?? fused
    }
}

extension Tensor {
    /// This `linear` op's result (or one reshaped back to more axes) recorded again with
    /// `residual` as its fourth operand, added after the bias as each piece of the product is
    /// finished: a transformer's residual connection, `x · W + b + shortcut`, without a pass of
    /// its own. `nil` unless this is such a result, not yet computed and without a residual or an
    /// activation (which would come before the sum), and `residual` is of its shape and type.
    /// Callers fuse only a result nothing else reads, as with ``addingBias(_:)``.
    package func linearFusingResidual(_ residual: Tensor) -> Tensor? {
        guard residual.error == nil, let signature = node?.signature, residual.node?.signature == signature,
            let (linear, restored) = recording(of: .linear), linear.inputs.count == 3,
            linear.op.linearActivation == nil, linear.signature.scalarType == .float32 || linear.signature.scalarType == .float16
        else { return nil }
        let shortcut = restored == nil ? residual : residual.reshaped(to: linear.signature.shape)
        let fused = Tensor.record(.linear, linear.inputs.map(Tensor.init(node:)) + [shortcut], at: linear.location)
        return restored.map { fused.reshaped(to: $0) } ?? fused
    }
}

extension Tensor {
    /// The not yet computed op of `kind` whose result this is: this tensor's own node, or the node
    /// under a reshape of it (how ``matmul(_:file:line:)`` records a batch of rows times a matrix,
    /// and how the fusions above record theirs), with the shape a re-recorded op is reshaped back to.
    fileprivate func recording(of kind: OpKind) -> (node: Node, restored: [Int]?)? {
        guard error == nil, let node, node.storedResult == nil else { return nil }
        if node.op.kind == .reshape, let inner = node.inputs.first, inner.op.kind == kind, inner.storedResult == nil {
            return (inner, node.signature.shape)
        }
        return node.op.kind == kind ? (node, nil) : nil
    }
}
