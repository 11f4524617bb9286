/// A chain of elementwise ops with one output shape, evaluated in one pass over memory.
///
/// The fusion pass builds regions from the graph; a backend that claims `.fused` evaluates the
/// whole region per element (or per block) instead of one pass and one temporary per op. The
/// program is a list of instructions over registers: registers `0..<inputCount` hold the region's
/// operands, instruction `i` writes register `inputCount + i`, and the last register is the result.
struct FusedRegion: Sendable, Hashable {
    enum Instruction: Sendable, Hashable {
        case unary(UnaryOp, Int)
        case binary(BinaryOp, Int, Int)
        case select(Int, Int, Int)
        case cast(ScalarType, Int)
    }

    /// The scalar types of the operands, in order.
    var inputTypes: [ScalarType]
    var instructions: [Instruction]
    /// The scalar type each instruction produces.
    var instructionTypes: [ScalarType]

    var inputCount: Int { inputTypes.count }
    var outputType: ScalarType { instructionTypes.last ?? inputTypes.last ?? .float32 }

    /// The scalar type held by a register.
    func type(ofRegister register: Int) -> ScalarType {
        register < inputCount ? inputTypes[register] : instructionTypes[register - inputCount]
    }

    /// The ops of the region, for plans and dumps (`multiply+add+relu`).
    var name: String {
        instructions.map { instruction in
            switch instruction {
            case .unary(let op, _): op.rawValue
            case .binary(let op, _, _): op.rawValue
            case .select: "select"
            case .cast: "cast"
            }
        }.joined(separator: "+")
    }

    /// Floating-point operations per output element.
    var flopsPerElement: Double {
        instructions.reduce(0) { total, instruction in
            switch instruction {
            case .unary(let op, _): total + op.flopsPerElement
            case .binary(let op, _, _): total + op.flopsPerElement
            case .select, .cast: total + 1
            }
        }
    }
}
