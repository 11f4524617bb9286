/// The pending part of the graph behind some tensors, in a deterministic topological order.
///
/// Every node reached has a position: sources first, then the pending nodes in order. Plan keys,
/// cached fusion layouts and plan assembly all number nodes this way, from this one table.
struct PendingGraph {
    /// Nodes to compute, operands before their users.
    let order: [Node]
    /// Nodes that already have values (constants and materialized results).
    let sources: [Node]
    /// Per node reached: how many times its value is read (by steps, and once per target) and
    /// its position.
    private let slots: NodeMap<Slot>

    private struct Slot {
        var uses: Int
        var position: Int
    }

    /// Walks back from the targets without recursion (graphs can be deep), stopping at nodes
    /// that already hold a result.
    init(targets: [Node]) {
        // Room for small graphs up front: growing an array from empty reallocates it twice.
        var order: [Node] = []
        order.reserveCapacity(8)
        var sources: [Node] = []
        sources.reserveCapacity(8)
        // A node is in `slots` once it is reached; its position is set when it is visited (-1
        // before), then renumbered sources-first at the end.
        var slots = NodeMap<Slot>()
        let fresh = Slot(uses: 0, position: -1)
        for target in targets { slots.update(target.id, default: fresh) { $0.uses += 1 } }
        // Frames are a struct, not a tuple: an array of tuples looks its type up at run time.
        struct Frame {
            let node: Node
            let expanded: Bool
        }
        var stack: [Frame] = []
        stack.reserveCapacity(targets.count + 16)
        for target in targets.reversed() { stack.append(Frame(node: target, expanded: false)) }
        while let frame = stack.popLast() {
            let node = frame.node
            if frame.expanded {
                order.append(node)
                continue
            }
            let firstVisit = slots.update(node.id, default: fresh) { slot in
                guard slot.position < 0 else { return false }
                slot.position = 0
                return true
            }
            guard firstVisit else { continue }
            if node.storedResult != nil {
                sources.append(node)
                continue
            }
            stack.append(Frame(node: node, expanded: true))
            for input in node.inputs.reversed() {
                let unvisited = slots.update(input.id, default: fresh) { slot in
                    slot.uses += 1
                    return slot.position < 0
                }
                if unvisited { stack.append(Frame(node: input, expanded: false)) }
            }
        }
        for (position, node) in sources.enumerated() { slots.update(node.id, default: fresh) { $0.position = position } }
        for (position, node) in order.enumerated() { slots.update(node.id, default: fresh) { $0.position = sources.count + position } }
        self.order = order
        self.sources = sources
        self.slots = slots
    }

    /// How many times the node's value is read in this graph (0 for a node outside it).
    func uses(of id: UInt64) -> Int { slots[id]?.uses ?? 0 }

    /// The node's position (sources first, then `order`), or `nil` for a node outside the graph.
    func position(of id: UInt64) -> Int? { slots[id]?.position }

    /// Sources and pending nodes together.
    var nodeCount: Int { sources.count + order.count }

    /// The node at a position in `0..<nodeCount`.
    func node(at position: Int) -> Node {
        position < sources.count ? sources[position] : order[position - sources.count]
    }
}
