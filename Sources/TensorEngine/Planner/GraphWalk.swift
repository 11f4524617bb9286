/// The pending part of the graph behind some tensors, in a deterministic topological order.
///
/// Every node reached has a position in ``nodes``: operands before their users, a node that
/// already holds a value (a source) where the walk first meets it. Plans, plan keys and the
/// executor all refer to nodes by these positions, so a cached plan fits any graph of the same
/// structure as it stands. The walk also hashes that structure (``structureHash``), so a cache
/// lookup needs no second pass.
package struct PendingGraph {
    /// Every node reached, by position.
    let nodes: [Node]
    /// How many of ``nodes`` already had values when the graph was walked.
    let sourceCount: Int
    /// A hash of what ``PlanKey`` holds: per position, the node's signature and, for a pending
    /// node, its op and its inputs' positions; then the targets' positions.
    let structureHash: Int
    /// Per node reached: how many times its value is read (by steps, and once per target), its
    /// position, and whether it is a source.
    private let slots: NodeMap<Slot>

    private struct Slot {
        var uses: Int
        /// -1 before the walk reaches the node, -2 while its inputs are walked, then its position.
        var position: Int
        var isSource: Bool
    }

    /// Walks back from the targets without recursion (graphs can be deep), stopping at nodes
    /// that already hold a result. A pending node gets its position once all its inputs have
    /// theirs, which is when its part of the structure hash is known.
    package init(targets: [Node]) {
        // Room for small graphs up front: growing an array from empty reallocates it twice.
        var nodes: [Node] = []
        nodes.reserveCapacity(8)
        var slots = NodeMap<Slot>()
        var hasher = Hasher()
        var sourceCount = 0
        let fresh = Slot(uses: 0, position: -1, isSource: false)
        for target in targets { slots.update(target.id, default: fresh) { $0.uses += 1 } }
        // Frames are a struct, not a tuple: an array of tuples looks its type up at run time. They
        // hold their nodes unretained: the targets, alive for the whole walk, hold every node
        // reached through their operands, and retaining each frame's node (and each operand as
        // the loop over them binds it) was a sixth of a chain of scalar steps' evaluation.
        struct Frame {
            let node: Unmanaged<Node>
            let expanded: Bool
        }
        var stack: [Frame] = []
        stack.reserveCapacity(targets.count + 16)
        for target in targets.reversed() { stack.append(Frame(node: .passUnretained(target), expanded: false)) }
        withExtendedLifetime(targets) {
            while let frame = stack.popLast() {
                frame.node._withUnsafeGuaranteedRef { node in
                    if frame.expanded {
                        hasher.combine(node.op)
                        hasher.combine(node.signature)
                        node.inputs.withUnsafeBufferPointer { inputs in
                            for index in inputs.indices { hasher.combine(slots[inputs[index].id]?.position ?? -1) }
                        }
                        hasher.combine(-2)
                        let position = nodes.count
                        slots.update(node.id, default: fresh) { $0.position = position }
                        nodes.append(node)
                        return
                    }
                    let isSource = node.hasStoredResult
                    let firstVisit = slots.update(node.id, default: fresh) { slot in
                        guard slot.position == -1 else { return false }
                        slot.position = isSource ? nodes.count : -2
                        slot.isSource = isSource
                        return true
                    }
                    guard firstVisit else { return }
                    if isSource {
                        hasher.combine(-3)
                        hasher.combine(node.signature)
                        nodes.append(node)
                        sourceCount += 1
                        return
                    }
                    stack.append(Frame(node: frame.node, expanded: true))
                    node.inputs.withUnsafeBufferPointer { inputs in
                        for index in inputs.indices.reversed() {
                            let unvisited = slots.update(inputs[index].id, default: fresh) { slot in
                                slot.uses += 1
                                return slot.position == -1
                            }
                            if unvisited { stack.append(Frame(node: .passUnretained(inputs[index]), expanded: false)) }
                        }
                    }
                }
            }
        }
        for target in targets { hasher.combine(slots[target.id]?.position ?? -1) }
        self.nodes = nodes
        self.sourceCount = sourceCount
        self.structureHash = hasher.finalize()
        self.slots = slots
    }

    /// The structure up to sizes: per position, the op's kind (none for a source), the result's
    /// scalar type and rank, and the wiring; then the targets' positions. Graphs that differ only
    /// in their sizes (a decoder's step at each cache length) share it, and the plan cache looks
    /// for a plan of similar sizes under it. Computed on a cache miss only, not in the walk every
    /// evaluation makes.
    func sizeFreeHash(targets: [Node]) -> Int {
        var hasher = Hasher()
        for node in nodes {
            hasher.combine(isSource(node) ? nil : node.op.kind)
            hasher.combine(node.signature.scalarType)
            hasher.combine(node.signature.shape.count)
            guard !isSource(node) else { continue }
            for input in node.inputs { hasher.combine(position(of: input.id) ?? -1) }
            hasher.combine(-2)
        }
        for target in targets { hasher.combine(position(of: target.id) ?? -1) }
        return hasher.finalize()
    }

    /// How many times the node's value is read in this graph (0 for a node outside it).
    func uses(of id: UInt64) -> Int { slots[id]?.uses ?? 0 }

    /// The node's position in ``nodes``, or `nil` for a node outside the graph.
    func position(of id: UInt64) -> Int? { slots[id]?.position }

    /// Whether the node had a value when the graph was walked (`false` outside the graph).
    func isSource(_ node: Node) -> Bool { slots[node.id]?.isSource ?? false }

    /// The nodes to compute, operands before their users.
    var pending: [Node] { nodes.filter { !isSource($0) } }

    /// The nodes that already have values (constants and materialized results), in order.
    var sources: [Node] { nodes.filter(isSource) }

    /// How many nodes there are to compute.
    package var pendingCount: Int { nodes.count - sourceCount }
}
