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
/// the next register as its table expression, printed by ``ExpressionPrinter`` in the domains
/// typing gives (float for float32/float16, double for float64, int for int32/bool, long for
/// int64), then converted to its own type
/// exactly as storing into a tensor of that type does, so a fused region gives the same bits as its
/// ops run one by one.
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
            let typed = region.typedExpression(index)
            let expression = ExpressionPrinter.print(typed, instruction.operands.map { "r\($0)" }, vector: false)
            let value = convert(expression, from: typed.domain, to: type, roundHalf: register != last)
            lines.append("    \(type.clCompute) r\(register) = \(value);")
        }
        lines.append("    \(region.outputType.clStoreMacro)(out, i, r\(last));")
        lines.append("}")
        if key.vectorWidth == 8 { lines.append(vectorSource(for: key)) }
        return lines.joined(separator: "\n")
    }

    /// The value as stored into a tensor of `type` and read back (float16 rounds unless the store does).
    private static func convert(_ expression: String, from domain: ScalarDomain, to type: ScalarType, roundHalf: Bool) -> String {
        let asFloat = domain == .float ? expression : "(float)(\(expression))"
        switch type {
        case .float32: return asFloat
        case .float16: return roundHalf ? "te_round_half(\(asFloat))" : asFloat
        case .float64: return domain == .double ? expression : "(double)(\(expression))"
        case .int32:
            switch domain {
            case .float: return "te_float_to_int(\(expression))"
            case .double: return "convert_int_sat_rtz(\(expression))"
            case .integer: return expression
            case .long: return "te_long_to_int(\(expression))"
            }
        case .int64:
            switch domain {
            case .float, .double: return "convert_long_sat_rtz(\(expression))"
            case .integer: return "(long)(\(expression))"
            case .long: return expression
            }
        case .bool:
            switch domain {
            case .float: return "te_float_to_bool(\(expression))"
            case .integer: return "te_int_to_bool(\(expression))"
            // NaN is not 0, so it is true, as a store of NaN into bool is.
            case .double, .long: return "((\(expression)) != 0 ? 1 : 0)"
            }
        }
    }
}
