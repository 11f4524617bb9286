/// MIL's elementwise operations (`elementwise_unary`, `elementwise_binary`, `activation`, `cast`,
/// `select`), each composed from op-table ops.
extension MILOperators {
    static let elementwise: [String: MILOperator] = [
        "add": binary { Tensor.binary(.add, $0, $1, at: nil) },
        "sub": binary { Tensor.binary(.subtract, $0, $1, at: nil) },
        "mul": binary { Tensor.binary(.multiply, $0, $1, at: nil) },
        "real_div": binary { Tensor.binary(.divide, $0, $1, at: nil) },
        "floor_div": binary(floorDivision),
        "mod": binary { x, y in
            Tensor.binary(.subtract, x, Tensor.binary(.multiply, floorDivision(x, y), y, at: nil), at: nil)
        },
        "pow": binary { Tensor.binary(.pow, $0, $1, at: nil) },
        "maximum": binary { Tensor.binary(.maximum, $0, $1, at: nil) },
        "minimum": binary { Tensor.binary(.minimum, $0, $1, at: nil) },
        "equal": binary { Tensor.binary(.equal, $0, $1, at: nil) },
        "not_equal": binary { Tensor.binary(.notEqual, $0, $1, at: nil) },
        "less": binary { Tensor.binary(.less, $0, $1, at: nil) },
        "less_equal": binary { Tensor.binary(.lessEqual, $0, $1, at: nil) },
        "greater": binary { Tensor.binary(.greater, $0, $1, at: nil) },
        "greater_equal": binary { Tensor.binary(.greaterEqual, $0, $1, at: nil) },
        "logical_and": binary { Tensor.binary(.logicalAnd, $0, $1, at: nil) },
        "logical_or": binary { Tensor.binary(.logicalOr, $0, $1, at: nil) },
        "logical_xor": binary { Tensor.binary(.logicalXor, $0, $1, at: nil) },
        "logical_not": unary { x, _ in Tensor.apply(.logicalNot, x) },
        "abs": unary { x, _ in x.abs() },
        "sign": unary { x, _ in x.sign() },
        "ceil": unary { x, _ in x.ceil() },
        "floor": unary { x, _ in x.floor() },
        "round": unary { x, _ in x.round() },
        "exp": unary { x, _ in x.exp() },
        "exp2": unary { x, _ in x.exp2() },
        "sqrt": unary { x, _ in x.squareRoot() },
        "square": unary { x, _ in x.squared() },
        "erf": unary { x, _ in x.erf() },
        "sin": unary { x, _ in x.sin() },
        "cos": unary { x, _ in x.cos() },
        "tan": unary { x, _ in x.tan() },
        "asin": unary { x, _ in x.asin() },
        "acos": unary { x, _ in x.acos() },
        "atan": unary { x, _ in x.atan() },
        "sinh": unary { x, _ in x.sinh() },
        "cosh": unary { x, _ in x.cosh() },
        "tanh": unary { x, _ in x.tanh() },
        "atanh": unary { x, _ in x.atanh() },
        // MIL adds `epsilon` before the logarithm, the reciprocal and the reciprocal square root.
        "log": unary { x, context throws(ModelError) in
            (x + (try context.float("epsilon", default: .leastNonzeroMagnitude))).log()
        },
        "inverse": unary { x, context throws(ModelError) in
            (x + (try context.float("epsilon", default: 1e-4))).reciprocal()
        },
        "rsqrt": unary { x, context throws(ModelError) in
            (x + (try context.float("epsilon", default: 1e-12))).rsqrt()
        },
        "clip": unary { x, context throws(ModelError) in
            x.pointwiseMax(try context.float("alpha")).pointwiseMin(try context.float("beta"))
        },
        "threshold": unary { x, context throws(ModelError) in x.pointwiseMax(try context.float("alpha")) },
        "identity": unary { x, _ in x },
        "cast": unary { x, context throws(ModelError) in
            let name = try context.string("dtype")
            guard let type = castTypes[name] else {
                throw context.error("cast to '\(name)' is not supported", .unsupportedType)
            }
            return x.converted(to: type)
        },
        "select": MILOperator { context throws(ModelError) in
            let condition = try context.tensor("cond")
            let mask =
                condition.dtype == .bool
                ? condition
                : Tensor.binary(
                    .notEqual, condition, Tensor.scalar(0, condition.dtype), at: nil)
            let result = try context.tensor("b").replacing(with: try context.tensor("a"), where: mask)
            return [try context.output(result)]
        },
    ]

    /// MIL's `cast` type names and the engine types that hold them (`int64` in `Int32`, as the
    /// engine holds ONNX's; `fp64` in `Float`).
    static let castTypes: [String: ScalarType] = [
        "fp32": .float32, "fp16": .float16, "fp64": .float32, "int32": .int32, "int64": .int32, "int16": .int32,
        "int8": .int32, "uint8": .int32, "uint16": .int32, "bool": .bool,
    ]

    /// `floor(x / y)`: for floats the floor of the quotient; for integers the truncated quotient
    /// less one where the signs differ and the division is inexact.
    static func floorDivision(_ x: Tensor, _ y: Tensor) -> Tensor {
        let quotient = Tensor.binary(.divide, x, y, at: nil)
        guard !x.dtype.isFloatingPoint else { return quotient.floor() }
        let remainder = Tensor.binary(.remainder, x, y, at: nil)
        let zero = Tensor.scalar(0, x.dtype)
        let inexact = Tensor.binary(.notEqual, remainder, zero, at: nil)
        let signsDiffer = Tensor.binary(
            .notEqual, Tensor.binary(.less, x, zero, at: nil), Tensor.binary(.less, y, zero, at: nil), at: nil)
        let adjust = Tensor.binary(.logicalAnd, inexact, signsDiffer, at: nil)
        return quotient.replacing(
            with: Tensor.binary(.subtract, quotient, Tensor.scalar(1, x.dtype), at: nil), where: adjust)
    }

    static let activations: [String: MILOperator] = [
        "relu": unary { x, _ in x.relu() },
        "relu6": unary { x, _ in x.relu().pointwiseMin(6) },
        "sigmoid": unary { x, _ in x.sigmoid() },
        "silu": unary { x, _ in x.silu() },
        "softsign": unary { x, _ in x / (x.abs() + 1) },
        // max(x, 0) + log(1 + exp(-|x|)): no overflow for large x.
        "softplus": unary { x, _ in x.pointwiseMax(0) + ((-x.abs()).exp() + 1).log() },
        "sigmoid_hard": unary { x, context throws(ModelError) in
            x.hardSigmoid(
                alpha: try context.float("alpha", default: 0.2), beta: try context.float("beta", default: 0.5))
        },
        "elu": unary { x, context throws(ModelError) in
            x.replacing(with: (x.exp() - 1) * (try context.float("alpha", default: 1)), where: x .< 0)
        },
        "leaky_relu": unary { x, context throws(ModelError) in
            x.leakyRelu(alpha: try context.float("alpha", default: 0.01))
        },
        "thresholded_relu": unary { x, context throws(ModelError) in
            x.replacing(with: 0, where: x .<= (try context.float("alpha", default: 1)))
        },
        "clamped_relu": unary { x, context throws(ModelError) in
            let alpha = try context.float("alpha")
            return x.replacing(with: x * alpha, where: x .< 0).pointwiseMin(try context.float("beta"))
        },
        "linear_activation": unary { x, context throws(ModelError) in
            x * (try context.float("alpha")) + (try context.float("beta", default: 0))
        },
        "scaled_tanh": unary { x, context throws(ModelError) in
            (x * (try context.float("beta", default: 1))).tanh() * (try context.float("alpha", default: 1))
        },
        "gelu": unary { x, context throws(ModelError) in
            switch try context.string("mode", default: "EXACT") {
            case "EXACT": return x.gelu(approximation: .none)
            case "TANH_APPROXIMATION": return x.gelu(approximation: .tanh)
            case "SIGMOID_APPROXIMATION": return x * (x * 1.702).sigmoid()
            case let other: throw context.error("gelu mode '\(other)' is not one MIL defines", .invalidModel)
            }
        },
        "prelu": unary { x, context throws(ModelError) in
            // `alpha` holds one slope per channel (axis 1).
            let alpha = try context.tensor("alpha")
            let shape = [alpha.scalarCount] + [Int](repeating: 1, count: Swift.max(x.rank - 2, 0))
            return x.prelu(slope: alpha.reshaped(to: shape))
        },
        "softmax": unary { x, context throws(ModelError) in
            x.softmax(alongAxis: try axis(try context.int("axis", default: -1), rank: x.rank, context))
        },
    ]
}
