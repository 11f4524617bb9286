import Foundation

/// Elementwise ONNX operators: arithmetic, comparisons, logic, math functions, `Where`, `Cast`,
/// `Clip`. Each folds on the host when all its inputs are host constants (shape arithmetic),
/// and records the op table's op otherwise.
extension ONNXOperators {
    static let elementwise: [String: ONNXOperator] = [
        "Add": binary(.add, .init(integer: { $0 &+ $1 }, real: +)),
        "Sub": binary(.subtract, .init(integer: { $0 &- $1 }, real: -)),
        "Mul": binary(.multiply, .init(integer: { $0 &* $1 }, real: *)),
        "Div": binary(
            .divide, .init(integer: { $1 == 0 ? 0 : $0.dividedReportingOverflow(by: $1).partialValue }, real: /)),
        "Pow": ONNXOperator(lower: pow),
        "Mod": ONNXOperator(lower: mod),
        "Equal": comparison(.equal) { $0 == $1 },
        "Less": comparison(.less) { $0 < $1 },
        "LessOrEqual": comparison(.lessEqual) { $0 <= $1 },
        "Greater": comparison(.greater) { $0 > $1 },
        "GreaterOrEqual": comparison(.greaterEqual) { $0 >= $1 },
        "And": logical(.logicalAnd) { $0 && $1 },
        "Or": logical(.logicalOr) { $0 || $1 },
        "Xor": logical(.logicalXor) { $0 != $1 },
        "Not": unary(.logicalNot, result: .bool),
        "Neg": unary(.negate) { -$0 },
        "Abs": unary(.abs) { Swift.abs($0) },
        "Sign": unary(.sign) { $0 > 0 ? 1 : $0 < 0 ? -1 : $0 },
        "Reciprocal": unary(.reciprocal),
        "Sqrt": unary(.squareRoot),
        "Exp": unary(.exp),
        "Log": unary(.log),
        "Erf": unary(.erf),
        "Tanh": unary(.tanh),
        "Sigmoid": unary(.sigmoid),
        "Relu": unary(.relu),
        "Floor": unary(.floor) { Foundation.floor($0) },
        "Ceil": unary(.ceil) { Foundation.ceil($0) },
        "Round": unary(.round),
        "Sin": unary(.sin), "Cos": unary(.cos), "Tan": unary(.tan),
        "Asin": unary(.asin), "Acos": unary(.acos), "Atan": unary(.atan),
        "Sinh": unary(.sinh), "Cosh": unary(.cosh),
        "Asinh": unary(.asinh), "Acosh": unary(.acosh), "Atanh": unary(.atanh),
        "Max": variadic(
            .maximum, .init(integer: { Swift.max($0, $1) }, real: { $0.isNaN || $1.isNaN ? .nan : Swift.max($0, $1) })),
        "Min": variadic(
            .minimum, .init(integer: { Swift.min($0, $1) }, real: { $0.isNaN || $1.isNaN ? .nan : Swift.min($0, $1) })),
        "Sum": variadic(.add, .init(integer: { $0 &+ $1 }, real: +)),
        "Mean": ONNXOperator(lower: mean),
        "Where": ONNXOperator(lower: whereSelect),
        "Cast": ONNXOperator(lower: cast),
        "CastLike": ONNXOperator(since: 15, lower: castLike),
        "Clip": ONNXOperator(lower: clip),
        "IsNaN": ONNXOperator(since: 9) { node throws(ModelError) in
            let x = try node.tensor(0)
            return [try node.output(x .!= x, .bool)]
        },
        "IsInf": ONNXOperator(since: 10, lower: isInf),
    ]

    /// A unary op: folded with `host` when given and the input is a constant.
    static func unary(
        _ kind: OpKind, result: ONNXDataType? = nil, host: (@Sendable (Double) -> Double)? = nil
    ) -> ONNXOperator {
        ONNXOperator { node throws(ModelError) in
            let input = try node.value(0)
            if case .constant(let constant) = input, let host {
                let values = constant.reals.map(host)
                let folded = ONNXConstant(dataType: constant.dataType, shape: constant.shape, values: .reals(values))
                return [.constant(folded.cast(to: constant.dataType))]
            }
            return [try node.output(Tensor.apply(kind, try node.tensor(0)), result ?? input.dataType)]
        }
    }

    /// Two operands of one engine type (ONNX requires equal types; `int64` and `int32` both run
    /// as `Int32`).
    static func binary(_ kind: OpKind, _ host: ONNXHost.Binary) -> ONNXOperator {
        ONNXOperator { node throws(ModelError) in
            if node.allConstant, let folded = ONNXHost.binary(try node.constant(0), try node.constant(1), host) {
                return [.constant(folded)]
            }
            let result = Tensor.binary(kind, try node.tensor(0), try node.tensor(1), at: nil)
            return [try node.output(result, try node.type(0))]
        }
    }

    static func comparison(_ kind: OpKind, _ compare: @escaping @Sendable (Double, Double) -> Bool) -> ONNXOperator {
        ONNXOperator { node throws(ModelError) in
            if node.allConstant,
                let folded = ONNXHost.binary(try node.constant(0), try node.constant(1), .init(compare: compare))
            {
                return [.constant(folded)]
            }
            return [try node.output(Tensor.binary(kind, try node.tensor(0), try node.tensor(1), at: nil), .bool)]
        }
    }

    static func logical(_ kind: OpKind, _ logic: @escaping @Sendable (Bool, Bool) -> Bool) -> ONNXOperator {
        ONNXOperator { node throws(ModelError) in
            if node.allConstant,
                let folded = ONNXHost.binary(try node.constant(0), try node.constant(1), .init(logical: logic))
            {
                return [.constant(folded)]
            }
            return [try node.output(Tensor.binary(kind, try node.tensor(0), try node.tensor(1), at: nil), .bool)]
        }
    }

    /// `Max`, `Min`, `Sum`: any number of operands, broadcast together.
    static func variadic(_ kind: OpKind, _ host: ONNXHost.Binary) -> ONNXOperator {
        ONNXOperator { node throws(ModelError) in
            guard node.inputCount > 0 else { throw node.error("needs at least one input", .invalidModel) }
            if node.allConstant {
                var folded: ONNXConstant? = try node.constant(0)
                for index in 1..<node.inputCount {
                    folded = try folded.flatMap { partial throws(ModelError) in
                        ONNXHost.binary(partial, try node.constant(index), host)
                    }
                }
                if let folded { return [.constant(folded)] }
            }
            var result = try node.tensor(0)
            for index in 1..<node.inputCount { result = Tensor.binary(kind, result, try node.tensor(index), at: nil) }
            return [try node.output(result, try node.type(0))]
        }
    }

    static func mean(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard node.inputCount > 0 else { throw node.error("needs at least one input", .invalidModel) }
        var result = try node.tensor(0)
        for index in 1..<node.inputCount { result = Tensor.binary(.add, result, try node.tensor(index), at: nil) }
        return [try node.output(result / Float(node.inputCount), try node.type(0))]
    }

    /// `Pow`: the exponent may be of another type; integer bases are computed in `Double`.
    static func pow(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let base = try node.tensor(0)
        let exponent = try node.tensor(1)
        let type = try node.type(0)
        if base.dtype.isFloatingPoint {
            let result = Tensor.binary(
                .pow, base, exponent.dtype == base.dtype ? exponent : exponent.converted(to: base.dtype), at: nil)
            return [try node.output(result, type)]
        }
        let result = Tensor.binary(.pow, base.converted(to: .float64), exponent.converted(to: .float64), at: nil)
        return [try node.output(result.round().converted(to: base.dtype), type)]
    }

    /// `Mod`: `fmod = 1` truncates (C's `fmod`); `fmod = 0` (integers only) takes the divisor's
    /// sign, as Python's `%` does.
    static func mod(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let (x, y) = (try node.tensor(0), try node.tensor(1))
        let truncated = Tensor.binary(.remainder, x, y, at: nil)
        guard try node.int("fmod", default: 0) == 0 else { return [try node.output(truncated, try node.type(0))] }
        guard !x.dtype.isFloatingPoint else {
            throw node.error("fmod = 0 is defined for integers only; floating-point Mod needs fmod = 1")
        }
        let zero = Tensor.scalar(0, x.dtype)
        let signsDiffer = Tensor.binary(
            .notEqual, Tensor.binary(.less, truncated, zero, at: nil), Tensor.binary(.less, y, zero, at: nil), at: nil)
        let adjust = Tensor.binary(
            .logicalAnd, Tensor.binary(.notEqual, truncated, zero, at: nil), signsDiffer, at: nil)
        let result = truncated.replacing(with: Tensor.binary(.add, truncated, y, at: nil), where: adjust)
        return [try node.output(result, try node.type(0))]
    }

    static func whereSelect(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        if node.allConstant {
            let (condition, x, y) = (try node.constant(0), try node.constant(1), try node.constant(2))
            if let shape = Op.broadcastShape(condition.shape, x.shape).flatMap({ Op.broadcastShape($0, y.shape) }),
                shape.reduce(1, *) <= ONNXConstant.hostElementLimit, x.dataType == y.dataType
            {
                let mask = ONNXHost.broadcastMap(from: condition.shape, to: shape).map { condition.booleans[$0] }
                let picks = ONNXHost.pick(x, ONNXHost.broadcastMap(from: x.shape, to: shape), shape: shape)
                let others = ONNXHost.pick(y, ONNXHost.broadcastMap(from: y.shape, to: shape), shape: shape)
                let values: ONNXConstant.Values
                switch (picks.values, others.values) {
                case (.integers(let a), .integers(let b)):
                    values = .integers(zip(mask, zip(a, b)).map { $0 ? $1.0 : $1.1 })
                case (.reals(let a), .reals(let b)): values = .reals(zip(mask, zip(a, b)).map { $0 ? $1.0 : $1.1 })
                case (.booleans(let a), .booleans(let b)):
                    values = .booleans(zip(mask, zip(a, b)).map { $0 ? $1.0 : $1.1 })
                default: values = .reals(zip(mask, zip(picks.reals, others.reals)).map { $0 ? $1.0 : $1.1 })
                }
                return [.constant(ONNXConstant(dataType: x.dataType, shape: shape, values: values))]
            }
        }
        let result = try node.tensor(2).replacing(with: try node.tensor(1), where: try node.tensor(0))
        return [try node.output(result, try node.type(1))]
    }

    /// The ONNX type a `to` attribute names, checked to be one the engine holds.
    static func castTarget(_ node: ONNXNodeContext, _ number: Int) throws(ModelError) -> (ONNXDataType, ScalarType) {
        guard let raw = Int32(exactly: number) else { throw node.error("cast to type \(number)", .invalidModel) }
        let type = ONNXDataType(rawValue: raw)
        // bfloat16 inputs widen exactly to Float, but rounding Float to bfloat16 is not an engine op.
        guard let engineType = type.engineType, type != .bfloat16 else {
            throw node.error("casts to \(type), which the engine cannot hold", .unsupportedType)
        }
        return (type, engineType)
    }

    static func cast(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard let number = try node.int("to") else { throw node.error("has no 'to' attribute", .invalidModel) }
        let (type, engineType) = try castTarget(node, number)
        return [try castValue(node, try node.value(0), to: type, engineType)]
    }

    static func castLike(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let target = try node.type(1)
        let (type, engineType) = try castTarget(node, Int(target.rawValue))
        return [try castValue(node, try node.value(0), to: type, engineType)]
    }

    private static func castValue(
        _ node: ONNXNodeContext, _ value: ONNXValue, to type: ONNXDataType, _ engineType: ScalarType
    ) throws(ModelError) -> ONNXValue {
        switch value {
        case .constant(let constant): return .constant(constant.cast(to: type))
        case .tensor(let tensor, let from):
            var result = tensor.dtype == engineType ? tensor : tensor.converted(to: engineType)
            // Narrow integer targets wrap as C casts do (double and bfloat16 are held as Float).
            if type.isInteger, type != from, [2, 3, 4, 5].contains(type.rawValue) {
                result = wrapInteger(result, to: type)
            }
            return try node.output(result, type)
        }
    }

    /// Wraps `Int32` values to an 8- or 16-bit type's range.
    private static func wrapInteger(_ x: Tensor, to type: ONNXDataType) -> Tensor {
        let (modulus, signed): (Int32, Bool) =
            switch type.rawValue {
            case 2: (256, false)
            case 3: (256, true)
            case 4: (65536, false)
            default: (65536, true)
            }
        let m = Tensor.scalar(Double(modulus), .int32)
        var r = Tensor.binary(.remainder, x, m, at: nil)
        r = r.replacing(
            with: Tensor.binary(.add, r, m, at: nil), where: Tensor.binary(.less, r, Tensor.scalar(0, .int32), at: nil))
        guard signed else { return r }
        let half = Tensor.scalar(Double(modulus / 2), .int32)
        return r.replacing(
            with: Tensor.binary(.subtract, r, m, at: nil), where: Tensor.binary(.greaterEqual, r, half, at: nil))
    }

    /// `Clip`: bounds as attributes before opset 11, as optional inputs from it.
    static func clip(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        var x = try node.tensor(0)
        let type = try node.type(0)
        if node.opset < 11 {
            let low = try node.float("min", default: -.greatestFiniteMagnitude)
            let high = try node.float("max", default: .greatestFiniteMagnitude)
            x = Tensor.binary(.maximum, x, Tensor.scalar(Double(low), x.dtype), at: nil)
            x = Tensor.binary(.minimum, x, Tensor.scalar(Double(high), x.dtype), at: nil)
            return [try node.output(x, type)]
        }
        if node.hasInput(1) { x = Tensor.binary(.maximum, x, try node.tensor(1), at: nil) }
        if node.hasInput(2) { x = Tensor.binary(.minimum, x, try node.tensor(2), at: nil) }
        return [try node.output(x, type)]
    }

    static func isInf(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        let positive = try node.int("detect_positive", default: 1) != 0
        let negative = try node.int("detect_negative", default: 1) != 0
        let infinity = Tensor.scalar(.infinity, x.dtype)
        let minusInfinity = Tensor.scalar(-.infinity, x.dtype)
        var result = Tensor.scalar(0, .bool, shape: x.shape.allSatisfy { $0 == 1 } ? x.shape : []).broadcastIfNeeded(
            to: x.shape, at: nil)
        if positive { result = Tensor.binary(.logicalOr, result, Tensor.binary(.equal, x, infinity, at: nil), at: nil) }
        if negative {
            result = Tensor.binary(.logicalOr, result, Tensor.binary(.equal, x, minusInfinity, at: nil), at: nil)
        }
        return [try node.output(result, .bool)]
    }
}
