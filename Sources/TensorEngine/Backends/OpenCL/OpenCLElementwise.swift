/// How a generated kernel reads one operand.
enum OperandAccess: Sendable, Hashable {
    /// Element `offset + i`: the operand is row-major in the output's shape.
    case contiguous
    /// Element `offset` for every `i`: a broadcast scalar.
    case uniform
    /// Element `offset + i % row`: a row-major block repeated along leading axes (a broadcast bias).
    case row
    /// Element `te_at(coords, strides, offset)`.
    case strided
}

/// What identifies a generated elementwise kernel: the region, the access of each operand and the
/// rank its coordinates are decomposed in. Equal keys share one built program.
struct ElementwiseKernelKey: Sendable, Hashable {
    let region: FusedRegion
    let access: [OperandAccess]
    let rank: Int
    /// 8 when the program also holds the eight-wide kernel `te_elementwise8` (no strided operand,
    /// a CPU device), else 1.
    let vectorWidth: Int
}

/// Writes the OpenCL C of one elementwise op or fused region (appended to `elementwise.cl`).
///
/// Registers follow ``FusedRegion``: `r0..<inputCount` are the operands, each instruction defines
/// the next register. Each instruction computes in the domain of its operands' type (float for
/// float32/float16, int for int32/bool) and converts to its own type exactly as storing into a
/// tensor of that type does, so a fused region gives the same bits as its ops run one by one.
enum ElementwiseCodegen {
    static func source(for key: ElementwiseKernelKey) -> String {
        let region = key.region
        let strided = key.access.contains(.strided)
        var parameters = ["__global \(region.outputType.clStorage)* out", "int count", "int start"]
        if strided { parameters.append("int8 shape") }
        for (index, type) in region.inputTypes.enumerated() {
            parameters.append("__global const \(type.clStorage)* in\(index)")
            if key.access[index] == .strided { parameters.append("int8 strides\(index)") }
            parameters.append("int offset\(index)")
            if key.access[index] == .row { parameters.append("int row\(index)") }
        }
        var lines = [
            "__kernel void te_elementwise(\(parameters.joined(separator: ", "))) {",
            "    int i = start + get_global_id(0);",
            "    if (i >= count) return;",
        ]
        if strided { lines.append("    int8 c = te_coords(i, shape);") }
        for (index, type) in region.inputTypes.enumerated() {
            let position = switch key.access[index] {
            case .contiguous: "offset\(index) + i"
            case .uniform: "offset\(index)"
            case .row: "offset\(index) + i % row\(index)"
            case .strided: "te_at(c, strides\(index), offset\(index))"
            }
            lines.append("    \(type.clCompute) r\(index) = \(type.clLoadMacro)(in\(index), \(position));")
        }
        let last = region.inputCount + region.instructions.count - 1
        for (index, instruction) in region.instructions.enumerated() {
            let register = region.inputCount + index
            let type = region.instructionTypes[index]
            let (expression, isFloat) = self.expression(instruction, region)
            let value = convert(expression, fromFloat: isFloat, to: type, roundHalf: register != last)
            lines.append("    \(type.clCompute) r\(register) = \(value);")
        }
        lines.append("    \(region.outputType.clStoreMacro)(out, i, r\(last));")
        lines.append("}")
        if key.vectorWidth == 8 { lines.append(vectorSource(for: key)) }
        return lines.joined(separator: "\n")
    }

    /// The expression of an instruction and whether it is computed in float.
    static func expression(_ instruction: FusedRegion.Instruction, _ region: FusedRegion) -> (String, Bool) {
        switch instruction {
        case .unary(let op, let a):
            let isFloat = region.type(ofRegister: a).isFloatingPoint
            return isFloat ? (floatUnary(op, "r\(a)"), true) : intUnary(op, "r\(a)")
        case .binary(let op, let a, let b):
            let isFloat = region.type(ofRegister: a).isFloatingPoint
            return isFloat ? floatBinary(op, "r\(a)", "r\(b)") : intBinary(op, "r\(a)", "r\(b)")
        case .select(let mask, let a, let b):
            return ("(r\(mask) != 0 ? r\(a) : r\(b))", region.type(ofRegister: a).isFloatingPoint)
        case .cast(_, let a):
            return ("r\(a)", region.type(ofRegister: a).isFloatingPoint)
        }
    }

    static func floatUnary(_ op: UnaryOp, _ x: String) -> String {
        switch op {
        case .negate: "(-\(x))"
        case .abs: "fabs(\(x))"
        case .sign: "te_sign(\(x))"
        case .exp: "exp(\(x))"
        case .log: "log(\(x))"
        case .squareRoot: "sqrt(\(x))"
        case .rsqrt: "(1.0f / sqrt(\(x)))"
        case .square: "(\(x) * \(x))"
        case .reciprocal: "(1.0f / \(x))"
        case .sin: "sin(\(x))"
        case .cos: "cos(\(x))"
        case .tanh: "tanh(\(x))"
        case .floor: "floor(\(x))"
        case .ceil: "ceil(\(x))"
        case .round: "rint(\(x))"
        case .sigmoid: "te_sigmoid(\(x))"
        case .relu: "te_relu(\(x))"
        case .erf: "erf(\(x))"
        case .logicalNot: "(\(x) == 0.0f ? 1.0f : 0.0f)"
        }
    }

    private static func intUnary(_ op: UnaryOp, _ x: String) -> (String, Bool) {
        switch op {
        case .negate: ("te_ineg(\(x))", false)
        case .abs: ("te_iabs(\(x))", false)
        case .sign: ("te_isign(\(x))", false)
        case .square: ("te_imul(\(x), \(x))", false)
        case .relu: ("te_irelu(\(x))", false)
        case .logicalNot: ("(\(x) == 0 ? 1 : 0)", false)
        case .exp, .log, .squareRoot, .rsqrt, .reciprocal, .sin, .cos, .tanh, .floor, .ceil, .round, .sigmoid, .erf:
            ("te_float_to_int(\(floatUnary(op, "(float)\(x)")))", false)
        }
    }

    private static func floatBinary(_ op: BinaryOp, _ a: String, _ b: String) -> (String, Bool) {
        switch op {
        case .add: ("(\(a) + \(b))", true)
        case .subtract: ("(\(a) - \(b))", true)
        case .multiply: ("(\(a) * \(b))", true)
        case .divide: ("(\(a) / \(b))", true)
        case .pow: ("pow(\(a), \(b))", true)
        case .minimum: ("te_min(\(a), \(b))", true)
        case .maximum: ("te_max(\(a), \(b))", true)
        case .equal: ("(\(a) == \(b) ? 1 : 0)", false)
        case .notEqual: ("(\(a) != \(b) ? 1 : 0)", false)
        case .less: ("(\(a) < \(b) ? 1 : 0)", false)
        case .lessEqual: ("(\(a) <= \(b) ? 1 : 0)", false)
        case .greater: ("(\(a) > \(b) ? 1 : 0)", false)
        case .greaterEqual: ("(\(a) >= \(b) ? 1 : 0)", false)
        case .logicalAnd: ("((\(a) != 0.0f && \(b) != 0.0f) ? 1 : 0)", false)
        case .logicalOr: ("((\(a) != 0.0f || \(b) != 0.0f) ? 1 : 0)", false)
        }
    }

    private static func intBinary(_ op: BinaryOp, _ a: String, _ b: String) -> (String, Bool) {
        switch op {
        case .add: ("te_iadd(\(a), \(b))", false)
        case .subtract: ("te_isub(\(a), \(b))", false)
        case .multiply: ("te_imul(\(a), \(b))", false)
        case .divide: ("te_idiv(\(a), \(b))", false)
        case .pow: ("te_float_to_int(pow((float)\(a), (float)\(b)))", false)
        case .minimum: ("te_imin(\(a), \(b))", false)
        case .maximum: ("te_imax(\(a), \(b))", false)
        case .equal: ("(\(a) == \(b) ? 1 : 0)", false)
        case .notEqual: ("(\(a) != \(b) ? 1 : 0)", false)
        case .less: ("(\(a) < \(b) ? 1 : 0)", false)
        case .lessEqual: ("(\(a) <= \(b) ? 1 : 0)", false)
        case .greater: ("(\(a) > \(b) ? 1 : 0)", false)
        case .greaterEqual: ("(\(a) >= \(b) ? 1 : 0)", false)
        case .logicalAnd: ("((\(a) != 0 && \(b) != 0) ? 1 : 0)", false)
        case .logicalOr: ("((\(a) != 0 || \(b) != 0) ? 1 : 0)", false)
        }
    }

    /// The value as stored into a tensor of `type` and read back (float16 rounds unless the store does).
    private static func convert(_ expression: String, fromFloat: Bool, to type: ScalarType, roundHalf: Bool) -> String {
        switch type {
        case .float32: fromFloat ? expression : "(float)(\(expression))"
        case .float16:
            roundHalf ? "te_round_half(\(fromFloat ? expression : "(float)(\(expression))"))"
                : (fromFloat ? expression : "(float)(\(expression))")
        case .int32: fromFloat ? "te_float_to_int(\(expression))" : expression
        case .bool: fromFloat ? "te_float_to_bool(\(expression))" : "te_int_to_bool(\(expression))"
        }
    }
}
