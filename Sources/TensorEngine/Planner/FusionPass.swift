import Foundation

/// The fusion pass, shared by every backend: groups chains of elementwise ops with one output
/// shape into regions evaluated in one pass over memory, and fuses a ReLU into the convolution it
/// reads (``EpilogueFusion``).
///
/// A node joins its consumer's region when it is elementwise, has the region's shape, is read by
/// nothing else, is not itself asked for, and the region keeps at most ``maximumOperands``
/// operands and ``maximumInstructions`` instructions. Views (broadcasts of scalars, transposes)
/// stay outside as strided operands. Setting `TENSORENGINE_FUSION=0` turns the pass off.
enum FusionPass {
    static let enabled = ProcessInfo.processInfo.environment["TENSORENGINE_FUSION"] != "0"

    /// The most operands a region reads. A device kernel takes each operand as arguments (a
    /// buffer, an offset, strides for a strided one), which devices bound
    /// (`CL_DEVICE_MAX_PARAMETER_SIZE` is at least 1 KiB, 4 KiB on common GPUs), and PoCL's
    /// launch cost grows faster than linearly in them (0.6 ms for 100 buffers, 47 ms for 1000).
    /// A longer chain becomes several regions, each its own pass.
    static let maximumOperands = 32

    /// The most instructions a region runs. Each takes a strip-long slot of the host engine's
    /// (``ElementwiseEngine/stripSize``: about 1 KiB), which should stay in a core's L2 cache:
    /// 128 slots take an eighth of the 1 MiB L2 the engine was tuned on. A longer chain becomes
    /// several regions.
    static let maximumInstructions = 128

    static func candidates(for graph: PendingGraph) -> [Planner.Candidate] {
        let plain = { (node: Node) in
            Planner.Candidate(node: node, kernel: .op(node.op), operands: Array(node.inputs), absorbed: [])
        }
        let pending = graph.pending
        guard enabled else { return pending.map(plain) }
        // ReLUs fused into their convolutions first; such a ReLU neither joins nor starts a region.
        let epilogues = EpilogueFusion.candidates(for: graph)
        var absorbedInto = NodeSet()
        for node in pending {
            for convolution in epilogues[node.id]?.absorbed ?? [] { absorbedInto.insert(convolution.id) }
        }
        var regions = NodeMap<Planner.Candidate>()
        for root in pending.reversed()
        where root.op.kind.isElementwise && !absorbedInto.contains(root.id) && epilogues[root.id] == nil {
            guard let region = buildRegion(root, in: graph, isEpilogue: { epilogues[$0.id] != nil }) else { continue }
            for node in region.absorbed { absorbedInto.insert(node.id) }
            regions[root.id] = region
        }
        return pending.compactMap { node in
            if absorbedInto.contains(node.id) { return nil }
            return epilogues[node.id] ?? regions[node.id] ?? plain(node)
        }
    }

    /// The region rooted at `root`, or `nil` when nothing would be fused.
    private static func buildRegion(
        _ root: Node, in graph: PendingGraph, isEpilogue: (Node) -> Bool
    ) -> Planner.Candidate? {
        var operands: [Node] = []
        var absorbed: [Node] = []
        var instructions: [FusedRegion.Instruction] = []
        var types: [ScalarType] = []
        var registerOf = NodeMap<Int>()
        var operandRegister = NodeMap<Int>()

        func fusable(_ node: Node) -> Bool {
            node !== root && node.op.kind.isElementwise && !graph.isSource(node)
                && node.signature.shape == root.signature.shape && graph.uses(of: node.id) == 1 && !isEpilogue(node)
        }
        // Operands first: collect external inputs in a stable order, then emit instructions.
        // A node's inputs that cannot join become operands at once (one shared by many nodes,
        // such as a scalar constant, once); `reserved` counts the joinable inputs not yet looked
        // at, each of which may still become an operand: a node is absorbed only when its own
        // inputs fit beside them, so operands never exceed the cap, nor instructions theirs.
        var reserved = 0
        var instructionCount = 1
        func addOperand(_ node: Node) {
            operandRegister[node.id] = operands.count
            operands.append(node)
        }
        func collect(_ node: Node) {
            var joinable: [Node] = []
            for input in node.inputs where operandRegister[input.id] == nil {
                if fusable(input) { joinable.append(input) } else { addOperand(input) }
            }
            reserved += joinable.count
            for input in joinable {
                reserved -= 1
                if instructionCount < maximumInstructions,
                    operands.count + reserved + input.inputs.count <= maximumOperands
                {
                    instructionCount += 1
                    collect(input)
                } else {
                    addOperand(input)
                }
            }
        }
        collect(root)
        func emit(_ node: Node) -> Int {
            if let register = registerOf[node.id] { return register }
            // An operand: a node outside the region, or a fusable one left out by the cap.
            if node !== root, let register = operandRegister[node.id] { return register }
            let arguments = node.inputs.map(emit)
            guard node.op.kind.isElementwise else { return operandRegister[node.id] ?? 0 }
            instructions.append(FusedRegion.Instruction(op: node.op, operands: arguments))
            types.append(node.signature.scalarType)
            let register = operands.count + instructions.count - 1
            registerOf[node.id] = register
            if node !== root { absorbed.append(node) }
            return register
        }
        _ = emit(root)
        guard instructions.count >= 2 else { return nil }
        let region = FusedRegion(inputTypes: operands.map(\.signature.scalarType), instructions: instructions, instructionTypes: types)
        return Planner.Candidate(node: root, kernel: .fused(region), operands: operands, absorbed: absorbed)
    }
}
