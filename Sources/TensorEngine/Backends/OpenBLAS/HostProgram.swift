/// A fused region (or one elementwise op) as the host engine runs it: vector loops over strips,
/// each writing a register.
///
/// Each instruction's table expression is lowered node by node into steps (`a + b`, `exp(a)`,
/// `a < b`, ...), unless the host has a hand-tuned vector function for the whole op
/// (``HostFastPath``). Registers `0..<inputCount` are the region's operands, the next
/// ``literals`` hold constants (filled once per worker), and every step writes a register of its
/// own. A multiply whose only use is an add is folded into it (``VectorStep/multiplyAdd(_:_:_:)``):
/// one loop over three operands instead of two loops and a slot; the product and the sum still
/// round apart, as the expressions say (no fused multiply-add, as in the OpenCL kernels).
struct HostProgram: Sendable {
    let inputCount: Int
    /// Constant registers and their values.
    let literals: [(register: Int, value: Float)]
    /// The steps in order, each with the register it writes; the last one writes the result.
    let steps: [(step: VectorStep, register: Int)]
    /// The number of registers.
    let registerCount: Int
    /// The region's floating-point operations per element (what sizes its split across threads).
    let flopsPerElement: Double

    /// Whether the host engine holds every register of the region: `Float` or `Bool` (as 0 or 1).
    static func supports(_ region: FusedRegion) -> Bool {
        region.inputTypes.allSatisfy { $0 == .float32 || $0 == .bool }
            && region.instructionTypes.allSatisfy { $0 == .float32 || $0 == .bool }
    }

    init(_ region: FusedRegion) {
        var builder = Builder(inputCount: region.inputCount)
        var registerOf = Array(0..<region.inputCount)
        for (index, instruction) in region.instructions.enumerated() {
            let operands = instruction.operands.map { registerOf[$0] }
            var register: Int
            if let fast = HostFastPath.table[instruction.op], let operand = operands.first {
                register = builder.emit(.fast(fast, operand))
            } else {
                register = builder.lower(region.typedExpression(index), operands)
            }
            // A float stored as Bool is `!= 0` (NaN is true); comparisons are 0 or 1 already.
            if region.instructionTypes[index] == .bool, region.typedExpression(index).domain == .float {
                register = builder.emit(.indicator(register))
            }
            registerOf.append(register)
        }
        let result = registerOf.last ?? 0
        // The result must come from a step (it is written to the output).
        if builder.steps.last?.register != result { _ = builder.emit(.copy(result)) }
        inputCount = region.inputCount
        literals = builder.literals
        steps = Self.foldingMultiplies(builder.steps)
        registerCount = builder.registerCount
        flopsPerElement = region.flopsPerElement
    }

    /// Registers and steps as they are made.
    private struct Builder {
        let inputCount: Int
        var literals: [(register: Int, value: Float)] = []
        var steps: [(step: VectorStep, register: Int)] = []
        var registerCount: Int

        init(inputCount: Int) {
            self.inputCount = inputCount
            registerCount = inputCount
        }

        mutating func emit(_ step: VectorStep) -> Int {
            steps.append((step, registerCount))
            registerCount += 1
            return registerCount - 1
        }

        mutating func literal(_ value: Double) -> Int {
            let float = Float(value)
            if let existing = literals.first(where: { $0.value.bitPattern == float.bitPattern }) {
                return existing.register
            }
            literals.append((registerCount, float))
            registerCount += 1
            return registerCount - 1
        }

        /// The register holding `expression`, `.operand(i)` being register `operands[i]`.
        mutating func lower(_ expression: TypedExpression, _ operands: [Int]) -> Int {
            switch expression {
            case .operand(let index, _): return operands[index]
            case .literal(let value, _): return literal(value)
            case .negate(let x): return emit(.negate(lower(x, operands)))
            case .absolute(let x): return emit(.absolute(lower(x, operands)))
            case .arithmetic(let op, let a, let b):
                let (x, y) = (lower(a, operands), lower(b, operands))
                return emit(.arithmetic(op, x, y))
            case .compare(let comparison, let a, let b):
                let (x, y) = (lower(a, operands), lower(b, operands))
                return emit(.compare(comparison, x, y))
            case .select(let condition, let a, let b):
                let (c, x, y) = (lower(condition, operands), lower(a, operands), lower(b, operands))
                return emit(.select(c, x, y))
            case .math(let function, let arguments):
                let x = lower(arguments[0], operands)
                let y = arguments.count > 1 ? lower(arguments[1], operands) : x
                return emit(.math(function, x, y))
            case .converted(let x, _):
                // Integer registers are floats here already (the host holds only Bool ones, and
                // `supports` keeps every other type out).
                return lower(x, operands)
            case .applied(let op, let arguments, let body):
                if let fast = HostFastPath.table[op], arguments.count == 1 {
                    return emit(.fast(fast, lower(arguments[0], operands)))
                }
                return lower(body, operands)
            }
        }
    }

    /// The steps with every multiply whose only use is an add folded into that add.
    private static func foldingMultiplies(
        _ steps: [(step: VectorStep, register: Int)]
    ) -> [(step: VectorStep, register: Int)] {
        var uses: [Int: Int] = [:]
        for (step, _) in steps { for register in step.reads { uses[register, default: 0] += 1 } }
        if let result = steps.last?.register { uses[result, default: 0] += 1 }
        var products: [Int: (Int, Int)] = [:]
        for (step, register) in steps {
            if case .arithmetic(.multiply, let a, let b) = step, uses[register] == 1 { products[register] = (a, b) }
        }
        var folded = Set<Int>()
        var result: [(step: VectorStep, register: Int)] = []
        for (step, register) in steps {
            guard case .arithmetic(.add, let x, let y) = step else {
                result.append((step, register))
                continue
            }
            if let (a, b) = products[x], !folded.contains(x) {
                folded.insert(x)
                result.append((.multiplyAdd(a, b, y), register))
            } else if let (a, b) = products[y], !folded.contains(y) {
                folded.insert(y)
                result.append((.multiplyAdd(a, b, x), register))
            } else {
                result.append((step, register))
            }
        }
        return result.filter { !folded.contains($0.register) }
    }
}

/// Programs by region, so a region run again (every run of a cached plan) is lowered once: kept
/// with the region, and by value for equal regions of other plans.
enum HostPrograms {
    /// Regions kept; the table is emptied when it fills (regions of one process are few).
    static let capacity = 4096
    private static let table = Guarded<[FusedRegion: HostProgram]>([:])

    static func program(for region: FusedRegion) -> HostProgram {
        region.compiled.form(HostProgram.self) { shared(region) }
    }

    private static func shared(_ region: FusedRegion) -> HostProgram {
        if let program = table.withLock({ $0[region] }) { return program }
        let program = HostProgram(region)
        table.withLock { table in
            if table.count >= capacity { table.removeAll() }
            table[region] = program
        }
        return program
    }
}

/// One vector loop over a strip: the host engine's implementation of an expression node.
enum VectorStep: Sendable, Equatable {
    case negate(Int)
    case absolute(Int)
    case arithmetic(ArithmeticOperator, Int, Int)
    /// 1 where the comparison holds, else 0.
    case compare(Comparison, Int, Int)
    case select(Int, Int, Int)
    /// A math function of one register (the second is ignored) or two.
    case math(MathFunction, Int, Int)
    /// A whole op through a hand-tuned vector function.
    case fast(HostFastPath, Int)
    /// `a · b + c`.
    case multiplyAdd(Int, Int, Int)
    /// 1 where the register is non-zero (NaN included), else 0.
    case indicator(Int)
    case copy(Int)

    /// The registers the step reads.
    var reads: [Int] {
        switch self {
        case .negate(let a), .absolute(let a), .fast(_, let a), .indicator(let a), .copy(let a): [a]
        case .arithmetic(_, let a, let b), .compare(_, let a, let b), .math(_, let a, let b): [a, b]
        case .select(let a, let b, let c), .multiplyAdd(let a, let b, let c): [a, b, c]
        }
    }
}

/// The ops the host runs through a vector function of their own rather than their expression's
/// steps: one pass instead of several (`sigmoid` is four steps as an expression).
enum HostFastPath: Sendable, Equatable {
    case relu, sigmoid, sign

    static let table: [Op: HostFastPath] = [Op(.relu): .relu, Op(.sigmoid): .sigmoid, Op(.sign): .sign]
}
