extension Tensor {
    /// The matrix product, with NumPy's `matmul` rules: vector·vector gives a scalar,
    /// matrix·vector a vector, and leading batch dimensions broadcast (without copies).
    ///
    /// A batch of rows times one matrix (`[..., m, k] · [k, n]`, every projection of a
    /// transformer) runs as one 2-D product over all the rows when they lie in memory as one
    /// matrix: one large product instead of a batch of small ones against a broadcast matrix.
    /// Attention written out, `softmax(q·kᵀ · c + mask).matmul(v)`, is recorded as one
    /// attention op (see `scaledDotProductAttention`).
    public func matmul(_ other: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        let location = SourceLocation(file, line)
        if error != nil { return self }
        if other.error != nil { return other }
        if let attention = Tensor.recognizedAttention(probabilities: self, values: other, at: location) { return attention }
        let (a, b) = (shape, other.shape)
        if a.count > 2, b.count == 2, a[a.count - 1] == b[0], let node,
            let rows = Shape.elementCount(Array(a.dropLast())), node.layout.reshaped([rows, b[0]]) != nil
        {
            let product = reshaped(to: [rows, b[0]], file: file, line: line).matmul(other, file: file, line: line)
            return product.reshaped(to: a.dropLast() + [b[1]], file: file, line: line)
        }
        func mismatch() -> Tensor {
            Tensor(failed: TensorError(.shapeMismatch, op: "matmul", operandShapes: [a, b], message: "shapes \(describe(a)) and \(describe(b)) cannot be multiplied", location: location))
        }
        guard !a.isEmpty, !b.isEmpty else { return mismatch() }
        // Matrices, or stacks of them with the same batch axes: nothing to broadcast or reshape
        // (checked index by index: every product recorded passes here).
        let rank = a.count
        if rank >= 2, b.count == rank, a[rank - 1] == b[rank - 2], (0..<rank - 2).allSatisfy({ a[$0] == b[$0] }) {
            return Tensor.record(.matmul, [self, other], at: location)
        }
        let left = a.count == 1 ? expandingShape(at: 0, file: file, line: line) : self
        let right = b.count == 1 ? other.expandingShape(at: -1, file: file, line: line) : other
        let (la, rb) = (left.shape, right.shape)
        guard la[la.count - 1] == rb[rb.count - 2], let batch = Op.broadcastShape(Array(la.dropLast(2)), Array(rb.dropLast(2))) else {
            return mismatch()
        }
        let product = Tensor.record(.matmul, [
            left.broadcastIfNeeded(to: batch + la.suffix(2), at: location),
            right.broadcastIfNeeded(to: batch + rb.suffix(2), at: location),
        ], at: location)
        var result = batch + [la[la.count - 2], rb[rb.count - 1]]
        if b.count == 1 { result.removeLast() }
        if a.count == 1 { result.remove(at: result.count - (b.count == 1 ? 1 : 2)) }
        return result == product.shape ? product : product.reshaped(to: result, file: file, line: line)
    }

    /// `exp(x) / sum(exp(x))` along an axis, computed stably (the maximum is subtracted first).
    public func softmax(alongAxis axis: Int = -1, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("softmax", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.softmax, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// `log(softmax(x))` along an axis, computed stably.
    public func logSoftmax(alongAxis axis: Int = -1, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        Tensor.record("logSoftmax", [self], at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            .alongAxis(.logSoftmax, try Tensor.normalize(axis: axis, rank: signatures[0].shape.count))
        }
    }

    /// Layer normalization along an axis: `(x - mean) / sqrt(variance + epsilon) * scale + bias`,
    /// with the population variance. `scale` and `bias` broadcast against the result.
    public func layerNorm(
        alongAxis axis: Int = -1, epsilon: Float = 1e-5, scale: Tensor? = nil, bias: Tensor? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        let location = SourceLocation(file, line)
        for parameter in [scale, bias].compactMap({ $0 }) {
            if parameter.error != nil { return parameter }
            guard Op.broadcastShape(shape, parameter.shape) == shape || error != nil else {
                return Tensor(failed: TensorError(.shapeMismatch, op: "layerNorm", operandShapes: [shape, parameter.shape], message: "scale or bias of shape \(describe(parameter.shape)) does not broadcast to \(describe(shape))", location: location))
            }
        }
        // A scale and bias that vary along the axis only are applied by the op itself, as it
        // writes each line; others are separate products and sums.
        let affine = scale.flatMap { scale in bias.flatMap { bias in alongAxis(axis, scale, bias) } }
        let operands = [self] + (affine ?? [])
        var result = Tensor.record("layerNorm", operands, at: location) { signatures throws(RuleViolation) in
            guard epsilon >= 0, epsilon.isFinite else { throw RuleViolation(.invalidArgument, "epsilon \(epsilon) must be finite and non-negative") }
            return .layerNorm(axis: try Tensor.normalize(axis: axis, rank: signatures[0].shape.count), epsilon: epsilon)
        }
        guard affine == nil else { return result }
        if let scale { result = Tensor.binary(.multiply, result, scale, at: location) }
        if let bias { result = Tensor.binary(.add, result, bias, at: location) }
        return result
    }

    /// `scale` and `bias` as vectors of the axis's extent, when they are of this tensor's type and
    /// vary along that axis alone (ones everywhere else in their broadcast shapes); else `nil`.
    private func alongAxis(_ axis: Int, _ scale: Tensor, _ bias: Tensor) -> [Tensor]? {
        guard error == nil, rank > 0, (-rank..<rank).contains(axis) else { return nil }
        let axis = axis < 0 ? axis + rank : axis
        let extent = shape[axis]
        var vectors: [Tensor] = []
        for parameter in [scale, bias] {
            // The parameter's axis that lines up with `axis` when broadcast from the right.
            let aligned = parameter.rank - (rank - axis)
            guard parameter.dtype == dtype, parameter.rank <= rank, aligned >= 0,
                parameter.shape[aligned] == extent,
                parameter.shape.indices.allSatisfy({ $0 == aligned || parameter.shape[$0] == 1 })
            else { return nil }
            vectors.append(parameter.rank == 1 ? parameter : parameter.reshaped(to: [extent]))
        }
        return vectors
    }
}
