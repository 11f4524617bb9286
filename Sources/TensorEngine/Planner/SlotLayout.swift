/// Which positions of a plan the executor keeps a value for, and how many reads each value has:
/// worked out once per plan template (from its steps and targets, which depend on the graph's
/// structure only), where the executor used to work them out on every run.
///
/// A position gets a slot when a step reads or writes it or it is a target; the others (nodes a
/// fused step absorbed, sources no step reads) have none. A chain of a thousand scalar steps
/// fused into 8 steps has about a dozen slots for a thousand positions, and a one-product plan
/// three: the executor's bookkeeping per run is one array of slots.
struct SlotLayout: Sendable {
    /// Per position: its slot, or -1.
    private let slotOf: [Int]
    /// Per slot: the reads of its value, by steps (once per operand) and as a target.
    let reads: [Int]

    /// The layout of `steps` and `targets` over `positions` positions. Slots are numbered in the
    /// order their positions are first met: targets, then each step's operands and output.
    init(steps: [PlanStep], targets: [Int], positions: Int) {
        var slotOf = [Int](repeating: -1, count: positions)
        var reads: [Int] = []
        func claim(_ position: Int) -> Int? {
            guard slotOf.indices.contains(position) else { return nil }
            if slotOf[position] < 0 {
                slotOf[position] = reads.count
                reads.append(0)
            }
            return slotOf[position]
        }
        for position in targets { if let slot = claim(position) { reads[slot] += 1 } }
        for step in steps {
            for operand in step.operands { if let slot = claim(operand) { reads[slot] += 1 } }
            _ = claim(step.output)
        }
        self.slotOf = slotOf
        self.reads = reads
    }

    /// The number of slots.
    var count: Int { reads.count }

    /// The slot of a position, or `nil` where it has none (or lies outside the plan).
    func slot(of position: Int) -> Int? {
        guard slotOf.indices.contains(position) else { return nil }
        let slot = slotOf[position]
        return slot < 0 ? nil : slot
    }
}
