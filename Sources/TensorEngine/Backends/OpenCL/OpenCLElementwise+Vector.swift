// The eight-wide variant of generated elementwise kernels, for CPU devices: PoCL evaluates
// transcendental built-ins one element at a time in scalar kernels but has vector versions for
// float8 arguments (tanh is ~8x faster). Used when every operand is contiguous or uniform; the
// last `count % 8` elements go through the scalar kernel of the same program.
extension ElementwiseCodegen {
    /// `te_elementwise8(out, vectors, in0, offset0, ...)`: work-item v computes elements 8v..<8v+8.
    static func vectorSource(for key: ElementwiseKernelKey) -> String {
        let region = key.region
        var parameters = ["__global \(region.outputType.clStorage)* out", "int vectors"]
        for (index, type) in region.inputTypes.enumerated() {
            parameters += ["__global const \(type.clStorage)* in\(index)", "int offset\(index)"]
            if key.access[index] == .row { parameters.append("int row\(index)") }
        }
        var lines = [
            "__kernel void te_elementwise8(\(parameters.joined(separator: ", "))) {",
            "    int v = get_global_id(0);",
            "    if (v >= vectors) return;",
            "    int i = v * 8;",
        ]
        for (index, type) in region.inputTypes.enumerated() {
            let load: String
            switch key.access[index] {
            case .uniform: load = "(\(vectorType(type)))(\(type.clLoadMacro)(in\(index), offset\(index)))"
            case .contiguous, .row, .strided:
                // Rows are a multiple of 8 long here, so the eight lanes never cross a row.
                let pointer = key.access[index] == .row ? "in\(index) + offset\(index) + i % row\(index)" : "in\(index) + offset\(index) + i"
                load = switch type {
                case .float32, .int32: "vload8(0, \(pointer))"
                case .float16: "vload_half8(0, \(pointer))"
                case .bool: "convert_int8(vload8(0, \(pointer)))"
                }
            }
            lines.append("    \(vectorType(type)) r\(index) = \(load);")
        }
        let last = region.inputCount + region.instructions.count - 1
        for (index, instruction) in region.instructions.enumerated() {
            let register = region.inputCount + index
            let type = region.instructionTypes[index]
            let (expression, isFloat) = vectorExpression(instruction, region)
            lines.append("    \(vectorType(type)) r\(register) = \(convert8(expression, fromFloat: isFloat, to: type, roundHalf: register != last));")
        }
        let store = switch region.outputType {
        case .float32, .int32: "vstore8(r\(last), 0, out + i)"
        case .float16: "vstore_half8_rte(r\(last), 0, out + i)"
        case .bool: "vstore8(convert_uchar8(-(r\(last) != 0)), 0, out + i)"
        }
        lines += ["    \(store);", "}"]
        return lines.joined(separator: "\n")
    }

    /// The vector form of the scalar `convert`: the value as stored into `type` and read back.
    private static func convert8(_ expression: String, fromFloat: Bool, to type: ScalarType, roundHalf: Bool) -> String {
        let asFloat = fromFloat ? expression : "convert_float8(\(expression))"
        switch type {
        case .float32: return asFloat
        case .float16: return roundHalf ? "te_round_half8(\(asFloat))" : asFloat
        case .int32: return fromFloat ? "convert_int8_sat_rtz(\(expression))" : expression
        case .bool: return fromFloat ? "(-(\(expression) != 0.0f))" : "(-(\(expression) != 0))"
        }
    }

    private static func vectorType(_ type: ScalarType) -> String { type.isFloatingPoint ? "float8" : "int8" }

    private static func vectorExpression(_ instruction: FusedRegion.Instruction, _ region: FusedRegion) -> (String, Bool) {
        switch instruction {
        case .unary(let op, let a):
            return region.type(ofRegister: a).isFloatingPoint ? (floatUnary8(op, "r\(a)"), true) : (intUnary8(op, "r\(a)"), false)
        case .binary(let op, let a, let b):
            return region.type(ofRegister: a).isFloatingPoint ? floatBinary8(op, "r\(a)", "r\(b)") : (intBinary8(op, "r\(a)", "r\(b)"), false)
        case .select(let mask, let a, let b):
            return ("select(r\(b), r\(a), r\(mask) != 0)", region.type(ofRegister: a).isFloatingPoint)
        case .cast(_, let a):
            return ("r\(a)", region.type(ofRegister: a).isFloatingPoint)
        }
    }

    private static func floatUnary8(_ op: UnaryOp, _ x: String) -> String {
        switch op {
        case .sign: "te_sign8(\(x))"
        case .sigmoid: "te_sigmoid8(\(x))"
        case .relu: "te_relu8(\(x))"
        case .logicalNot: "convert_float8(-(\(x) == 0.0f))"
        case .sin: "te_lanes_sin8(\(x))"
        case .cos: "te_lanes_cos8(\(x))"
        case .negate, .abs, .exp, .log, .squareRoot, .rsqrt, .square, .reciprocal, .tanh, .floor, .ceil, .round, .erf:
            // The scalar spellings are overloaded for float8.
            floatUnary(op, x)
        }
    }

    private static func intUnary8(_ op: UnaryOp, _ x: String) -> String {
        switch op {
        case .negate: "te_ineg8(\(x))"
        case .abs: "select(\(x), te_ineg8(\(x)), \(x) < 0)"
        case .sign: "select(select((int8)(0), (int8)(-1), \(x) < 0), (int8)(1), \(x) > 0)"
        case .square: "te_imul8(\(x), \(x))"
        case .relu: "select(\(x), (int8)(0), \(x) <= 0)"
        case .logicalNot: "(-(\(x) == 0))"
        case .exp, .log, .squareRoot, .rsqrt, .reciprocal, .sin, .cos, .tanh, .floor, .ceil, .round, .sigmoid, .erf:
            "convert_int8_sat_rtz(\(floatUnary8(op, "convert_float8(\(x))")))"
        }
    }

    private static func floatBinary8(_ op: BinaryOp, _ a: String, _ b: String) -> (String, Bool) {
        switch op {
        case .add: ("(\(a) + \(b))", true)
        case .subtract: ("(\(a) - \(b))", true)
        case .multiply: ("(\(a) * \(b))", true)
        case .divide: ("(\(a) / \(b))", true)
        case .pow: ("pow(\(a), \(b))", true)
        case .minimum: ("te_min8(\(a), \(b))", true)
        case .maximum: ("te_max8(\(a), \(b))", true)
        case .equal: ("(-(\(a) == \(b)))", false)
        case .notEqual: ("(-(\(a) != \(b)))", false)
        case .less: ("(-(\(a) < \(b)))", false)
        case .lessEqual: ("(-(\(a) <= \(b)))", false)
        case .greater: ("(-(\(a) > \(b)))", false)
        case .greaterEqual: ("(-(\(a) >= \(b)))", false)
        case .logicalAnd: ("(-((\(a) != 0.0f) & (\(b) != 0.0f)))", false)
        case .logicalOr: ("(-((\(a) != 0.0f) | (\(b) != 0.0f)))", false)
        }
    }

    private static func intBinary8(_ op: BinaryOp, _ a: String, _ b: String) -> String {
        switch op {
        case .add: "te_iadd8(\(a), \(b))"
        case .subtract: "te_isub8(\(a), \(b))"
        case .multiply: "te_imul8(\(a), \(b))"
        case .divide: "te_idiv8(\(a), \(b))"
        case .pow: "convert_int8_sat_rtz(pow(convert_float8(\(a)), convert_float8(\(b))))"
        case .minimum: "select(\(a), \(b), \(b) < \(a))"
        case .maximum: "select(\(a), \(b), \(b) >= \(a))"
        case .equal: "(-(\(a) == \(b)))"
        case .notEqual: "(-(\(a) != \(b)))"
        case .less: "(-(\(a) < \(b)))"
        case .lessEqual: "(-(\(a) <= \(b)))"
        case .greater: "(-(\(a) > \(b)))"
        case .greaterEqual: "(-(\(a) >= \(b)))"
        case .logicalAnd: "(-((\(a) != 0) & (\(b) != 0)))"
        case .logicalOr: "(-((\(a) != 0) | (\(b) != 0)))"
        }
    }
}
