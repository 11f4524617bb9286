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
        var stack: [(Node, Bool)] = targets.reversed().map { ($0, false) }
        while let (node, expanded) = stack.popLast() {
            if expanded {
                order.append(node)
                continue
            }
            guard visited.insert(node.id) else { continue }
            if node.storedResult != nil {
                sources.append(node)
                continue
            }
            stack.append((node, true))
            for input in node.inputs.reversed() {
                uses[input.id, default: 0] += 1
                if !visited.contains(input.id) { stack.append((input, false)) }
            }
        }
        self.order = order
        self.sources = sources
        self.uses = uses
    }
}
