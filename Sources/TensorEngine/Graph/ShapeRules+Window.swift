// The shape rules of the sliding-window ops: convolutions and pooling over `[N, C, spatial...]`.

extension ShapeRules {
    /// `[N, C, spatial...]` with `spatialRank` spatial axes, or the rule broken.
    private static func requireImage(_ x: TensorSignature, spatialRank: Int, _ role: String) throws(RuleViolation) {
        guard spatialRank >= 1, x.shape.count == spatialRank + 2 else {
            throw RuleViolation(
                .shapeMismatch,
                "the \(role) \(describe(x.shape)) is not [N, C, spatial...] with \(spatialRank) spatial "
                    + "axes (as many as the strides)")
        }
    }

    /// Every geometry array has one entry per spatial axis.
    private static func requireGeometry(_ arrays: [(String, Int)], spatialRank: Int) throws(RuleViolation) {
        for (name, count) in arrays where count != spatialRank {
            throw RuleViolation(.invalidArgument, "\(name) has \(count) entries for \(spatialRank) spatial axes")
        }
    }

    /// The optional bias (one value per result channel) and, when the geometry adds one, the
    /// residual (the result's own shape and type): `[x, w, bias?, residual?]`.
    private static func requireAddends(
        _ inputs: [TensorSignature], _ geometry: ConvolutionGeometry, result: TensorSignature
    ) throws(RuleViolation) {
        let most = geometry.addsResidual ? 4 : 3
        guard inputs.count <= most, inputs.count > (geometry.addsResidual ? 2 : 1) else {
            throw RuleViolation(
                .invalidArgument,
                "a convolution takes an input, a weight"
                    + (geometry.addsResidual ? ", a bias and a residual" : " and a bias")
                    + ", not \(inputs.count) operands")
        }
        if let index = geometry.biasIndex(operandCount: inputs.count), inputs[index].shape != [result.shape[1]] {
            throw RuleViolation(
                .shapeMismatch,
                "the bias \(describe(inputs[index].shape)) is not one value per output channel ([\(result.shape[1])])")
        }
        if let index = geometry.residualIndex(operandCount: inputs.count), inputs[index] != result {
            throw RuleViolation(
                .shapeMismatch,
                "the residual \(describe(inputs[index].shape)) (\(inputs[index].scalarType)) is not the result's "
                    + "\(describe(result.shape)) (\(result.scalarType))")
        }
    }

    /// A convolution's geometry, input and weight, the two of the spatial rank of its strides and
    /// every geometry array of that length.
    private static func convolutionOperands(
        _ op: Op, _ inputs: [TensorSignature]
    ) throws(RuleViolation) -> (ConvolutionGeometry, TensorSignature, TensorSignature) {
        let geometry = op.convolutionGeometry
        let rank = geometry.spatialRank
        let (x, w) = (inputs[0], inputs[1])
        try requireImage(x, spatialRank: rank, "input")
        try requireImage(w, spatialRank: rank, "weight")
        try requireGeometry(
            [
                ("dilations", geometry.dilations.count), ("padding", geometry.padding.count),
                ("output padding", geometry.outputPadding.count),
            ], spatialRank: rank)
        return (geometry, x, w)
    }

    /// `[N, C, in...] ⊛ [M, C/groups, kernel...] (+ [M])` → `[N, M, out...]`.
    static let convolution: ShapeRule = { op, inputs throws(RuleViolation) in
        let (geometry, x, w) = try convolutionOperands(op, inputs)
        let rank = geometry.spatialRank
        let groups = geometry.groups
        guard groups > 0, x.shape[1] % groups == 0, w.shape[0] % groups == 0, w.shape[1] * groups == x.shape[1],
            geometry.outputPadding.allSatisfy({ $0 == 0 })
        else {
            throw RuleViolation(
                .shapeMismatch,
                "a weight \(describe(w.shape)) in \(groups) groups does not fit \(x.shape[1]) input channels "
                    + "(it needs [M, C/groups, kernel...] with M and C multiples of the groups)")
        }
        var shape = [x.shape[0], w.shape[0]]
        for axis in 0..<rank {
            shape.append(
                try WindowArithmetic.windowCount(
                    extent: x.shape[axis + 2], kernel: w.shape[axis + 2], stride: geometry.strides[axis],
                    dilation: geometry.dilations[axis], padding: geometry.padding[axis], ceil: false))
        }
        let result = TensorSignature(shape: shape, scalarType: x.scalarType)
        try requireAddends(inputs, geometry, result: result)
        return result
    }

    /// The transposed convolution (the gradient of a convolution with respect to its input):
    /// `[N, C, in...]` with a weight `[C, M/groups, kernel...]` (+ `[M]`) → `[N, M, out...]`,
    /// `out = (in - 1)·stride - padding + dilation·(kernel - 1) + outputPadding + 1`.
    static let convolutionTranspose: ShapeRule = { op, inputs throws(RuleViolation) in
        let (geometry, x, w) = try convolutionOperands(op, inputs)
        let rank = geometry.spatialRank
        let groups = geometry.groups
        guard groups > 0, x.shape[1] % groups == 0, w.shape[0] == x.shape[1] else {
            throw RuleViolation(
                .shapeMismatch,
                "a transposed-convolution weight \(describe(w.shape)) in \(groups) groups does not fit "
                    + "\(x.shape[1]) input channels (it needs [C, M/groups, kernel...])")
        }
        let (channels, overflow) = w.shape[1].multipliedReportingOverflow(by: groups)
        guard !overflow else { throw RuleViolation(.tooLarge, "the output channels overflow an Int") }
        var shape = [x.shape[0], channels]
        for axis in 0..<rank {
            let (stride, dilation, kernel) = (geometry.strides[axis], geometry.dilations[axis], w.shape[axis + 2])
            let padding = geometry.padding[axis]
            let extra = geometry.outputPadding[axis]
            guard stride > 0, dilation > 0, kernel > 0, padding.before >= 0, padding.after >= 0, extra >= 0,
                extra < Swift.max(stride, dilation)
            else {
                throw RuleViolation(
                    .invalidArgument,
                    "strides, dilations and kernel must be positive, padding non-negative and the output padding "
                        + "below the stride or the dilation")
            }
            let (grown, grownOverflow) = Swift.max(x.shape[axis + 2] - 1, 0).multipliedReportingOverflow(by: stride)
            let (span, spanOverflow) = dilation.multipliedReportingOverflow(by: kernel - 1)
            guard !grownOverflow, !spanOverflow, let total = Tensor.checkedSum([grown, span, extra, 1]) else {
                throw RuleViolation(.tooLarge, "the result's extent overflows an Int")
            }
            let extent = x.shape[axis + 2] == 0 ? 0 : total - padding.before - padding.after
            guard extent >= 0 else {
                throw RuleViolation(
                    .invalidArgument, "padding (\(padding.before), \(padding.after)) removes more than the result has")
            }
            shape.append(extent)
        }
        let result = TensorSignature(shape: shape, scalarType: x.scalarType)
        try requireAddends(inputs, geometry, result: result)
        return result
    }

    /// `[N, C, in...]` → `[N, C, out...]`, one output per window position.
    static let pooling: ShapeRule = { op, inputs throws(RuleViolation) in
        let geometry = op.poolingGeometry
        let rank = geometry.spatialRank
        let x = inputs[0]
        try requireImage(x, spatialRank: rank, "input")
        try requireGeometry(
            [
                ("strides", geometry.strides.count), ("dilations", geometry.dilations.count),
                ("padding", geometry.padding.count),
            ], spatialRank: rank)
        var shape = Array(x.shape.prefix(2))
        for axis in 0..<rank {
            let padding = geometry.padding[axis]
            let count = try WindowArithmetic.windowCount(
                extent: x.shape[axis + 2], kernel: geometry.kernel[axis], stride: geometry.strides[axis],
                dilation: geometry.dilations[axis], padding: padding, ceil: geometry.ceilMode)
            // A pad as wide as the window would make windows of padding alone (the window's span
            // fits an Int: `windowCount` checked it).
            let span = geometry.dilations[axis] * (geometry.kernel[axis] - 1) + 1
            guard padding.before < span, padding.after < span else {
                throw RuleViolation(
                    .invalidArgument, "padding (\(padding.before), \(padding.after)) must be smaller than the window")
            }
            shape.append(count)
        }
        return TensorSignature(shape: shape, scalarType: x.scalarType)
    }
}
