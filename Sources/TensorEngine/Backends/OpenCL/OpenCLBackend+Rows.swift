// Reductions and line-wise ops: each works on the rows of a contiguous [rows, cols] matrix, made by
// moving the reduced (or line) axes last; results along a moved axis are copied back in place.
extension OpenCLBackend {
    /// The operand with `trailing` axes moved last, row-major: its buffer, offset, rows and columns.
    private func rows(_ value: Value, trailing axes: [Int], op: String) throws(TensorError) -> (OpenCLBuffer, Int32, rows: Int, cols: Int) {
        let kept = value.shape.indices.filter { !axes.contains($0) }
        let moved = value.with(value.layout.permuted(kept + axes))
        let cols = axes.reduce(1) { $0 * value.shape[$1] }
        let rows = kept.reduce(1) { $0 * value.shape[$1] }
        let (buffer, offset) = try contiguousData(moved, op: op)
        return (buffer, offset, rows, cols)
    }

    /// Sums, means, products and extremes along the op's axes, or the index of an extreme.
    func reduce(_ op: Op, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        guard case .reduction(let definition) = op.descriptor.semantics else {
            throw TensorError(.backendFailure, op: op.name, message: "not a reduction")
        }
        if definition.result == .index { return try indexOfExtreme(op, definition.monoid, input, output) }
        let (result, out) = try allocate(output, op: op.name)
        guard output.elementCount > 0 else { return result }
        let (source, offset, rows, cols) = try rows(input, trailing: op.axes, op: op.name)
        let group = rowGroupSize
        let combine = switch definition.monoid {
        case .sum: "OP_SUM"
        case .maximum: "OP_MAX"
        case .minimum: "OP_MIN"
        case .product: "OP_PRODUCT"
        }
        let mean = definition.result == .mean
        let operation = mean ? "OP_MEAN" : combine
        // Few long rows leave most compute units idle: split each row into chunks, then reduce the partials.
        let units = max(1, runtime.device.computeUnits) * 4
        let chunks = rows >= units ? 1 : min(max(1, cols / (group * 16)), max(1, units / rows) * 4)
        var final = BuildOptions(["WG": "\(group)", operation: "1"])
        final.output(output.scalarType)
        guard chunks > 1 else {
            final.input(input.scalarType)
            let kernel = try runtime.kernel(.reduceRows, family: .reduce, options: final)
            try runtime.launch(kernel, [.buffer(source), .int(offset), .int(Int32(cols)), .int(1), .int(Int32(cols)), .buffer(out), .float(Float(cols))],
                               global: [rows * group], local: [group])
            return result
        }
        let partialType: ScalarType = input.scalarType.isFloatingPoint ? .float32 : .int32
        let chunkLength = (cols + chunks - 1) / chunks
        var first = BuildOptions(["WG": "\(group)", combine: "1"])
        first.input(input.scalarType)
        first.output(partialType)
        let partials = try runtime.allocate(rows * chunks * 4, op: op.name)
        let stage1 = try runtime.kernel(.reduceRows, family: .reduce, options: first)
        try runtime.launch(stage1, [.buffer(source), .int(offset), .int(Int32(cols)), .int(Int32(chunks)), .int(Int32(chunkLength)), .buffer(partials), .float(1)],
                           global: [rows * chunks * group], local: [group])
        final.input(partialType)
        let stage2 = try runtime.kernel(.reduceRows, family: .reduce, options: final)
        try runtime.launch(stage2, [.buffer(partials), .int(0), .int(Int32(chunks)), .int(1), .int(Int32(chunks)), .buffer(out), .float(Float(cols))],
                           global: [rows * group], local: [group])
        return result
    }

    /// The first index of the extreme along the op's one axis.
    func indexOfExtreme(_ op: Op, _ monoid: ReductionMonoid, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, op: op.name)
        guard output.elementCount > 0 else { return result }
        let (source, offset, rows, cols) = try rows(input, trailing: op.axes, op: op.name)
        let group = rowGroupSize
        var options = BuildOptions(["WG": "\(group)", monoid == .maximum ? "ARG_MAX" : "ARG_MIN": "1"])
        options.input(input.scalarType)
        options.output(.int32)
        let kernel = try runtime.kernel(.argReduceRows, family: .reduce, options: options)
        try runtime.launch(kernel, [.buffer(source), .int(offset), .int(Int32(cols)), .buffer(out)], global: [rows * group], local: [group])
        return result
    }

    /// Softmax, log-softmax, layer norm and cumulative sums: one kernel over rows along `axis`.
    func lineOp(
        _ name: KernelName, family: KernelFamily, _ lineOp: Op, _ input: Value, _ output: TensorSignature,
        affine: (scale: Value, bias: Value)? = nil
    ) throws(TensorError) -> Value {
        let op = name.rawValue
        let (axis, epsilon) = (lineOp.axis, lineOp.epsilon)
        let (result, out) = try allocate(output, op: op)
        guard output.elementCount > 0 else { return result }
        let (source, offset, rows, cols) = try rows(input, trailing: [axis], op: op)
        let last = axis == input.shape.count - 1
        // Rows land in `out` directly when the axis is already last; else in a temporary, copied back.
        let order = input.shape.indices.filter { $0 != axis } + [axis]
        let target = last ? out : try runtime.allocate(output.byteCount, op: op)
        let group = rowGroupSize
        var options = BuildOptions(affine == nil ? ["WG": "\(group)"] : ["WG": "\(group)", "AFFINE": "1"])
        options.input(input.scalarType)
        options.output(output.scalarType)
        let kernel = try runtime.kernel(name, family: family, options: options)
        // A layer norm's scale and bias: contiguous, each with its offset.
        var parameters: [KernelArgument] = []
        if let affine {
            for parameter in [affine.scale, affine.bias] {
                let (buffer, offset, _, _) = try self.rows(parameter, trailing: [0], op: op)
                parameters += [.buffer(buffer), .int(offset)]
            }
        }
        switch name {
        case .cumulativeSumRows, .cumulativeProductRows:
            try runtime.launch1D(kernel, [.buffer(source), .int(offset), .int(Int32(rows)), .int(Int32(cols)), .buffer(target)], count: rows, group: 16)
        case .layerNormRows:
            let arguments: [KernelArgument] = [.buffer(source), .int(offset), .int(Int32(cols)), .float(epsilon)]
            try runtime.launch(kernel, arguments + parameters + [.buffer(target)], global: [rows * group], local: [group])
        case .softmaxRows, .logSoftmaxRows, .stridedCopy, .transposeTiled, .fill, .reduceRows, .argReduceRows, .topKRows,
            .gather, .scatter, .matmulTiled, .matmulBlocked, .matmulPackB, .elementwise, .elementwise8, .convolutionDirect,
            .im2col, .convolutionEpilogue, .maxPool, .averagePool:
            try runtime.launch(kernel, [.buffer(source), .int(offset), .int(Int32(cols)), .buffer(target)], global: [rows * group], local: [group])
        }
        if !last {
            let moved = Value(buffer: target, layout: Layout(contiguous: order.map { output.shape[$0] }), scalarType: output.scalarType)
            try copy(moved, into: out, layout: result.layout.permuted(order))
        }
        return result
    }

    func topK(k: Int, part: TopKOutput, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, op: "topK")
        guard output.elementCount > 0 else { return result }
        let (source, offset, rows, cols) = try rows(input, trailing: [input.shape.count - 1], op: "topK")
        let other = try runtime.allocate(rows * k * (part == .values ? 4 : input.scalarType.byteCount), op: "topK")
        let (values, indices) = part == .values ? (out, other) : (other, out)
        var options = BuildOptions(["E_T": input.scalarType.clBits])
        options.input(input.scalarType)
        let kernel = try runtime.kernel(.topKRows, family: .topk, options: options)
        try runtime.launch1D(kernel, [.buffer(source), .int(offset), .int(Int32(rows)), .int(Int32(cols)), .int(Int32(k)), .buffer(values), .buffer(indices)],
                             count: rows, group: 16)
        return result
    }
}
