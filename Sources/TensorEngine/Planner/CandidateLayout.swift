/// The fusion pass's grouping of a pending graph, by node position: sources first, then the
/// pending nodes in order, the numbering ``PlanKey`` uses. The grouping depends only on what the
/// key holds (ops, shapes, wiring, which nodes are targets), so a plan found in the cache rebuilds
/// its candidates from the layout instead of running the pass again.
struct CandidateLayout: Sendable {
    /// A candidate by positions. Its kernel is the node's own op unless `region` is set; the op
    /// is read back from the node rather than kept, and the region kept as an optional rather than
    /// as a `Kernel`: LeakSanitizer does not see references inside multi-payload enums (their
    /// spare bits hide the pointer), and this cache lives as long as the process.
    private struct Entry: Sendable {
        let node: Int
        let region: FusedRegion?
        let operands: [Int]
        let absorbed: [Int]
    }

    private let entries: [Entry]

    init(_ candidates: [Planner.Candidate], in graph: PendingGraph) {
        // Every node of a candidate is a source or a pending node of this graph.
        let index = { (node: Node) in graph.position(of: node.id) ?? -1 }
        entries = candidates.map { candidate in
            let region: FusedRegion?
            switch candidate.kernel {
            case .op: region = nil
            case .fused(let fused): region = fused
            }
            return Entry(node: index(candidate.node), region: region,
                         operands: candidate.operands.map(index), absorbed: candidate.absorbed.map(index))
        }
    }

    /// The candidates for `graph`, which has the key this layout was made for; `nil` if a
    /// position falls outside it (a key collision the equality check should have excluded).
    func candidates(in graph: PendingGraph) -> [Planner.Candidate]? {
        let valid = 0..<graph.nodeCount
        var candidates: [Planner.Candidate] = []
        candidates.reserveCapacity(entries.count)
        for entry in entries {
            guard valid.contains(entry.node), entry.operands.allSatisfy(valid.contains), entry.absorbed.allSatisfy(valid.contains) else { return nil }
            let node = graph.node(at: entry.node)
            candidates.append(Planner.Candidate(
                node: node, kernel: entry.region.map { .fused($0) } ?? .op(node.op),
                operands: entry.operands.map(graph.node(at:)), absorbed: entry.absorbed.map(graph.node(at:))))
        }
        return candidates
    }
}
