/// How a convolution or a pooling pads the spatial axes of its input.
public enum ConvolutionPadding: Sendable {
    /// No padding: only the windows that fit inside the input.
    case valid
    /// Enough padding that each result extent is `⌈input / stride⌉`, split evenly with the odd
    /// element at the end (TensorFlow's `SAME`, ONNX's `SAME_UPPER`).
    case same
    /// As ``same``, with the odd element at the start (ONNX's `SAME_LOWER`).
    case sameLower
    /// The same amount before and after each spatial axis.
    case symmetric([Int])
    /// An amount before and after each spatial axis.
    case explicit([(before: Int, after: Int)])

    /// The (before, after) pairs for windows of `kernel` taps over `extents`.
    func resolved(
        extents: [Int], kernel: [Int], strides: [Int], dilations: [Int]
    ) throws(RuleViolation) -> [Padding] {
        let rank = extents.count
        switch self {
        case .valid:
            return Array(repeating: Padding(before: 0, after: 0), count: rank)
        case .symmetric(let amounts):
            guard amounts.count == rank else {
                throw RuleViolation(.invalidArgument, "padding has \(amounts.count) entries for \(rank) spatial axes")
            }
            return amounts.map { Padding(before: $0, after: $0) }
        case .explicit(let pairs):
            guard pairs.count == rank else {
                throw RuleViolation(.invalidArgument, "padding has \(pairs.count) pairs for \(rank) spatial axes")
            }
            return pairs.map { Padding(before: $0.before, after: $0.after) }
        case .same, .sameLower:
            guard kernel.count == rank, strides.count == rank, dilations.count == rank,
                strides.allSatisfy({ $0 > 0 }), dilations.allSatisfy({ $0 > 0 }), kernel.allSatisfy({ $0 > 0 })
            else {
                throw RuleViolation(
                    .invalidArgument, "same padding needs a positive kernel, stride and dilation per axis")
            }
            let lower = if case .sameLower = self { true } else { false }
            return try (0..<rank).map { axis throws(RuleViolation) in
                let (stride, extent) = (strides[axis], extents[axis])
                let windows = extent / stride + (extent % stride == 0 ? 0 : 1)
                let (span, overflow) = dilations[axis].multipliedReportingOverflow(by: kernel[axis] - 1)
                guard !overflow, let needed = Tensor.checkedSum([Swift.max(windows - 1, 0) * stride, span, 1]) else {
                    throw RuleViolation(.tooLarge, "the window overflows an Int")
                }
                let total = Swift.max(0, needed - extent)
                let small = total / 2
                return lower
                    ? Padding(before: total - small, after: small) : Padding(before: small, after: total - small)
            }
        }
    }
}

extension Tensor {
    /// The convolution of `[N, C, spatial...]` with a weight `[M, C / groupCount, kernel...]`,
    /// plus an optional `bias` `[M]`: `[N, M, out...]`, each output the sum over its group's input
    /// channels and the kernel's taps (a cross-correlation, as in PyTorch, ONNX and Core ML).
    ///
    /// - Parameters:
    ///   - strides: the step between windows per spatial axis (ones by default).
    ///   - padding: zeros around each spatial axis.
    ///   - dilations: the step between a kernel's taps per spatial axis (ones by default).
    ///   - groupCount: independent channel groups; `C` and `M` must be multiples of it. A
    ///     depthwise convolution has `groupCount == C`.
    public func convolution(
        weight: Tensor, bias: Tensor? = nil, strides: [Int]? = nil, padding: ConvolutionPadding = .valid,
        dilations: [Int]? = nil, groupCount: Int = 1, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        Tensor.recordConvolution("convolution", self, weight, bias, strides, padding, dilations, file, line) {
            strides, dilations, pads in
            .convolution(
                ConvolutionGeometry(
                    strides: strides, dilations: dilations, padding: pads, groups: groupCount,
                    outputPadding: Array(repeating: 0, count: strides.count)))
        }
    }

    /// The transposed convolution (the gradient of ``convolution(weight:bias:strides:padding:dilations:groupCount:file:line:)``
    /// with respect to its input, sometimes called deconvolution) of `[N, C, spatial...]` with a
    /// weight `[C, M / groupCount, kernel...]`, plus an optional `bias` `[M]`: `[N, M, out...]`
    /// with `out = (in - 1)·stride - padding + dilation·(kernel - 1) + outputPadding + 1`.
    ///
    /// `padding` is removed from the result (as PyTorch's and ONNX's `pads`); `outputPadding`
    /// adds extent at the end of each axis, below the stride or the dilation.
    public func transposedConvolution(
        weight: Tensor, bias: Tensor? = nil, strides: [Int]? = nil, padding: [(before: Int, after: Int)]? = nil,
        outputPadding: [Int]? = nil, dilations: [Int]? = nil, groupCount: Int = 1, file: StaticString = #fileID,
        line: UInt = #line
    ) -> Tensor {
        let rank = Swift.max(shape.count - 2, 0)
        let explicit = ConvolutionPadding.explicit(padding ?? Array(repeating: (0, 0), count: rank))
        return Tensor.recordConvolution(
            "transposedConvolution", self, weight, bias, strides, explicit, dilations, file, line
        ) {
            strides, dilations, pads in
            .convolution(
                ConvolutionGeometry(
                    strides: strides, dilations: dilations, padding: pads, groups: groupCount,
                    outputPadding: outputPadding ?? Array(repeating: 0, count: strides.count)),
                transposed: true)
        }
    }

    /// The maximum of each window of `kernelSize` over the spatial axes of `[N, C, spatial...]`;
    /// padding never wins, and a NaN in a window gives NaN.
    ///
    /// - Parameter ceilMode: round the result's extents up, keeping a last partial window that
    ///   starts inside the input (PyTorch's `ceil_mode`).
    public func maxPool(
        kernelSize: [Int], strides: [Int]? = nil, padding: ConvolutionPadding = .valid, dilations: [Int]? = nil,
        ceilMode: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        pool(
            .maxPool, kernelSize, strides, padding, dilations, ceilMode, countsPadding: false,
            SourceLocation(file, line))
    }

    /// The average of each window of `kernelSize` over the spatial axes of `[N, C, spatial...]`.
    ///
    /// - Parameters:
    ///   - ceilMode: round the result's extents up, keeping a last partial window that starts
    ///     inside the input; its positions past the padding are never counted.
    ///   - countIncludingPadding: divide by the window's positions inside the padded input, not
    ///     only those inside the input (PyTorch's `count_include_pad`).
    public func averagePool(
        kernelSize: [Int], strides: [Int]? = nil, padding: ConvolutionPadding = .valid, dilations: [Int]? = nil,
        ceilMode: Bool = false, countIncludingPadding: Bool = false, file: StaticString = #fileID, line: UInt = #line
    ) -> Tensor {
        pool(
            .averagePool, kernelSize, strides, padding, dilations, ceilMode, countsPadding: countIncludingPadding,
            SourceLocation(file, line))
    }

    /// The mean over every spatial axis of `[N, C, spatial...]`, kept as size-1 axes.
    public func globalAveragePool(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        mean(alongAxes: Array(2..<Swift.max(rank, 2)), keepRank: true, file: file, line: line)
    }

    /// The maximum over every spatial axis of `[N, C, spatial...]`, kept as size-1 axes.
    public func globalMaxPool(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        max(alongAxes: Array(2..<Swift.max(rank, 2)), keepRank: true, file: file, line: line)
    }

    private func pool(
        _ kind: OpKind, _ kernel: [Int], _ strides: [Int]?, _ padding: ConvolutionPadding, _ dilations: [Int]?,
        _ ceilMode: Bool, countsPadding: Bool, _ location: SourceLocation
    ) -> Tensor {
        Tensor.record(kind.name, [self], at: location) { signatures throws(RuleViolation) in
            let x = signatures[0].shape
            let rank = kernel.count
            let strides = strides ?? Array(repeating: 1, count: rank)
            let dilations = dilations ?? Array(repeating: 1, count: rank)
            guard x.count == rank + 2 else {
                throw RuleViolation(
                    .shapeMismatch,
                    "a \(rank)-D window needs [N, C, spatial...] with \(rank) spatial axes, not \(describe(x))")
            }
            let pads = try padding.resolved(
                extents: Array(x.dropFirst(2)), kernel: kernel, strides: strides, dilations: dilations)
            return .pooling(
                kind,
                PoolingGeometry(
                    kernel: kernel, strides: strides, dilations: dilations, padding: pads, ceilMode: ceilMode,
                    countsPadding: countsPadding))
        }
    }

    /// This convolution with its results bounded by `clamp` in its epilogue: a new convolution of
    /// the same operands, so an importer that knows nothing else reads this result fuses an
    /// activation (ONNX's `Relu`, `Clip`) into it. `nil` when this tensor is not a `float32` or
    /// `float16` convolution without a bound and not yet computed; the activation is then
    /// recorded apart.
    package func fusingClamp(_ clamp: OutputClamp) -> Tensor? {
        guard let node, node.op.kind == .convolution, node.storedResult == nil,
            node.signature.scalarType == .float32 || node.signature.scalarType == .float16,
            case .convolution(let geometry) = node.op.attributes, geometry.clamp == nil
        else { return nil }
        return Tensor.record(.convolution(geometry.clamped(clamp)), node.inputs.map(Tensor.init(node:)), at: node.location)
    }

    /// This convolution with `residual` added to its results in its epilogue, before any bound:
    /// a new convolution of the same operands and the residual, so an importer that knows nothing
    /// else reads this result fuses a residual connection (ONNX's `Add` or `Sum` of a `Conv` and
    /// a shortcut) into it; a `linear` result takes it the same way (``linearFusingResidual(_:)``).
    /// `nil` when this tensor is not a `float32` or `float16` convolution without a bound or a
    /// residual and not yet computed, or `residual` is not of its shape and type; the sum is then
    /// recorded apart.
    package func fusingResidual(_ residual: Tensor) -> Tensor? {
        if let linear = linearFusingResidual(residual) { return linear }
        guard let node, node.op.kind == .convolution, node.storedResult == nil,
            node.signature.scalarType == .float32 || node.signature.scalarType == .float16,
            case .convolution(let geometry) = node.op.attributes, geometry.clamp == nil, !geometry.addsResidual,
            residual.node?.signature == node.signature
        else { return nil }
        return Tensor.record(
            .convolution(geometry.addingResidual()), node.inputs.map(Tensor.init(node:)) + [residual],
            at: node.location)
    }

    /// Records a convolution of `x` with `weight` (and `bias`): the strides and dilations filled
    /// with ones, checked against the operands, and the padding resolved, then `makeOp`.
    private static func recordConvolution(
        _ name: String, _ x: Tensor, _ weight: Tensor, _ bias: Tensor?, _ strides: [Int]?,
        _ padding: ConvolutionPadding,
        _ dilations: [Int]?, _ file: StaticString, _ line: UInt,
        _ makeOp: @escaping ([Int], [Int], [Padding]) -> Op
    ) -> Tensor {
        let operands = [x, weight] + (bias.map { [$0] } ?? [])
        return Tensor.record(name, operands, at: SourceLocation(file, line)) { signatures throws(RuleViolation) in
            let (x, w) = (signatures[0].shape, signatures[1].shape)
            let rank = Swift.max(x.count - 2, 0)
            let strides = strides ?? Array(repeating: 1, count: rank)
            let dilations = dilations ?? Array(repeating: 1, count: rank)
            try requireSpatial(x, w, strides: strides, dilations: dilations)
            let pads = try padding.resolved(
                extents: Array(x.dropFirst(2)), kernel: Array(w.dropFirst(2)), strides: strides, dilations: dilations)
            return makeOp(strides, dilations, pads)
        }
    }

    /// The input and weight have the same rank, at least 3, and one stride and dilation per
    /// spatial axis.
    private static func requireSpatial(_ x: [Int], _ w: [Int], strides: [Int], dilations: [Int]) throws(RuleViolation) {
        guard x.count >= 3, w.count == x.count else {
            throw RuleViolation(
                .shapeMismatch,
                "a convolution needs an input [N, C, spatial...] and a weight of the same rank, not \(describe(x)) and \(describe(w))"
            )
        }
        guard strides.count == x.count - 2, dilations.count == x.count - 2 else {
            throw RuleViolation(
                .invalidArgument,
                "\(x.count - 2) spatial axes need as many strides and dilations (\(strides), \(dilations))")
        }
    }
}

/// The 2-D convolution of `[N, C, H, W]` with a weight `[M, C / groupCount, kH, kW]`, as Core ML's
/// newer SDKs name it: `stride`, `padding` (the same amount on both sides) and `dilation` per axis.
public func conv2D(
    _ input: Tensor, weight: Tensor, stride: (y: Int, x: Int) = (1, 1), padding: (y: Int, x: Int) = (0, 0),
    dilation: (y: Int, x: Int) = (1, 1), groupCount: Int = 1, file: StaticString = #fileID, line: UInt = #line
) -> Tensor {
    input.convolution(
        weight: weight, strides: [stride.y, stride.x], padding: .symmetric([padding.y, padding.x]),
        dilations: [dilation.y, dilation.x], groupCount: groupCount, file: file, line: line)
}
