// Sliding windows on the device (`kernels/window.cl`): convolutions through im2col and the tuned
// matmul kernels, depthwise convolutions and poolings directly.
extension OpenCLBackend {
    /// The geometry vectors of `window.cl` (see its header).
    private static func geometry(_ shape: WindowShape3D, after: SIMD3<Int>, countsPadding: Bool) -> [KernelArgument] {
        func i(_ value: Int) -> Int32 { Int32(truncatingIfNeeded: value) }
        let g0 = SIMD8<Int32>(
            i(shape.input[0]), i(shape.input[1]), i(shape.input[2]), i(shape.kernel[0]), i(shape.kernel[1]),
            i(shape.kernel[2]), i(shape.output[0]), i(shape.output[1]))
        let g1 = SIMD8<Int32>(
            i(shape.output[2]), i(shape.strides[0]), i(shape.strides[1]), i(shape.strides[2]), i(shape.dilations[0]),
            i(shape.dilations[1]), i(shape.dilations[2]), i(shape.before[0]))
        let g2 = SIMD8<Int32>(
            i(shape.before[1]), i(shape.before[2]), i(after[0]), i(after[1]), i(after[2]), countsPadding ? 1 : 0, 0, 0)
        return [.int8(g0), .int8(g1), .int8(g2)]
    }

    /// The trailing padding of each of the three kernel axes.
    private static func after(_ padding: [Padding]) -> SIMD3<Int> {
        let values = Array(repeating: 0, count: WindowShape3D.maxSpatialRank - padding.count) + padding.map(\.after)
        return SIMD3(values[0], values[1], values[2])
    }

    /// Build options for elements of `type` in and out.
    private static func options(_ type: ScalarType) -> BuildOptions {
        var options = BuildOptions(["E_T": type.clBits])
        options.input(type)
        options.output(type)
        return options
    }

    /// A convolution: depthwise ones (one input channel per output), half-precision ones with a
    /// bias or a residual and those whose columns would not fit one allocation by the direct
    /// kernel; the others as the batched product
    /// `W[g] · cols[n, g]` over im2col's columns, through the device's matmul kernels, then
    /// the bias, a fused residual and a fused activation's bounds (`convolution_epilogue`).
    func convolution(_ geometry: ConvolutionGeometry, _ inputs: [Value], _ output: TensorSignature) throws(TensorError)
        -> Value
    {
        let type = output.scalarType
        let (input, weight) = (inputs[0].shape, inputs[1].shape)
        let shape = WindowShape3D(
            input: Array(input.dropFirst(2)), kernel: Array(weight.dropFirst(2)),
            output: Array(output.shape.dropFirst(2)),
            strides: geometry.strides, dilations: geometry.dilations, padding: geometry.padding)
        let (batch, channels, outChannels, groups) = (input[0], input[1], output.shape[1], geometry.groups)
        let (inPerGroup, outPerGroup) = (channels / groups, outChannels / groups)
        let reduction = inPerGroup * shape.kernelCount
        let (columnCount, overflow) = (batch * groups * reduction).multipliedReportingOverflow(by: shape.outputCount)
        let columnsFit =
            !overflow && columnCount < Int(Int32.max)
            && columnCount * type.byteCount <= runtime.device.maxAllocationBytes
        guard output.elementCount > 0 else { return try allocate(output, op: "convolution").0 }
        let (x, xOffset) = try contiguousData(inputs[0], op: "convolution")
        let (w, wOffset) = try contiguousData(inputs[1], op: "convolution")
        let window = Self.geometry(shape, after: Self.after(geometry.padding), countsPadding: false)
        let options = Self.options(type)
        // A fused activation's bounds; -∞ and +∞ leave every result as it is.
        let bounds: [KernelArgument] = [
            .float(geometry.clamp?.lower ?? -.infinity), .float(geometry.clamp?.upper ?? .infinity),
        ]
        // The bias and the residual, each with a flag: the input itself stands in for one absent.
        let biasIndex = geometry.biasIndex(operandCount: inputs.count)
        let residualIndex = geometry.residualIndex(operandCount: inputs.count)
        func addend(_ index: Int?, or stand: OpenCLBuffer) throws(TensorError) -> [KernelArgument] {
            guard let index else { return [.buffer(stand), .int(0), .int(0)] }
            let (buffer, offset) = try contiguousData(inputs[index], op: "convolution")
            return [.buffer(buffer), .int(offset), .int(1)]
        }
        // A half-precision product is rounded before a bias or a residual is added: with either,
        // the direct kernel, which rounds the whole sum once, as the reference does.
        let roundsOnce = type == .float32 || (biasIndex == nil && residualIndex == nil)
        guard inPerGroup > 1, columnsFit, roundsOnce else {
            let (result, out) = try allocate(output, op: "convolution")
            let kernel = try runtime.kernel(.convolutionDirect, family: .window, options: options)
            try runtime.launch1D(
                kernel,
                [.buffer(x), .int(xOffset), .buffer(w), .int(wOffset)] + addend(biasIndex, or: x)
                    + addend(residualIndex, or: x) + window
                    + [
                        .int(Int32(channels)), .int(Int32(outChannels)), .int(Int32(inPerGroup)),
                        .int(Int32(output.elementCount)),
                    ] + bounds + [.buffer(out)],
                count: output.elementCount)
            return result
        }
        let columns = try runtime.allocate(columnCount * type.byteCount, op: "convolution")
        let im2col = try runtime.kernel(.im2col, family: .window, options: options)
        try runtime.launch1D(
            im2col,
            [.buffer(x), .int(xOffset)] + window
                + [
                    .int(Int32(channels)), .int(Int32(inPerGroup)), .int(Int32(groups)), .int(Int32(columnCount)),
                    .buffer(columns),
                ],
            count: columnCount)
        let columnsValue = Value(
            buffer: columns, layout: Layout(contiguous: [batch, groups, reduction, shape.outputCount]), scalarType: type
        )
        // Every batch reads the same filters: a zero batch stride.
        let filters = Value(
            buffer: w,
            layout: Layout(
                shape: [batch, groups, outPerGroup, reduction], strides: [0, outPerGroup * reduction, reduction, 1],
                offset: Int(wOffset)),
            scalarType: type)
        let product = try matmul(
            filters, columnsValue,
            TensorSignature(shape: [batch, groups, outPerGroup, shape.outputCount], scalarType: type))
        let out = try deviceBuffer(product, op: "convolution")
        if biasIndex != nil || residualIndex != nil || geometry.clamp != nil {
            let kernel = try runtime.kernel(.convolutionEpilogue, family: .window, options: options)
            try runtime.launch1D(
                kernel,
                [.buffer(out)] + addend(biasIndex, or: out) + addend(residualIndex, or: out)
                    + [
                        .int(Int32(shape.outputCount)), .int(Int32(outChannels)), .int(Int32(output.elementCount)),
                    ] + bounds,
                count: output.elementCount)
        }
        return Value(buffer: out, layout: Layout(contiguous: output.shape), scalarType: type)
    }

    /// Max or average pooling, one output per work-item.
    func pooling(_ kind: OpKind, _ geometry: PoolingGeometry, _ input: Value, _ output: TensorSignature)
        throws(TensorError) -> Value
    {
        let (result, out) = try allocate(output, op: kind.name)
        guard output.elementCount > 0 else { return result }
        let shape = WindowShape3D(
            input: Array(input.shape.dropFirst(2)), kernel: geometry.kernel, output: Array(output.shape.dropFirst(2)),
            strides: geometry.strides, dilations: geometry.dilations, padding: geometry.padding)
        let (x, xOffset) = try contiguousData(input, op: kind.name)
        let name: KernelName = kind == .averagePool ? .averagePool : .maxPool
        let kernel = try runtime.kernel(name, family: .window, options: Self.options(output.scalarType))
        try runtime.launch1D(
            kernel,
            [.buffer(x), .int(xOffset)]
                + Self.geometry(shape, after: Self.after(geometry.padding), countsPadding: geometry.countsPadding)
                + [.int(Int32(output.elementCount)), .buffer(out)],
            count: output.elementCount)
        return result
    }
}
