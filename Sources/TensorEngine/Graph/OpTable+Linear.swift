// The linear row of the op table: a product with a bias added to each of its rows, the
// projection every transformer and classifier layer computes. Its shape and cost rules, its
// decomposition (the reference) and its parity samples.

extension ShapeRules {
    /// `x [m, k]`, `weight [k, n]`, `bias [n]` and an optional residual `[m, n]` (a shortcut
    /// added after the bias): the result is `[m, n]`.
    static let linear: ShapeRule = { _, inputs throws(RuleViolation) in
        let (x, weight, bias) = (inputs[0].shape, inputs[1].shape, inputs[2].shape)
        guard x.count == 2, weight.count == 2, bias.count == 1, x[1] == weight[0], bias[0] == weight[1] else {
            throw RuleViolation(
                .shapeMismatch,
                "linear takes x [m, k], weight [k, n] and bias [n]; got \(describe(x)), \(describe(weight)) "
                    + "and \(describe(bias))")
        }
        let shape = [x[0], weight[1]]
        guard inputs.count <= 4 else {
            throw RuleViolation(.invalidArgument, "linear takes 3 or 4 operands; got \(inputs.count)")
        }
        if inputs.count > 3, inputs[3].shape != shape {
            throw RuleViolation(
                .shapeMismatch,
                "linear's residual must be of its result's shape \(describe(shape)); got \(describe(inputs[3].shape))")
        }
        return TensorSignature(shape: shape, scalarType: inputs[0].scalarType)
    }
}

extension LinearActivation {
    /// The elementwise op that computes the activation on its own: the decomposition's last step.
    var op: Op {
        switch self {
        case .relu: Op(.relu)
        case .gelu(let approximation): .gelu(approximation)
        }
    }
}

extension CostRules {
    /// The product's cost and one more FLOP per result for its bias, which the kernels add as
    /// each piece of the result is finished (the bias is read once per piece, from cache), one
    /// for a residual, and the activation's FLOPs, applied there too.
    static let linear: CostRule = { op, inputs, output in
        let k = Double(inputs.first?.signature.shape.last ?? 0)
        let shape = output.shape
        let skinny = Swift.min(shape[0], shape[1]) < 16
        let activation = op.linearActivation.map { $0.op.elementwiseExpression.flops } ?? 0
        let residual: Double = inputs.count > 3 ? 1 : 0
        return streaming(
            op, inputs, output, flopsPerElement: 2 * k + 1 + residual + activation,
            costClass: skinny ? .matrixVector : .matmul)
    }
}

extension Decompositions {
    /// The product, then the bias broadcast along its rows, the residual, then the activation.
    static let linear: @Sendable (Op, [Tensor]) -> Tensor = { op, operands in
        var sum = Tensor.binary(.add, Tensor.record(.matmul, [operands[0], operands[1]], at: nil), operands[2], at: nil)
        if operands.count > 3 { sum = Tensor.binary(.add, sum, operands[3], at: nil) }
        return op.linearActivation.map { Tensor.record($0.op, [sum], at: nil) } ?? sum
    }
}

extension Samples {
    /// A few rows and many, one row (the vector·matrix path), one column, transposed and strided
    /// operands (a `Gemm` with `transB`), no depth (the result is the bias), no rows, `Float16`, and
    /// products large enough for the backends' packed and split paths; then each activation on
    /// the paths a kernel splits differently (rows, columns, one row, one product packed whole),
    /// and residuals (contiguous and strided, with and without an activation).
    static let linear: [ParitySample] = {
        func input(_ shape: [Int], _ type: ScalarType = .float32, _ layout: SampleLayout = .contiguous) -> SampleInput {
            SampleInput(shape: shape, type: type, layout: layout)
        }
        let cases: [(String, [SampleInput])] = [
            ("rows", [input([5, 7]), input([7, 9]), input([9])]),
            ("one row", [input([1, 64]), input([64, 50]), input([50])]),
            ("one column", [input([40, 64]), input([64, 1]), input([1])]),
            ("transposed weight", [input([6, 33]), input([33, 20], .float32, .transposed), input([20])]),
            ("transposed x, strided bias",
             [input([12, 8], .float32, .transposed), input([8, 5]), input([5], .float32, .strided)]),
            ("reversed weight", [input([3, 6]), input([6, 4], .float32, .reversed), input([4])]),
            ("no depth: the bias alone", [input([3, 0]), input([0, 4]), input([4])]),
            ("no rows", [input([0, 5]), input([5, 3]), input([3])]),
            ("float16", [input([4, 6], .float16), input([6, 5], .float16), input([5], .float16)]),
            ("a model's rows at batch 1", [input([12, 384]), input([384, 160]), input([160])]),
            ("large", [input([96, 200]), input([200, 130]), input([130])]),
        ]
        let activations: [(String, LinearActivation)] = [
            ("relu", .relu), ("gelu", .gelu(.none)), ("tanh gelu", .gelu(.tanh)),
        ]
        let activated: [(String, [SampleInput])] = [
            ("rows", [input([5, 7]), input([7, 9]), input([9])]),
            ("one row", [input([1, 64]), input([64, 50]), input([50])]),
            ("a model's rows at batch 1", [input([12, 384]), input([384, 160]), input([160])]),
            ("many rows", [input([200, 96]), input([96, 70]), input([70])]),
            ("transposed x, no depth", [input([3, 0], .float32, .transposed), input([0, 4]), input([4])]),
            ("float16", [input([4, 6], .float16), input([6, 5], .float16), input([5], .float16)]),
        ]
        let residuals: [(String, [SampleInput], LinearActivation?)] = [
            ("a residual", [input([12, 384]), input([384, 96]), input([96]), input([12, 96])], nil),
            ("a strided residual",
             [input([5, 7]), input([7, 9]), input([9]), input([5, 9], .float32, .transposed)], nil),
            ("one row, a residual", [input([1, 64]), input([64, 50]), input([50]), input([1, 50])], nil),
            ("many rows, a residual, then gelu",
             [input([200, 96]), input([96, 70]), input([70]), input([200, 70])], .gelu(.none)),
            ("float16, a residual", [input([4, 6], .float16), input([6, 5], .float16), input([5], .float16),
                                      input([4, 5], .float16)], nil),
        ]
        let withResiduals = residuals.map { label, inputs, activation in
            ParitySample(
                label: label, inputs: inputs, apply: .op(activation.map { .linear(activation: $0) } ?? .linear),
                reductionLength: inputs[0].shape.last ?? 1)
        }
        let plain = cases.map { label, inputs in
            ParitySample(label: label, inputs: inputs, apply: .op(.linear), reductionLength: inputs[0].shape.last ?? 1)
        }
        return plain + withResiduals
            + activations.flatMap { name, activation in
                activated.map { label, inputs in
                    ParitySample(
                        label: "\(label), then \(name)", inputs: inputs, apply: .op(.linear(activation: activation)),
                        reductionLength: inputs[0].shape.last ?? 1)
                }
            }
    }()
}
