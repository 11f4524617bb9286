// The layer norm row of the op table: normalization along an axis, with the scale and bias a
// transformer's layer norm applies after it, in the same pass. Its shape rule and the parity
// samples of the affine form (the plain form is sampled as every line op is).

extension ShapeRules {
    /// `x` alone, or `x`, `scale` and `bias`, the last two of the axis's extent: the result has
    /// `x`'s shape.
    static let layerNorm: ShapeRule = { op, inputs throws(RuleViolation) in
        try Op.requireAxes(op.axes, rank: inputs[0].shape.count)
        guard inputs.count == 1 || inputs.count == 3 else {
            throw RuleViolation(
                .invalidArgument, "layerNorm takes x, or x, scale and bias; got \(inputs.count) operands")
        }
        let extent = [inputs[0].shape[op.axis]]
        for parameter in inputs.dropFirst() where parameter.shape != extent {
            throw RuleViolation(
                .shapeMismatch,
                "layerNorm's scale and bias must be of the axis's extent \(describe(extent)); got "
                    + describe(parameter.shape))
        }
        return inputs[0]
    }
}

extension Samples {
    /// The affine form: rows short and long (the long-row kernel, a ragged tail), one row, the
    /// axis first and in the middle (moved last by the kernels), strided and reversed parameters, a
    /// transposed input, no rows, special values and `Float16`.
    static let layerNormAffine: [ParitySample] = {
        func input(_ shape: [Int], _ type: ScalarType = .float32, _ layout: SampleLayout = .contiguous) -> SampleInput {
            SampleInput(shape: shape, type: type, layout: layout)
        }
        let cases: [(String, Int, [SampleInput])] = [
            ("affine rows", 1, [input([3, 5]), input([5]), input([5])]),
            ("affine hidden 384", 1, [input([12, 384]), input([384]), input([384])]),
            ("affine long rows", 1, [input([4, 1031]), input([1031]), input([1031])]),
            ("affine one row", 1, [input([1, 20]), input([20]), input([20])]),
            ("affine axis 0", 0, [input([6, 4]), input([6]), input([6])]),
            ("affine middle axis, transposed", 1, [input([2, 7, 3], .float32, .transposed), input([7]), input([7])]),
            ("affine strided and reversed parameters", 1,
             [input([5, 9]), input([9], .float32, .strided), input([9], .float32, .reversed)]),
            ("affine no rows", 1, [input([0, 8]), input([8]), input([8])]),
            ("affine float16", 1, [input([3, 40], .float16), input([40], .float16), input([40], .float16)]),
            ("affine special values", 1,
             [SampleInput(shape: [11, 4], values: .special(shift: 0)), input([4]),
              SampleInput(shape: [4], values: .special(shift: 3))]),
        ]
        return cases.map { label, axis, inputs in
            ParitySample(label: label, inputs: inputs, apply: .op(.layerNorm(axis: axis, epsilon: 1e-5)),
                         reductionLength: inputs[0].shape[axis])
        }
    }()
}

extension CostRules {
    /// Two passes over each line for its mean and variance and a third that writes it: 8 FLOPs an
    /// element, 2 more with a scale and bias (read once per row, from cache).
    static let layerNorm: CostRule = { op, inputs, output in
        lines(flopsPerElement: inputs.count == 3 ? 10 : 8)(op, inputs, output)
    }
}
