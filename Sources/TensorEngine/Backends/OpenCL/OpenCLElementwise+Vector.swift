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
                case .float32, .int32, .int64, .float64: "vload8(0, \(pointer))"
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
            let typed = region.typedExpression(index)
            let expression = ExpressionPrinter.print(typed, instruction.operands.map { "r\($0)" }, vector: true)
            lines.append("    \(vectorType(type)) r\(register) = \(convert8(expression, fromFloat: typed.domain.isFloatingPoint, to: type, roundHalf: register != last));")
        }
        let store = switch region.outputType {
        case .float32, .int32, .int64, .float64: "vstore8(r\(last), 0, out + i)"
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
        case .int64: return fromFloat ? "convert_long8_sat_rtz(\(expression))" : "convert_long8(\(expression))"
        case .float64: return "convert_double8(\(expression))"
        }
    }

    private static func vectorType(_ type: ScalarType) -> String { type.clCompute + "8" }
}
