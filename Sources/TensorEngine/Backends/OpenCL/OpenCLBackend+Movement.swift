import COpenCL

// Data movement: strided copies (contiguous, transposes), padding, concatenation, gathers and scatters.
extension OpenCLBackend {
    /// Copies a value into `buffer` at `layout` (same shape): a tiled transpose for a column-major
    /// matrix into a row-major one, else a strided copy over the merged axes.
    func copy(_ value: Value, into buffer: OpenCLBuffer, layout: Layout) throws(TensorError) {
        let count = value.layout.elementCount
        guard count > 0 else { return }
        let source = try deviceBuffer(value, op: "copy")
        let merged = KernelLayout(shape: value.shape, layouts: [value.layout, layout])
        var options = BuildOptions(["E_T": value.scalarType.clBits])
        let (src, dst) = (merged.strides[0], merged.strides[1])
        let tile = runtime.device.maxWorkGroupSize >= 256 ? 16 : 8
        if merged.rank == 2, src[6] == 1, src[7] != 1, dst[7] == 1, dst[6] == merged.shape[7] {
            options.define("TILE", "\(tile)")
            let kernel = try runtime.kernel(.transposeTiled, family: .copy, options: options)
            let (rows, cols) = (Int(merged.shape[6]), Int(merged.shape[7]))
            try runtime.launch(kernel, [
                .buffer(source), .int(merged.offsets[0]), .int(Int32(rows)), .int(Int32(cols)), .int(src[6]), .int(src[7]),
                .buffer(buffer), .int(merged.offsets[1]),
            ], global: [(cols + tile - 1) / tile * tile, (rows + tile - 1) / tile * tile], local: [tile, tile])
            return
        }
        options.define("TE_RANK", "\(merged.rank)")
        let kernel = try runtime.kernel(.stridedCopy, family: .copy, options: options)
        try runtime.launch1D(kernel, [
            .buffer(source), .int8(merged.shape), .int8(src), .int(merged.offsets[0]),
            .buffer(buffer), .int8(dst), .int(merged.offsets[1]), .int(Int32(count)),
        ], count: count)
    }

    /// The value's elements row-major in some buffer, and where they start: the value's own buffer
    /// when it is already contiguous, else a fresh copy.
    func contiguousData(_ value: Value, op: String) throws(TensorError) -> (OpenCLBuffer, Int32) {
        let buffer = try deviceBuffer(value, op: op)
        if value.layout.isContiguous { return (buffer, Int32(truncatingIfNeeded: value.layout.offset)) }
        let (copy, target) = try allocate(TensorSignature(shape: value.shape, scalarType: value.scalarType), op: op)
        try self.copy(value, into: target, layout: copy.layout)
        return (target, 0)
    }

    /// Fills `count` elements of a buffer with one bit pattern (its low `byteCount` bytes).
    func fill(_ buffer: OpenCLBuffer, type: ScalarType, bits: UInt64, count: Int) throws(TensorError) {
        guard count > 0 else { return }
        let kernel = try runtime.kernel(.fill, family: .copy, options: BuildOptions(["E_T": type.clBits]))
        try runtime.launch1D(
            kernel, [.buffer(buffer), .uint(UInt32(truncatingIfNeeded: bits)), .uint(UInt32(bits >> 32)), .int(Int32(count))],
            count: count)
    }

    func pad(_ padding: [Padding], fill value: Double, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, op: "pad")
        // The fill as every backend stores it: converted once into the element type.
        let bits: UInt64 = switch output.scalarType {
        case .float32: UInt64(Float(value).bitPattern)
        case .float16: UInt64(Float16(value).bitPattern)
        case .int32: UInt64(UInt32(bitPattern: Int32(converting: value)))
        case .bool: value != 0 ? 1 : 0
        case .int64: UInt64(bitPattern: Int64(converting: value))
        case .float64: value.bitPattern
        }
        try self.fill(buffer, type: output.scalarType, bits: bits, count: output.elementCount)
        let interior = result.layout.sliced(zip(padding, input.shape).map { SliceDimension(start: $0.before, count: $1, step: 1) })
        try copy(input, into: buffer, layout: interior)
        return result
    }

    func concat(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, op: "concat")
        var start = 0
        for input in inputs {
            var dimensions = output.shape.map { SliceDimension(start: 0, count: $0, step: 1) }
            dimensions[axis] = SliceDimension(start: start, count: input.shape[axis], step: 1)
            start += input.shape[axis]
            try copy(input, into: buffer, layout: result.layout.sliced(dimensions))
        }
        return result
    }

    /// A concatenation into growable storage (``AppendPlan``): past the first operand in its
    /// device buffer, or into a new device buffer with room to grow.
    func append(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let plan = try AppendPlan(axis: axis, inputs: inputs)
        let buffer = try plan.inPlace
            ? deviceBuffer(inputs[0], op: "append")
            : runtime.allocate(plan.newBufferBytes(output.scalarType), op: "append", growth: plan.newCursor())
        for (operand, destination) in plan.writes { try copy(inputs[operand], into: buffer, layout: destination) }
        return Value(buffer: buffer, layout: plan.geometry.result, scalarType: output.scalarType)
    }

    func gather(axis: Int, _ input: Value, _ indices: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, op: "gather")
        let outer = input.shape[..<axis].reduce(1, *)
        let extent = input.shape[axis]
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        let count = indices.layout.elementCount
        guard outer * inner * count > 0 else { return result }
        let (source, sourceOffset) = try contiguousData(input, op: "gather")
        let (chosen, chosenOffset) = try contiguousData(indices, op: "gather")
        let flag = try runtime.allocate(4, op: "gather")
        try fill(flag, type: .int32, bits: UInt64(Int32.max), count: 1)
        let kernel = try runtime.kernel(
            .gather, family: .gather, options: BuildOptions(["E_T": input.scalarType.clBits, "I_T": indices.scalarType.clCompute]))
        try runtime.launch1D(kernel, [
            .buffer(source), .int(sourceOffset), .buffer(chosen), .int(chosenOffset), .int(Int32(outer)),
            .int(Int32(extent)), .int(Int32(inner)), .int(Int32(count)), .buffer(buffer), .buffer(flag),
        ], count: outer * count * inner)
        try checkIndices(flag, chosen, chosenOffset, wide: indices.scalarType == .int64, op: "gather", axis: axis,
                         extent: extent, shapes: [input.shape, indices.shape])
        return result
    }

    /// Throws ``TensorError/Kind/indexOutOfRange`` naming the first bad index when a gather or
    /// scatter kernel lowered `flag` (from `Int32.max`) to the position of one in `indices`.
    private func checkIndices(
        _ flag: OpenCLBuffer, _ indices: OpenCLBuffer, _ offset: Int32, wide: Bool, op: String, axis: Int,
        extent: Int, shapes: [[Int]]
    ) throws(TensorError) {
        var bad = Int32.max
        try checkCL(runtime.enqueueRead(flag.mem.raw, bytes: 4, into: &bad), "clEnqueueReadBuffer", op: op)
        guard bad != Int32.max else { return }
        // An Int32 index is the low half of the Int64 read here (little-endian devices).
        var position: Int64 = 0
        let size = wide ? 8 : 4
        let byteOffset = (Int(offset) + Int(bad)) * size
        try checkCL(runtime.enqueueRead(indices.mem.raw, offset: byteOffset, bytes: size, into: &position), "clEnqueueReadBuffer", op: op)
        if !wide { position = Int64(Int32(truncatingIfNeeded: position)) }
        throw TensorError(.indexOutOfRange, op: op, operandShapes: shapes,
                          message: "index \(position) is out of range for axis \(axis) of size \(extent)")
    }

    /// The data copied, then the updates written along `axis` where the indices say: one
    /// work-item per line along the axis, in order, so of two updates to one element the later
    /// wins, as in the naive reference.
    func scatter(
        axis: Int, _ input: Value, _ indices: Value, _ updates: Value, _ output: TensorSignature
    ) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, op: "scatter")
        guard output.elementCount > 0 else { return result }
        try copy(input, into: buffer, layout: result.layout)
        let outer = input.shape[..<axis].reduce(1, *)
        let extent = input.shape[axis]
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        let count = indices.shape[axis]
        guard outer * inner * count > 0 else { return result }
        let (chosen, chosenOffset) = try contiguousData(indices, op: "scatter")
        let (values, valuesOffset) = try contiguousData(updates, op: "scatter")
        let flag = try runtime.allocate(4, op: "scatter")
        try fill(flag, type: .int32, bits: UInt64(Int32.max), count: 1)
        let kernel = try runtime.kernel(
            .scatter, family: .gather, options: BuildOptions(["E_T": input.scalarType.clBits, "I_T": indices.scalarType.clCompute]))
        try runtime.launch1D(kernel, [
            .buffer(chosen), .int(chosenOffset), .buffer(values), .int(valuesOffset), .int(Int32(outer)),
            .int(Int32(extent)), .int(Int32(inner)), .int(Int32(count)), .buffer(buffer), .buffer(flag),
        ], count: outer * inner)
        try checkIndices(flag, chosen, chosenOffset, wide: indices.scalarType == .int64, op: "scatter", axis: axis,
                         extent: extent, shapes: [input.shape, indices.shape, updates.shape])
        return result
    }
}
