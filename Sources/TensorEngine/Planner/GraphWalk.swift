/// The pending part of the graph behind some tensors, in a deterministic topological order.
struct PendingGraph {
    /// Nodes to compute, operands before their users.
    let order: [Node]
    /// Nodes that already have values (constants and materialized results).
    let sources: [Node]
    /// How many times each node's value is read (by steps, and once per target).
    let uses: NodeMap<Int>

    /// Walks back from the targets without recursion (graphs can be deep), stopping at nodes
    /// that already hold a result.
    init(targets: [Node]) {
        var order: [Node] = []
        var sources: [Node] = []
        var visited = NodeSet()
        var uses = NodeMap<Int>()
        for target in targets { uses[target.id, default: 0] += 1 }
        // Frames are a struct, not a tuple: an array of tuples looks its type up at run time.
        struct Frame {
            let node: Node
            let expanded: Bool
        }
        var stack: [Frame] = targets.reversed().map { Frame(node: $0, expanded: false) }
        while let frame = stack.popLast() {
            let node = frame.node
            if frame.expanded {
                order.append(node)
                continue
            }
            guard visited.insert(node.id) else { continue }
            if node.storedResult != nil {
                sources.append(node)
                continue
            }
            stack.append(Frame(node: node, expanded: true))
            for input in node.inputs.reversed() {
                uses[input.id, default: 0] += 1
                if !visited.contains(input.id) { stack.append(Frame(node: input, expanded: false)) }
            }
        }
        self.order = order
        self.sources = sources
        self.uses = uses
    }
}
