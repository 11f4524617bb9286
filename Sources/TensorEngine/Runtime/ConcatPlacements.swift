/// The steps whose results the executor places straight into a later concatenation's result.
///
/// A concatenation along an axis with only axes of 1 before it (channels of one image, NCHW)
/// lays each operand out as one contiguous run of its result. When an operand is made by a step
/// of the same plan, on a host backend, and read by nothing else (no other step, not a target),
/// that step can write its result where the run goes (``OutputPlacement``), and the
/// concatenation copies nothing for it: SqueezeNet's fire modules concatenate two convolutions
/// each, 4% of the model's time as copies. Runs must start 64 bytes apart from the buffer's start,
/// the alignment a kernel gets from a fresh buffer.
struct ConcatPlacements {
    /// Per step: the position of the concatenation it writes into and the element where its
    /// result starts (0 for the concatenation itself), or `nil`.
    private var byStep: [(concat: Int, elementOffset: Int)?]
    /// Whether any step is placed.
    private(set) var isEmpty = true

    /// Finds the placements of a plan's steps; `reads(position)` is how many times the plan reads
    /// the value at a position (by steps and as a target); `isHost(backend)`, whether a backend
    /// works in host memory (asked only of plans that concatenate).
    init(_ plan: Plan, isHost: (BackendID) -> Bool, reads: (Int) -> Int) {
        self.init(steps: plan.steps, nodes: plan.nodes, targets: plan.template.targets, isHost: isHost, reads: reads)
    }

    /// Finds the placements of steps over `nodes` (by position) before a plan is made of them.
    init(steps: [PlanStep], nodes: [Node], targets: [Int], isHost: (BackendID) -> Bool, reads: (Int) -> Int) {
        byStep = []
        guard steps.contains(where: { Self.isConcatenation($0, nodes) }) else { return }
        byStep = Array(repeating: nil, count: steps.count)
        var stepMaking = [Int](repeating: -1, count: nodes.count)
        for index in steps.indices where nodes.indices.contains(steps[index].output) {
            stepMaking[steps[index].output] = index
        }
        var isTarget = [Bool](repeating: false, count: nodes.count)
        for position in targets where nodes.indices.contains(position) { isTarget[position] = true }
        for (index, step) in steps.enumerated() where Self.isConcatenation(step, nodes) && isHost(step.backend) {
            let node = nodes[step.output]
            guard step.operands.allSatisfy(nodes.indices.contains) else { continue }
            let shape = node.signature.shape
            let axis = node.op.axis
            guard axis >= 0, axis < shape.count, shape[..<axis].allSatisfy({ $0 == 1 }) else { continue }
            let size = node.signature.scalarType.byteCount
            var offset = 0
            var placedAny = false
            for operand in step.operands {
                let count = nodes[operand].signature.elementCount
                let maker = stepMaking[operand]
                if count > 0, maker >= 0, isHost(steps[maker].backend), !isTarget[operand],
                    reads(operand) == 1, byStep[maker] == nil, offset * size % 64 == 0,
                    nodes[operand].signature.scalarType == node.signature.scalarType
                {
                    byStep[maker] = (step.output, offset)
                    placedAny = true
                }
                offset += count
            }
            if placedAny {
                byStep[index] = (step.output, 0)
                isEmpty = false
            }
        }
    }

    /// Whether a step runs a concatenation (its node's own op) over `nodes`.
    static func isConcatenation(_ step: PlanStep, _ nodes: [Node]) -> Bool {
        step.region == nil && nodes.indices.contains(step.output) && nodes[step.output].op.kind == .concat
    }

    /// The placement of a step, if it has one.
    subscript(step: Int) -> (concat: Int, elementOffset: Int)? { isEmpty ? nil : byStep[step] }

    /// The share of a concatenation step's operand elements that it copies: those whose makers
    /// are not placed in its result (1 for a step that is not a placed concatenation).
    func copiedShare(ofStep index: Int, _ steps: [PlanStep], _ nodes: [Node]) -> Double {
        guard !isEmpty, let own = byStep[index], own.concat == steps[index].output, own.elementOffset == 0 else {
            return 1
        }
        var makers: [Int: Int] = [:]
        for (maker, step) in steps.enumerated() { makers[step.output] = maker }
        var (copied, total) = (0, 0)
        for operand in steps[index].operands {
            let count = nodes[operand].signature.elementCount
            total += count
            if let maker = makers[operand], byStep[maker]?.concat == steps[index].output { continue }
            copied += count
        }
        return total == 0 ? 1 : Double(copied) / Double(total)
    }
}
