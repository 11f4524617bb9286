/// One loop of the host engine's evaluation of a fused region: an instruction of the region, or
/// a multiply folded into the add that is its only use.
///
/// Folding `a·b + c` into one loop saves the product's store and reload through L1 and a loop's
/// overhead per strip, and reads the three operands in one stream, which keeps more loads in
/// flight when they come from memory. The product and the sum still round separately, as the
/// scalar semantics say (no fused multiply-add, as in the OpenCL kernels).
enum ElementwiseStep: Equatable {
    case instruction(FusedRegion.Instruction)
    /// `a · b + c` over three registers.
    case multiplyAdd(Int, Int, Int)

    /// The steps of `region`, each with the register it writes, in an order that computes every
    /// register before its first use. The region's result register is always the last written.
    static func steps(of region: FusedRegion) -> [(step: ElementwiseStep, register: Int)] {
        let inputCount = region.inputCount
        var uses = [Int](repeating: 0, count: inputCount + region.instructions.count)
        for instruction in region.instructions {
            for operand in instruction.operands { uses[operand] += 1 }
        }
        // First, which adds take in which products: a product used once, by that add only.
        var folded = [Bool](repeating: false, count: region.instructions.count)
        var replacements: [ElementwiseStep?] = Array(repeating: nil, count: region.instructions.count)
        for (position, instruction) in region.instructions.enumerated() {
            guard case .binary(.add, let x, let y) = instruction, region.instructionTypes[position] == .float32 else { continue }
            for (product, addend) in [(x, y), (y, x)] where product >= inputCount && uses[product] == 1 {
                let productPosition = product - inputCount
                guard case .binary(.multiply, let a, let b) = region.instructions[productPosition],
                      region.instructionTypes[productPosition] == .float32 else { continue }
                folded[productPosition] = true
                replacements[position] = .multiplyAdd(a, b, addend)
                break
            }
        }
        // Then the steps, without the folded products. Their operands are computed before them,
        // so before the add that now computes them.
        var steps: [(step: ElementwiseStep, register: Int)] = []
        steps.reserveCapacity(region.instructions.count)
        for (position, instruction) in region.instructions.enumerated() where !folded[position] {
            steps.append((replacements[position] ?? .instruction(instruction), inputCount + position))
        }
        return steps
    }
}

extension FusedRegion.Instruction {
    /// The registers the instruction reads.
    var operands: [Int] {
        switch self {
        case .unary(_, let a), .cast(_, let a): [a]
        case .binary(_, let a, let b): [a, b]
        case .select(let m, let a, let b): [m, a, b]
        }
    }
}
