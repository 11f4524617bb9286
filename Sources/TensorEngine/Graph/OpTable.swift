// The op table: one row per kind of op, the only place an op's facts are written. Elementwise ops
// are their expressions (every backend runs them from it), composite ops their decompositions,
// primitives their rules; the naive backend's loops are the primitives' reference.

/// Every kind of op the engine knows: the rows of the op table below.
///
/// The enum has no payloads, so the compiler lists every case (``allCases``) and every switch over
/// it is exhaustive: the parity suite, the kernel registries and the table itself see a new op by
/// construction. What a kind computes beyond its operands (axes, shapes, a target type) is in the
/// ``Op``'s attributes.
package enum OpKind: Int, Sendable, Hashable, CaseIterable {
    // Sources
    case constant
    // Elementwise, one operand
    case negate, abs, sign, exp, log, squareRoot, rsqrt, square, reciprocal
    case sin, cos, tanh, floor, ceil, round, sigmoid, relu, erf, gelu, silu, logicalNot
    case asinh, tan, asin, acos, atan, sinh, cosh, acosh, atanh, exp2
    // Elementwise, two operands
    case add, subtract, multiply, divide, remainder, pow, minimum, maximum
    case equal, notEqual, less, lessEqual, greater, greaterEqual, logicalAnd, logicalOr, logicalXor
    // Elementwise, other
    case select, cast
    // Reductions
    case sum, mean, max, min, product, argmax, argmin, variance, all, any
    // Along lines
    case cumulativeSum, cumulativeProduct, topK, softmax, logSoftmax, layerNorm
    // Matrix products
    case matmul, linear, attention
    // Sliding windows over spatial axes
    case convolution, convolutionTranspose, maxPool, averagePool
    // Views
    case reshape, permute, broadcast, slice
    // Data movement
    case contiguous, pad, concat, append, gather, scatter
}

extension OpKind {
    /// The kind's row; read through ``descriptor``, which makes each row once.
    var row: OpDescriptor {
        switch self {
        case .constant:
            return OpDescriptor(
                name: caseName, category: .source, arity: .exactly(0), operandTypes: .uniform(.all),
                shape: ShapeRules.constant, cost: CostRules.free, tolerance: .exact, semantics: .source,
                samples: .none)
        case .negate: return unary(.numeric) { -$0 }
        case .abs: return unary(.numeric) { .absolute($0) }
        case .sign: return unary(.numeric) { x in .select(x > 0, .literal(1), .select(x < 0, .literal(-1), x)) }
        case .exp: return unary(.floats) { .math(.exp, [$0]) }
        case .log: return unary(.floats) { .math(.log, [$0]) }
        case .squareRoot: return unary(.floats) { .math(.sqrt, [$0]) }
        case .rsqrt: return unary(.floats) { 1 / .math(.sqrt, [$0]) }
        case .square: return unary(.numeric) { $0 * $0 }
        case .reciprocal: return unary(.floats) { 1 / $0 }
        case .sin: return unary(.floats) { .math(.sin, [$0]) }
        case .cos: return unary(.floats) { .math(.cos, [$0]) }
        case .tanh: return unary(.floats) { .math(.tanh, [$0]) }
        case .floor: return unary(.floats) { .math(.floor, [$0]) }
        case .ceil: return unary(.floats) { .math(.ceil, [$0]) }
        case .round: return unary(.floats) { .math(.rint, [$0]) }
        case .sigmoid: return unary(.floats) { 1 / (1 + .math(.exp, [-$0])) }
        case .relu: return unary(.numeric) { .arithmetic(.maximum, $0, .literal(0)) }
        case .erf: return unary(.floats) { .math(.erf, [$0]) }
        case .gelu:
            return elementwise(.exactly(1), .uniform(.floats), variants: [.gelu(.none), .gelu(.tanh)]) { op, x in
                switch op.geluApproximation {
                case .none: (x[0] * 0.5) * (1 + .apply(Op(.erf), [x[0] * 0.5.squareRoot()]))
                case .tanh:
                    // 0.5·x·(1 + tanh(z)) as x·sigmoid(2z), z = √(2/π)·(x + 0.044715·x³): the same
                    // function without the cancellation of 1 + tanh(z) where z is very negative.
                    x[0] * .apply(Op(.sigmoid), [(x[0] + x[0] * x[0] * x[0] * 0.044715) * (8 / Double.pi).squareRoot()])
                }
            }
        case .silu: return unary(.floats) { $0 * .apply(Op(.sigmoid), [$0]) }
        case .logicalNot: return unary(.bool, result: .bool) { .compare(.equal, $0, .literal(0)) }
        case .asinh: return unary(.floats) { .math(.asinh, [$0]) }
        case .tan: return unary(.floats) { .math(.tan, [$0]) }
        case .asin: return unary(.floats) { .math(.asin, [$0]) }
        case .acos: return unary(.floats) { .math(.acos, [$0]) }
        case .atan: return unary(.floats) { .math(.atan, [$0]) }
        case .sinh: return unary(.floats) { .math(.sinh, [$0]) }
        case .cosh: return unary(.floats) { .math(.cosh, [$0]) }
        case .acosh: return unary(.floats) { .math(.acosh, [$0]) }
        case .atanh: return unary(.floats) { .math(.atanh, [$0]) }
        case .exp2: return unary(.floats) { .math(.exp2, [$0]) }
        case .add: return binary(.numeric) { $0 + $1 }
        case .subtract: return binary(.numeric) { $0 - $1 }
        case .multiply: return binary(.numeric) { $0 * $1 }
        case .divide: return binary(.numeric) { .arithmetic(.divide, $0, $1) }
        case .remainder: return binary(.numeric) { .arithmetic(.remainder, $0, $1) }
        case .pow: return binary(.floats) { .math(.pow, [$0, $1]) }
        case .minimum: return binary(.numeric) { .arithmetic(.minimum, $0, $1) }
        case .maximum: return binary(.numeric) { .arithmetic(.maximum, $0, $1) }
        case .equal: return comparison(.equal, .all)
        case .notEqual: return comparison(.notEqual, .all)
        case .less: return comparison(.less, .numeric)
        case .lessEqual: return comparison(.lessEqual, .numeric)
        case .greater: return comparison(.greater, .numeric)
        case .greaterEqual: return comparison(.greaterEqual, .numeric)
        case .logicalAnd: return binary(.bool, result: .bool) { .arithmetic(.minimum, $0 != 0, $1 != 0) }
        case .logicalOr: return binary(.bool, result: .bool) { .arithmetic(.maximum, $0 != 0, $1 != 0) }
        case .logicalXor: return binary(.bool, result: .bool) { .compare(.notEqual, $0 != 0, $1 != 0) }
        case .select:
            return elementwise(.exactly(3), .masked(.all), variants: [.none]) { _, x in .select(x[0], x[1], x[2]) }
        case .cast:
            return elementwise(
                .exactly(1), .uniform(.all), result: .castTarget,
                variants: ScalarType.allCases.map(OpAttributes.scalarType)
            ) { _, x in x[0] }
        case .sum: return reduction(.numeric, .sum, .combined, .axes(specialValues: true))
        case .max: return reduction(.numeric, .maximum, .combined, .axes(specialValues: true))
        case .min: return reduction(.numeric, .minimum, .combined, .axes(specialValues: true))
        case .product: return reduction(.numeric, .product, .combined, .axes(specialValues: false))
        case .mean: return reduction(.floats, .sum, .mean, .axes(specialValues: true))
        case .argmax: return reduction(.numeric, .maximum, .index, .oneAxis)
        case .argmin: return reduction(.numeric, .minimum, .index, .oneAxis)
        case .variance:
            return OpDescriptor(
                name: caseName, category: .reduction, arity: .exactly(1), operandTypes: .uniform(.floats),
                shape: ShapeRules.reduction, cost: CostRules.reduction(flopsPerElement: 4), tolerance: .accumulating,
                semantics: .composite(Decomposition(build: Decompositions.variance)),
                samples: .reduction(.axes(specialValues: true)) { .reduction(self, axes: $0, keepRank: $1) })
        case .all: return logicalReduction(Decompositions.all)
        case .any: return logicalReduction(Decompositions.any)
        case .cumulativeSum, .cumulativeProduct:
            return OpDescriptor(
                name: caseName, category: .lineWise, arity: .exactly(1), operandTypes: .uniform(.numeric),
                shape: ShapeRules.alongAxis, cost: CostRules.lines(flopsPerElement: 1), tolerance: .accumulating,
                semantics: .primitive, samples: .reduction(.scan) { axes, _ in .alongAxis(self, axes[0]) })
        case .topK:
            return OpDescriptor(
                name: caseName, category: .lineWise, arity: .exactly(1), operandTypes: .uniform(.numeric),
                shape: ShapeRules.topK, cost: CostRules.topK, tolerance: .exact, semantics: .primitive,
                samples: .cases(Samples.topK))
        case .softmax: return normalization(Decompositions.softmax) { .alongAxis(self, $0) }
        case .logSoftmax: return normalization(Decompositions.logSoftmax) { .alongAxis(self, $0) }
        case .layerNorm:
            return OpDescriptor(
                name: caseName, category: .lineWise, arity: .atLeast(1), operandTypes: .uniform(.floats),
                shape: ShapeRules.layerNorm, cost: CostRules.layerNorm, tolerance: .normalizing,
                semantics: .composite(Decomposition(build: Decompositions.layerNorm)),
                samples: .lines({ .layerNorm(axis: $0, epsilon: 1e-5) }, more: Samples.layerNormAffine))
        case .matmul:
            return OpDescriptor(
                name: caseName, category: .matmul, arity: .exactly(2), operandTypes: .uniform(.floats),
                shape: ShapeRules.matmul, cost: CostRules.matmul, tolerance: .accumulating, semantics: .primitive,
                samples: .cases(Samples.matmul))
        case .linear:
            return OpDescriptor(
                name: caseName, category: .matmul, arity: .atLeast(3), operandTypes: .uniform(.floats),
                shape: ShapeRules.linear, cost: CostRules.linear, tolerance: .accumulating,
                semantics: .composite(Decomposition(build: Decompositions.linear)), samples: .cases(Samples.linear))
        case .attention:
            return OpDescriptor(
                name: caseName, category: .matmul, arity: .atLeast(3), operandTypes: .uniform(.floats),
                shape: ShapeRules.attention, cost: CostRules.attention, tolerance: .accumulating,
                semantics: .composite(Decomposition(build: Decompositions.attention)), samples: .cases(Samples.attention))
        case .convolution:
            return OpDescriptor(
                name: caseName, category: .window, arity: .atLeast(2), operandTypes: .uniform(.floats),
                shape: ShapeRules.convolution, cost: CostRules.convolution, tolerance: .accumulating,
                semantics: .primitive, samples: .cases(Samples.convolution))
        case .convolutionTranspose:
            return OpDescriptor(
                name: caseName, category: .window, arity: .atLeast(2), operandTypes: .uniform(.floats),
                shape: ShapeRules.convolutionTranspose, cost: CostRules.convolutionTranspose, tolerance: .accumulating,
                semantics: .composite(Decomposition(build: Decompositions.convolutionTranspose)),
                samples: .cases(Samples.convolutionTranspose))
        case .maxPool: return pooling(.numeric, tolerance: .exact, Samples.maxPool)
        case .averagePool: return pooling(.floats, tolerance: .accumulating, Samples.averagePool)
        case .reshape:
            return view(ShapeRules.reshape, Samples.reshape) { op, layout in layout.reshaped(op.targetShape) }
        case .permute:
            return view(ShapeRules.permute, Samples.permute) { op, layout in layout.permuted(op.permutation) }
        case .broadcast:
            return view(ShapeRules.broadcast, Samples.broadcast) { op, layout in layout.broadcast(to: op.targetShape) }
        case .slice: return view(ShapeRules.slice, Samples.slice) { op, layout in layout.sliced(op.sliceDimensions) }
        case .contiguous:
            return movement(.exactly(1), ShapeRules.sameAsOperand, Samples.contiguous) { _, inputs, _ in
                inputs.first?.layout?.contiguousSuffix.elements
            }
        case .pad: return movement(.exactly(1), ShapeRules.pad, Samples.pad) { _, _, _ in nil }
        case .concat:
            return movement(.atLeast(1), ShapeRules.concat, Samples.concat) { op, _, output in
                output.shape.dropFirst(op.axis + 1).reduce(1, *)
            }
        case .append:
            return OpDescriptor(
                name: caseName, category: .dataMovement, arity: .atLeast(1), operandTypes: .uniform(.all),
                shape: ShapeRules.concat, cost: CostRules.append, tolerance: .exact, semantics: .primitive,
                samples: .cases(Samples.append)
            ) { op, first, firstSignature, output in
                AppendGeometry(
                    axis: op.axis, first: first, appended: output.shape[op.axis] - firstSignature.shape[op.axis])?.result
            }
        case .gather:
            return OpDescriptor(
                name: caseName, category: .dataMovement, arity: .exactly(2), operandTypes: .first(.all),
                shape: ShapeRules.gather, cost: CostRules.gather, tolerance: .exact, semantics: .primitive,
                samples: .cases(Samples.gather))
        case .scatter:
            return OpDescriptor(
                name: caseName, category: .dataMovement, arity: .exactly(3), operandTypes: .first(.all),
                shape: ShapeRules.scatter, cost: CostRules.movement { _, _, _ in nil }, tolerance: .exact,
                semantics: .primitive, samples: .cases(Samples.scatter))
        }
    }

    /// The case's name, read by reflection once per row (``name`` reads it from the row).
    private var caseName: String { String(describing: self) }

    private func elementwise(
        _ arity: Arity, _ types: OperandTypes, result: ElementwiseResult = .operandType, variants: [OpAttributes],
        _ expression: @escaping @Sendable (Op, [ScalarExpression]) -> ScalarExpression
    ) -> OpDescriptor {
        let operands = (0..<arity.sampleCount).map(ScalarExpression.operand)
        let definition = ElementwiseDefinition(result: result) { op in expression(op, operands) }
        let sameSignatureTypes: ScalarTypeSet? =
            switch (types, result) {
            case (.uniform(let accepted), .operandType): accepted
            case (.uniform, .bool), (.uniform, .castTarget), (.first, _), (.masked, _): nil
            }
        return OpDescriptor(
            name: caseName, category: .elementwise, arity: arity, operandTypes: types,
            shape: ShapeRules.elementwise(result), cost: CostRules.elementwise, tolerance: .fromExpression,
            semantics: .elementwise(definition), samples: .elementwise(variants: variants),
            sameSignatureTypes: sameSignatureTypes)
    }

    private func unary(
        _ types: ScalarTypeSet, result: ElementwiseResult = .operandType,
        _ expression: @escaping @Sendable (ScalarExpression) -> ScalarExpression
    ) -> OpDescriptor {
        elementwise(.exactly(1), .uniform(types), result: result, variants: [.none]) { _, x in expression(x[0]) }
    }

    private func binary(
        _ types: ScalarTypeSet, result: ElementwiseResult = .operandType,
        _ expression: @escaping @Sendable (ScalarExpression, ScalarExpression) -> ScalarExpression
    ) -> OpDescriptor {
        elementwise(.exactly(2), .uniform(types), result: result, variants: [.none]) { _, x in expression(x[0], x[1]) }
    }

    private func comparison(_ comparison: Comparison, _ types: ScalarTypeSet) -> OpDescriptor {
        binary(types, result: .bool) { .compare(comparison, $0, $1) }
    }

    private func reduction(
        _ types: ScalarTypeSet, _ monoid: ReductionMonoid, _ result: ReductionResult,
        _ samples: ReductionSamples
    ) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .reduction, arity: .exactly(1), operandTypes: .uniform(types),
            shape: result == .index ? ShapeRules.argReduction : ShapeRules.reduction,
            cost: CostRules.reduction(flopsPerElement: 1), tolerance: result == .index ? .exact : .accumulating,
            semantics: .reduction(ReductionDefinition(monoid: monoid, result: result)),
            samples: .reduction(samples) { .reduction(self, axes: $0, keepRank: $1) })
    }

    /// `all` and `any`: a `Bool` reduction over axes, written with integer sums.
    private func logicalReduction(_ decomposition: @escaping @Sendable (Op, [Tensor]) -> Tensor) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .reduction, arity: .exactly(1), operandTypes: .uniform(.bool),
            shape: ShapeRules.reduction, cost: CostRules.reduction(flopsPerElement: 2), tolerance: .exact,
            semantics: .composite(Decomposition(build: decomposition)),
            samples: .reduction(.axes(specialValues: false)) { .reduction(self, axes: $0, keepRank: $1) })
    }

    private func normalization(
        _ decomposition: @escaping @Sendable (Op, [Tensor]) -> Tensor,
        sample: @escaping @Sendable (Int) -> Op
    ) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .lineWise, arity: .exactly(1), operandTypes: .uniform(.floats),
            shape: ShapeRules.alongAxis, cost: CostRules.lines(flopsPerElement: 14),
            tolerance: .normalizing, semantics: .composite(Decomposition(build: decomposition)), samples: .lines(sample)
        )
    }

    private func pooling(
        _ types: ScalarTypeSet, tolerance: ToleranceRule, _ samples: [ParitySample]
    ) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .window, arity: .exactly(1), operandTypes: .uniform(types),
            shape: ShapeRules.pooling, cost: CostRules.pooling, tolerance: tolerance, semantics: .primitive,
            samples: .cases(samples))
    }

    private func view(
        _ shape: @escaping ShapeRule, _ samples: [ParitySample],
        _ layout: @escaping @Sendable (Op, Layout) -> Layout?
    ) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .view, arity: .exactly(1), operandTypes: .uniform(.all), shape: shape,
            cost: CostRules.free, tolerance: .exact, semantics: .view(layout), samples: .cases(samples))
    }

    private func movement(
        _ arity: Arity, _ shape: @escaping ShapeRule, _ samples: [ParitySample],
        runLength: @escaping @Sendable (Op, [CostOperand], TensorSignature) -> Int?
    ) -> OpDescriptor {
        OpDescriptor(
            name: caseName, category: .dataMovement, arity: arity, operandTypes: .uniform(.all), shape: shape,
            cost: CostRules.movement(runLength: runLength), tolerance: .exact, semantics: .primitive,
            samples: .cases(samples))
    }
}

// Operators for writing expressions in the table (file-private, so no other arithmetic in the
// module sees them): `x * 0.5`, `1 / x`, `x > 0`.
extension ScalarExpression {
    fileprivate static func + (a: ScalarExpression, b: ScalarExpression) -> ScalarExpression { .arithmetic(.add, a, b) }
    fileprivate static func - (a: ScalarExpression, b: ScalarExpression) -> ScalarExpression {
        .arithmetic(.subtract, a, b)
    }
    fileprivate static func * (a: ScalarExpression, b: ScalarExpression) -> ScalarExpression {
        .arithmetic(.multiply, a, b)
    }
    fileprivate static func + (a: ScalarExpression, b: Double) -> ScalarExpression { .arithmetic(.add, a, .literal(b)) }
    fileprivate static func + (a: Double, b: ScalarExpression) -> ScalarExpression { .arithmetic(.add, .literal(a), b) }
    fileprivate static func * (a: ScalarExpression, b: Double) -> ScalarExpression {
        .arithmetic(.multiply, a, .literal(b))
    }
    fileprivate static func / (a: Double, b: ScalarExpression) -> ScalarExpression {
        .arithmetic(.divide, .literal(a), b)
    }
    fileprivate static prefix func - (x: ScalarExpression) -> ScalarExpression { .negate(x) }
    fileprivate static func > (a: ScalarExpression, b: Double) -> ScalarExpression {
        .compare(.greater, a, .literal(b))
    }
    fileprivate static func < (a: ScalarExpression, b: Double) -> ScalarExpression { .compare(.less, a, .literal(b)) }
    fileprivate static func != (a: ScalarExpression, b: Double) -> ScalarExpression {
        .compare(.notEqual, a, .literal(b))
    }

}
