/// The fusion pass's grouping of a pending graph, by node position: sources first, then the
/// pending nodes in order, the numbering ``PlanKey`` uses. The grouping depends only on what the
/// key holds (ops, shapes, wiring, which nodes are targets), so a plan found in the cache rebuilds
/// its candidates from the layout instead of running the pass again.
struct CandidateLayout: Sendable {
    private struct Entry: Sendable {
        let node: Int
        let kernel: Kernel
        let operands: [Int]
        let absorbed: [Int]
    }

    private let entries: [Entry]

    init(_ candidates: [Planner.Candidate], in graph: PendingGraph) {
        var position = NodeMap<Int>(capacity: graph.sources.count + graph.order.count)
        for node in graph.sources { position[node.id] = position.count }
        for node in graph.order { position[node.id] = position.count }
        // Every node of a candidate is a source or a pending node of this graph.
        let index = { (node: Node) in position[node.id] ?? -1 }
        entries = candidates.map { candidate in
            Entry(node: index(candidate.node), kernel: candidate.kernel,
                  operands: candidate.operands.map(index), absorbed: candidate.absorbed.map(index))
        }
    }

    /// The candidates for `graph`, which has the key this layout was made for; `nil` if a
    /// position falls outside it (a key collision the equality check should have excluded).
    func candidates(in graph: PendingGraph) -> [Planner.Candidate]? {
        let nodes = graph.sources + graph.order
        let valid = nodes.indices
        var candidates: [Planner.Candidate] = []
        candidates.reserveCapacity(entries.count)
        for entry in entries {
            guard valid.contains(entry.node), entry.operands.allSatisfy(valid.contains), entry.absorbed.allSatisfy(valid.contains) else { return nil }
            candidates.append(Planner.Candidate(
                node: nodes[entry.node], kernel: entry.kernel,
                operands: entry.operands.map { nodes[$0] }, absorbed: entry.absorbed.map { nodes[$0] }))
        }
        return candidates
    }
}
