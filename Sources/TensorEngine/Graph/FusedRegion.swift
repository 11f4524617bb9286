/// A chain of elementwise ops with one output shape, evaluated in one pass over memory.
///
/// The fusion pass builds regions from the graph; a backend that registers a fused kernel
/// evaluates the whole region per element (or per block) instead of one pass and one temporary
/// per op, and any other backend runs the instructions one by one with its elementwise kernels.
/// The program is a list of instructions over registers: registers `0..<inputCount` hold the
/// region's operands, instruction `i` writes register `inputCount + i`, and the last register is
/// the result.
package struct FusedRegion: Sendable, Hashable {
    /// One elementwise op of the region and the registers it reads.
    package struct Instruction: Sendable, Hashable {
        package let op: Op
        package let operands: [Int]

        package init(op: Op, operands: [Int]) {
            self.op = op
            self.operands = operands
        }
    }

    /// The scalar types of the operands, in order.
    let inputTypes: [ScalarType]
    let instructions: [Instruction]
    /// The scalar type each instruction produces.
    let instructionTypes: [ScalarType]
    /// The hash of the three, made once: regions key the backends' compiled programs and kernels,
    /// looked up on every run of a plan.
    private let fingerprint: Int
    /// What backends compiled from the region, kept with it (not part of its identity).
    let compiled = CompiledForms()

    var inputCount: Int { inputTypes.count }
    var outputType: ScalarType { instructionTypes.last ?? inputTypes.last ?? .float32 }

    /// The scalar type held by a register.
    func type(ofRegister register: Int) -> ScalarType {
        register < inputCount ? inputTypes[register] : instructionTypes[register - inputCount]
    }

    /// Instruction `index`'s expression, typed for the registers it reads; `.operand(i)` is its
    /// i-th operand register.
    func typedExpression(_ index: Int) -> TypedExpression {
        let instruction = instructions[index]
        return instruction.op.elementwiseExpression.typed(operands: instruction.operands.map(type(ofRegister:)))
    }

    /// The ops of the region, for plans and dumps (`multiply+add+relu`).
    package var name: String { instructions.map(\.op.name).joined(separator: "+") }

    /// Floating-point operations per output element.
    var flopsPerElement: Double { instructions.reduce(0) { $0 + $1.op.elementwiseExpression.flops } }

    /// A region of one elementwise op over operands of the given types.
    package init(single op: Op, inputTypes: [ScalarType], outputType: ScalarType) {
        self.init(
            inputTypes: inputTypes, instructions: [Instruction(op: op, operands: Array(inputTypes.indices))],
            instructionTypes: [outputType])
    }

    package init(inputTypes: [ScalarType], instructions: [Instruction], instructionTypes: [ScalarType]) {
        self.inputTypes = inputTypes
        self.instructions = instructions
        self.instructionTypes = instructionTypes
        var hasher = Hasher()
        hasher.combine(inputTypes)
        hasher.combine(instructions)
        hasher.combine(instructionTypes)
        fingerprint = hasher.finalize()
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

    package static func == (a: FusedRegion, b: FusedRegion) -> Bool {
        a.fingerprint == b.fingerprint && a.instructions == b.instructions && a.inputTypes == b.inputTypes
            && a.instructionTypes == b.instructionTypes
    }
}

/// The forms backends compiled from one region (the host engine's program, for instance), one per
/// Swift type. A plan holds its regions, so every run of a cached plan finds its programs here
/// without hashing the region or comparing it with an equal region of another plan.
package final class CompiledForms: Sendable {
    private let forms = Guarded<[ObjectIdentifier: any Sendable]>([:])

    /// The form of this type, made by `make` the first time it is asked for.
    func form<Form: Sendable>(_: Form.Type, orMake make: () -> Form) -> Form {
        let key = ObjectIdentifier(Form.self)
        if let found = forms.withLock({ $0[key] }) as? Form { return found }
        let made = make()
        forms.withLock { $0[key] = made }
        return made
    }
}
