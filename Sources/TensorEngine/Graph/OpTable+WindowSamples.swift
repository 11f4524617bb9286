// The parity samples of the sliding-window ops: 1-, 2- and 3-D windows, strides, dilations,
// asymmetric padding, groups and depthwise kernels, ceil mode, strided operands, half precision,
// empty batches and a large case each.

extension Samples {
    private static func input(_ shape: [Int], _ type: ScalarType = .float32, _ layout: SampleLayout = .contiguous)
        -> SampleInput
    {
        SampleInput(shape: shape, type: type, layout: layout)
    }

    private static func pads(_ pairs: [(Int, Int)]) -> [Padding] { pairs.map { Padding(before: $0.0, after: $0.1) } }

    /// A convolution sample: `x`, `w` (and a bias when `bias`, and a residual of the result's shape
    /// laid out as `residual` says), `[C/groups, kernel...]` terms per output.
    private static func convolutionSample(
        _ label: String, _ x: SampleInput, _ w: SampleInput, bias: Bool = false, strides: [Int]? = nil,
        dilations: [Int]? = nil, padding: [(Int, Int)]? = nil, groups: Int = 1, outputPadding: [Int]? = nil,
        transposed: Bool = false, clamp: OutputClamp? = nil, residual: SampleLayout? = nil
    ) -> ParitySample {
        let rank = x.shape.count - 2
        let geometry = ConvolutionGeometry(
            strides: strides ?? Array(repeating: 1, count: rank),
            dilations: dilations ?? Array(repeating: 1, count: rank),
            padding: pads(padding ?? Array(repeating: (0, 0), count: rank)), groups: groups,
            outputPadding: outputPadding ?? Array(repeating: 0, count: rank), clamp: clamp,
            addsResidual: residual != nil)
        let channels = transposed ? w.shape[1] * groups : w.shape[0]
        var inputs = [x, w] + (bias ? [SampleInput(shape: [channels], type: x.type)] : [])
        if let residual {
            // The result's extents: forward windows, or the transposed rule.
            let extents = (0..<rank).map { axis in
                let (stride, dilation) = (geometry.strides[axis], geometry.dilations[axis])
                let (extent, span) = (x.shape[axis + 2], dilation * (w.shape[axis + 2] - 1))
                let padded = geometry.padding[axis].before + geometry.padding[axis].after
                return transposed
                    ? (extent - 1) * stride - padded + span + geometry.outputPadding[axis] + 1
                    : (extent + padded - span - 1) / stride + 1
            }
            inputs.append(SampleInput(shape: [x.shape[0], channels] + extents, type: x.type, layout: residual))
        }
        let kernel = w.shape.dropFirst(2).reduce(1, *)
        let terms = transposed ? w.shape[0] / Swift.max(1, groups) * kernel : w.shape[1] * kernel
        return ParitySample(
            label: label, inputs: inputs, apply: .op(.convolution(geometry, transposed: transposed)),
            reductionLength: terms)
    }

    static let convolution: [ParitySample] = [
        convolutionSample("1-D strided", input([2, 3, 9]), input([4, 3, 3]), strides: [2], padding: [(1, 0)]),
        convolutionSample(
            "2-D with bias", input([1, 3, 7, 6]), input([5, 3, 3, 3]), bias: true, padding: [(1, 1), (1, 1)]),
        convolutionSample(
            "2-D groups, strides, dilations, asymmetric padding", input([2, 4, 11, 9]), input([6, 2, 3, 2]),
            strides: [2, 3], dilations: [2, 1], padding: [(1, 2), (0, 1)], groups: 2),
        convolutionSample(
            "depthwise", input([1, 8, 10, 10]), input([8, 1, 3, 3]), bias: true, padding: [(1, 1), (1, 1)], groups: 8),
        convolutionSample(
            "depthwise, dilated, wide rows", input([2, 16, 30, 37]), input([16, 1, 3, 3]), bias: true,
            dilations: [2, 2], padding: [(2, 2), (2, 2)], groups: 16),
        convolutionSample(
            "depthwise, multiplier 2", input([1, 4, 6, 6]), input([8, 1, 3, 3]), strides: [2, 2], groups: 4),
        convolutionSample(
            "depthwise, rows past 64, 3x5, row stride 2, no bias", input([1, 3, 9, 70]), input([3, 1, 3, 5]),
            strides: [2, 1], padding: [(1, 0), (2, 1)], groups: 3),
        // The AVX-512 plane kernel's shapes: 5 × 5, a multiplier, asymmetric padding, rows not a
        // multiple of its block of 4 and a last strip of 4 columns; 3 × 3 without padding onto one
        // column.
        convolutionSample(
            "depthwise 5x5, multiplier 2, asymmetric padding, batch 2", input([2, 3, 13, 37]), input([6, 1, 5, 5]),
            bias: true, padding: [(2, 1), (0, 3)], groups: 3),
        convolutionSample("depthwise 3x3 onto one column", input([1, 2, 5, 3]), input([2, 1, 3, 3]), groups: 2),
        convolutionSample(
            "depthwise 5x5 stride 2, clipped, asymmetric padding", input([1, 4, 19, 35]), input([4, 1, 5, 5]),
            bias: true, strides: [2, 2], padding: [(2, 2), (2, 1)], groups: 4,
            clamp: OutputClamp(lower: -0.2, upper: 0.4)),
        // Past the plane kernel's shapes: a 7 × 7 window at stride 2 (the per-output loop).
        convolutionSample(
            "depthwise 7x7 stride 2", input([1, 2, 15, 15]), input([2, 1, 7, 7]), strides: [2, 2],
            padding: [(3, 3), (3, 3)], groups: 2),
        convolutionSample("1x1", input([2, 16, 5, 5]), input([8, 16, 1, 1]), bias: true),
        convolutionSample(
            "3-D", input([1, 2, 5, 4, 6]), input([3, 2, 2, 3, 2]), strides: [1, 2, 1],
            padding: [(1, 1), (1, 0), (0, 1)]),
        convolutionSample(
            "strided operands", input([1, 3, 6, 5], .float32, .transposed), input([2, 3, 3, 3], .float32, .reversed)),
        convolutionSample(
            "float16", input([1, 2, 5, 5], .float16), input([3, 2, 3, 3], .float16), bias: true,
            padding: [(1, 1), (1, 1)]),
        convolutionSample("empty batch", input([0, 3, 5, 5]), input([4, 3, 3, 3])),
        convolutionSample("size 1", input([1, 1, 1, 1]), input([1, 1, 1, 1])),
        convolutionSample(
            "kernel over padding", input([1, 1, 2, 2]), input([1, 1, 3, 3]), padding: [(1, 1), (1, 1)]),
        convolutionSample(
            "large", input([1, 32, 28, 28]), input([64, 32, 3, 3]), bias: true, padding: [(1, 1), (1, 1)]),
        convolutionSample(
            "deep, small plane: output channels split", input([2, 64, 7, 7]), input([130, 64, 3, 3]), bias: true,
            padding: [(1, 1), (1, 1)]),
        convolutionSample("deep 1x1, small plane", input([1, 96, 9, 9]), input([160, 96, 1, 1])),
        convolutionSample(
            "1x1 on a small plane, 48 output channels in two slices", input([1, 40, 13, 13]), input([48, 40, 1, 1]),
            bias: true),
        convolutionSample(
            "1x1 on a small plane, 64 output channels in two slices, batch 2", input([2, 72, 11, 11]),
            input([64, 72, 1, 1]), bias: true, clamp: .relu),
        convolutionSample(
            "groups of 30 channels, strided, rows not a multiple of 32", input([1, 8, 30, 31]), input([60, 4, 3, 3]),
            bias: true, strides: [2, 2], padding: [(1, 0), (1, 1)], groups: 2),
        convolutionSample(
            "stride 1: groups, dilations, asymmetric padding, batch 2", input([2, 6, 12, 10]), input([30, 3, 3, 2]),
            bias: true, dilations: [2, 3], padding: [(2, 0), (0, 3)], groups: 2),
        convolutionSample(
            "1-D stride 1, wide kernel, rows over many panels", input([1, 5, 300]), input([28, 5, 7]), bias: true,
            padding: [(3, 2)]),
        // One-tap windows strided or padded: one phase plane per channel, the input subsampled
        // (a downsampling shortcut), output channels across the lanes.
        convolutionSample(
            "1x1 stride 2 over 64 channels, odd plane, batch 2", input([2, 64, 13, 11]), input([40, 64, 1, 1]),
            bias: true, strides: [2, 2]),
        convolutionSample(
            "1x1 stride (2, 3), padded, residual and relu", input([1, 72, 9, 14]), input([48, 72, 1, 1]),
            strides: [2, 3], padding: [(1, 0), (2, 1)], clamp: .relu, residual: .contiguous),
        // Strided windows read in place from phase planes (2 × 2 and 4 × 4 phases, 3 channels).
        convolutionSample(
            "7x7 stride 2 over 3 channels", input([1, 3, 30, 29]), input([16, 3, 7, 7]), bias: true, strides: [2, 2],
            padding: [(3, 3), (3, 3)]),
        convolutionSample(
            "11x11 stride 4, odd padding", input([1, 3, 41, 40]), input([8, 3, 11, 11]), strides: [4, 4],
            padding: [(2, 1), (0, 3)]),
        // Activations fused into the epilogue, on every path: read in place, im2col, pointwise,
        // channel slices, both depthwise kernels, half precision.
        convolutionSample(
            "stride 1 with relu", input([1, 16, 12, 12]), input([24, 16, 3, 3]), bias: true,
            padding: [(1, 1), (1, 1)], clamp: .relu),
        convolutionSample(
            "strided, clipped to [-0.5, 0.5]", input([1, 8, 17, 15]), input([12, 8, 3, 3]), bias: true,
            strides: [2, 2], padding: [(1, 1), (1, 1)], clamp: OutputClamp(lower: -0.5, upper: 0.5)),
        convolutionSample("1x1 with relu", input([2, 16, 9, 9]), input([8, 16, 1, 1]), bias: true, clamp: .relu),
        convolutionSample(
            "small plane, output channels split, relu", input([1, 64, 7, 7]), input([130, 64, 3, 3]),
            padding: [(1, 1), (1, 1)], clamp: .relu),
        convolutionSample(
            "depthwise, clipped to [0, 0.6]", input([1, 8, 10, 70]), input([8, 1, 3, 3]), bias: true, padding: [(1, 1), (1, 1)],
            groups: 8, clamp: OutputClamp(lower: 0, upper: 0.6)),
        convolutionSample(
            "depthwise, row stride 2, relu", input([1, 4, 9, 9]), input([8, 1, 3, 3]), bias: true, strides: [2, 2],
            groups: 4, clamp: .relu),
        convolutionSample(
            "float16, relu", input([1, 2, 5, 5], .float16), input([3, 2, 3, 3], .float16), bias: true,
            padding: [(1, 1), (1, 1)], clamp: .relu),
        convolutionSample(
            "lower bound above the upper one: all upper", input([1, 3, 6, 6]), input([4, 3, 3, 3]),
            clamp: OutputClamp(lower: 1, upper: -1)),
        // A residual fused into the epilogue (before the bound), on every path as the activations.
        convolutionSample(
            "stride 1 with residual and relu", input([2, 16, 12, 12]), input([24, 16, 3, 3]), bias: true,
            padding: [(1, 1), (1, 1)], clamp: .relu, residual: .contiguous),
        convolutionSample(
            "strided, residual without bias, clipped", input([1, 8, 17, 15]), input([12, 8, 3, 3]),
            strides: [2, 2], padding: [(1, 1), (1, 1)], clamp: OutputClamp(lower: -0.5, upper: 0.5),
            residual: .contiguous),
        convolutionSample(
            "1x1 with a transposed residual", input([2, 16, 9, 9]), input([8, 16, 1, 1]), bias: true,
            residual: .transposed),
        convolutionSample(
            "1x1, 16 output channels over two blocks of k, residual and clip", input([1, 300, 7, 9]),
            input([16, 300, 1, 1]), bias: true, clamp: OutputClamp(lower: -1, upper: 1), residual: .contiguous),
        convolutionSample(
            "deep 1x1, small plane, residual and relu", input([1, 96, 9, 9]), input([160, 96, 1, 1]), bias: true,
            clamp: .relu, residual: .contiguous),
        convolutionSample(
            "small plane, output channels split, residual", input([1, 64, 7, 7]), input([130, 64, 3, 3]),
            padding: [(1, 1), (1, 1)], residual: .contiguous),
        convolutionSample(
            "three blocks of k, channels split, ragged panel: bias, residual, clip", input([1, 80, 7, 9]),
            input([52, 80, 3, 3]), bias: true, padding: [(1, 1), (1, 1)], clamp: OutputClamp(lower: -0.5, upper: 0.5),
            residual: .contiguous),
        // Output channels across the lanes (te_conv_channels): a panel and a half, tiles of 14
        // positions and a ragged last one, several blocks of k, dilations, stride 2 (phase planes),
        // a pointwise convolution reading its input in place.
        convolutionSample(
            "channels in the lanes: 48 on 13 x 13, bias, residual, relu", input([1, 16, 13, 13]),
            input([48, 16, 3, 3]), bias: true, padding: [(1, 1), (1, 1)], clamp: .relu, residual: .contiguous),
        convolutionSample(
            "channels in the lanes: 16, dilation 2, 29 columns, batch 2", input([2, 8, 9, 33]), input([16, 8, 3, 3]),
            dilations: [2, 2]),
        convolutionSample(
            "channels in the lanes: 40 over 4 blocks of k, stride 2, clipped", input([1, 90, 11, 31]),
            input([40, 90, 3, 3]), bias: true, strides: [2, 2], padding: [(1, 1), (1, 1)],
            clamp: OutputClamp(lower: -0.5, upper: 0.5)),
        convolutionSample(
            "channels in the lanes: 1x1, 48 over 72 on 11 x 13, bias, residual, clipped", input([2, 72, 11, 13]),
            input([48, 72, 1, 1]), bias: true, clamp: OutputClamp(lower: -1, upper: 1), residual: .contiguous),
        convolutionSample(
            "a network's first layer: 3 channels, stride 2, bias and relu", input([1, 3, 40, 41]),
            input([64, 3, 3, 3]), bias: true, strides: [2, 2], clamp: .relu),
        convolutionSample(
            "depthwise, residual and relu", input([1, 8, 10, 70]), input([8, 1, 3, 3]), bias: true,
            padding: [(1, 1), (1, 1)], groups: 8, clamp: .relu, residual: .contiguous),
        convolutionSample(
            "depthwise, row stride 2, broadcast residual", input([1, 4, 9, 9]), input([8, 1, 3, 3]), bias: true,
            strides: [2, 2], groups: 4, residual: .broadcast(from: [1, 8, 1, 4])),
        convolutionSample(
            "1-D with residual", input([2, 3, 9]), input([4, 3, 3]), strides: [2], padding: [(1, 0)],
            residual: .reversed),
        convolutionSample(
            "float16 with bias, residual and relu", input([1, 2, 5, 5], .float16), input([3, 2, 3, 3], .float16),
            bias: true, padding: [(1, 1), (1, 1)], clamp: .relu, residual: .contiguous),
        convolutionSample(
            "float16 1x1 with residual", input([1, 8, 5, 5], .float16), input([4, 8, 1, 1], .float16),
            residual: .contiguous),
        convolutionSample(
            "empty batch with residual", input([0, 3, 5, 5]), input([4, 3, 3, 3]), residual: .contiguous),
    ]

    static let convolutionTranspose: [ParitySample] = [
        convolutionSample(
            "2-D stride 2, output padding", input([1, 4, 5, 6]), input([4, 3, 3, 3]), strides: [2, 2],
            padding: [(1, 1), (1, 1)], outputPadding: [1, 1], transposed: true),
        convolutionSample(
            "groups, dilation", input([1, 4, 4, 4]), input([4, 2, 3, 2]), dilations: [2, 1], groups: 2, transposed: true
        ),
        convolutionSample(
            "1-D stride 3, bias", input([2, 3, 7]), input([3, 2, 4]), bias: true, strides: [3], transposed: true),
        convolutionSample(
            "asymmetric padding", input([1, 2, 4, 3]), input([2, 2, 3, 3]), strides: [2, 1], padding: [(0, 2), (1, 0)],
            transposed: true),
        convolutionSample(
            "stride 2 with bias and relu", input([1, 3, 4, 4]), input([3, 2, 3, 3]), bias: true, strides: [2, 2],
            transposed: true, clamp: .relu),
        convolutionSample(
            "stride 2 with residual and relu", input([1, 3, 4, 4]), input([3, 2, 3, 3]), strides: [2, 2],
            padding: [(1, 0), (0, 1)], outputPadding: [1, 0], transposed: true, clamp: .relu, residual: .contiguous),
    ]

    /// A pooling sample of `kind` over `x`.
    private static func poolingSample(
        _ kind: OpKind, _ label: String, _ x: SampleInput, kernel: [Int], strides: [Int]? = nil,
        dilations: [Int]? = nil,
        padding: [(Int, Int)]? = nil, ceil: Bool = false, countsPadding: Bool = false
    ) -> ParitySample {
        let rank = kernel.count
        let geometry = PoolingGeometry(
            kernel: kernel, strides: strides ?? Array(repeating: 1, count: rank),
            dilations: dilations ?? Array(repeating: 1, count: rank),
            padding: pads(padding ?? Array(repeating: (0, 0), count: rank)), ceilMode: ceil,
            countsPadding: countsPadding)
        return ParitySample(
            label: label, inputs: [x], apply: .op(.pooling(kind, geometry)), reductionLength: kernel.reduce(1, *))
    }

    static let maxPool: [ParitySample] = [
        poolingSample(
            .maxPool, "3x3 stride 2 padded", input([1, 3, 9, 9]), kernel: [3, 3], strides: [2, 2],
            padding: [(1, 1), (1, 1)]),
        poolingSample(.maxPool, "ceil mode", input([2, 2, 8, 7]), kernel: [3, 3], strides: [2, 2], ceil: true),
        poolingSample(
            .maxPool, "dilated", input([1, 2, 7, 7]), kernel: [2, 2], dilations: [2, 2], padding: [(1, 0), (0, 1)]),
        poolingSample(.maxPool, "1-D", input([2, 3, 10]), kernel: [2]),
        poolingSample(
            .maxPool, "3-D ceil", input([1, 2, 4, 5, 6]), kernel: [2, 2, 2], strides: [2, 2, 2], ceil: true),
        poolingSample(.maxPool, "int32", input([1, 2, 6, 6], .int32), kernel: [2, 2], strides: [2, 2]),
        poolingSample(.maxPool, "float16", input([1, 2, 6, 6], .float16), kernel: [3, 3], padding: [(1, 1), (1, 1)]),
        poolingSample(
            .maxPool, "special values", SampleInput(shape: [1, 1, 5, 5], values: .special(shift: 2)), kernel: [2, 2]),
        poolingSample(
            .maxPool, "strided input", input([1, 3, 6, 8], .float32, .strided), kernel: [2, 3], strides: [1, 2]),
        poolingSample(.maxPool, "empty batch", input([0, 3, 4, 4]), kernel: [2, 2]),
        poolingSample(
            .maxPool, "wide rows: special values, ceil mode, dilated",
            SampleInput(shape: [1, 2, 7, 75], values: .special(shift: 1)), kernel: [2, 3], strides: [1, 2],
            dilations: [1, 2], padding: [(0, 1), (1, 1)], ceil: true),
        poolingSample(
            .maxPool, "large", input([1, 64, 112, 112]), kernel: [3, 3], strides: [2, 2], padding: [(1, 1), (1, 1)]),
        poolingSample(
            .maxPool, "one window over the whole plane, special values",
            SampleInput(shape: [2, 3, 5, 9], values: .special(shift: 1)), kernel: [5, 9]),
        poolingSample(
            .maxPool, "rows of 13 (one partial strip), ceil mode", input([1, 3, 27, 27]), kernel: [3, 3],
            strides: [2, 2], ceil: true),
        poolingSample(
            .maxPool, "special values, 3x3 stride 2, ceil mode",
            SampleInput(shape: [1, 2, 9, 40], values: .special(shift: 3)), kernel: [3, 3], strides: [2, 2],
            padding: [(1, 0), (0, 1)], ceil: true),
    ]

    static let averagePool: [ParitySample] = [
        poolingSample(
            .averagePool, "padding not counted", input([1, 3, 9, 9]), kernel: [3, 3], strides: [2, 2],
            padding: [(1, 1), (1, 1)]),
        poolingSample(
            .averagePool, "padding counted", input([1, 3, 9, 9]), kernel: [3, 3], strides: [2, 2],
            padding: [(1, 1), (1, 1)], countsPadding: true),
        poolingSample(
            .averagePool, "ceil mode, padding counted", input([2, 2, 8, 7]), kernel: [3, 3], strides: [2, 2],
            padding: [(1, 1), (0, 1)], ceil: true, countsPadding: true),
        poolingSample(.averagePool, "1-D dilated", input([2, 3, 11]), kernel: [3], strides: [2], dilations: [2]),
        poolingSample(
            .averagePool, "3-D", input([1, 2, 4, 5, 6]), kernel: [2, 3, 2], padding: [(0, 1), (1, 1), (0, 0)]),
        poolingSample(.averagePool, "float16", input([1, 2, 6, 6], .float16), kernel: [2, 2], strides: [2, 2]),
        poolingSample(.averagePool, "transposed input", input([1, 3, 5, 7], .float32, .transposed), kernel: [2, 2]),
        poolingSample(.averagePool, "large", input([1, 64, 56, 56]), kernel: [3, 3], padding: [(1, 1), (1, 1)]),
        poolingSample(.averagePool, "one window over the whole plane", input([2, 40, 7, 7]), kernel: [7, 7]),
        poolingSample(
            .averagePool, "one window over the whole plane and its padding, counted", input([1, 5, 6, 1]),
            kernel: [8, 3], padding: [(1, 1), (1, 1)], countsPadding: true),
        poolingSample(
            .averagePool, "wide rows: stride 3, ceil mode, padding counted", input([2, 3, 6, 100]), kernel: [3, 3],
            strides: [2, 3], padding: [(1, 1), (1, 2)], ceil: true, countsPadding: true),
        poolingSample(
            .averagePool, "wide rows past 64, padding not counted", input([1, 2, 5, 80]), kernel: [3, 3],
            padding: [(1, 1), (1, 1)]),
        poolingSample(
            .averagePool, "rows of 10, stride 2, padding not counted", input([1, 2, 17, 19]), kernel: [3, 3],
            strides: [2, 2], padding: [(1, 1), (1, 1)]),
    ]
}
