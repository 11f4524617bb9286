import Synchronization

/// The pending part of the graph behind some tensors, in a deterministic topological order.
///
/// Every node reached has a position in ``nodes``: operands before their users, a node that
/// already holds a value (a source) where the walk first meets it. Plans, plan keys and the
/// executor all refer to nodes by these positions, so a cached plan fits any graph of the same
/// structure as it stands. The walk also hashes that structure (``structureHash``) and writes its
/// wiring down (``wiring``), so a cache lookup needs no second pass and no lookups by node.
package struct PendingGraph {
    /// Every node reached, by position.
    let nodes: [Node]
    /// How many of ``nodes`` already had values when the graph was walked.
    let sourceCount: Int
    /// A hash of what ``PlanKey`` holds: per position, the node's signature and, for a pending
    /// node, its op and its inputs' positions; then the targets' positions.
    let structureHash: Int
    /// Each pending node's inputs by position, -2 closing each node's list, in position order;
    /// then the targets' positions (-1 for a node outside the graph): ``PlanKey``'s wiring.
    let wiring: [Int]
    /// Per position: whether the node already had a value when the graph was walked.
    private let sourceFlags: [Bool]
    /// The graph's nodes by id, made when first asked for (planning a graph the cache does not
    /// have): a cache hit needs positions only, and the walk keeps its marks elsewhere.
    private let lookup: Lookup

    /// Per node reached: how many times its value is read (by steps, and once per target), its
    /// position, and whether it is a source.
    private struct Slot {
        var uses: Int
        var position: Int
        var isSource: Bool
    }

    private final class Lookup {
        var slots: NodeMap<Slot>?
    }

    /// Walks back from the targets without recursion (graphs can be deep), stopping at nodes
    /// that already hold a result: depth first, operands in order. A source gets its position
    /// where the walk first meets it; a pending node once all its inputs have theirs, which is
    /// when its part of the structure hash and wiring are known (``GraphWalk``).
    package init(targets: [Node]) {
        let walk = GraphWalk.walk(from: targets)
        self.nodes = walk.nodes
        self.wiring = walk.wiring
        self.sourceFlags = walk.sourceFlags
        self.sourceCount = walk.sourceCount
        self.structureHash = walk.structureHash
        self.lookup = Lookup()
    }

    /// The nodes by id, with their uses counted from the wiring: each pending node's inputs,
    /// and each target once.
    private var slots: NodeMap<Slot> {
        if let slots = lookup.slots { return slots }
        var slots = NodeMap<Slot>(capacity: nodes.count)
        for (position, node) in nodes.enumerated() {
            slots[node.id] = Slot(uses: 0, position: position, isSource: sourceFlags[position])
        }
        for position in wiring where position >= 0 {
            slots.update(nodes[position].id, default: Slot(uses: 0, position: position, isSource: false)) {
                $0.uses += 1
            }
        }
        lookup.slots = slots
        return slots
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

    /// Whether the node at `position` had a value when the graph was walked.
    func isSource(at position: Int) -> Bool { sourceFlags[position] }

    /// The nodes to compute, operands before their users.
    var pending: [Node] { nodes.filter { !isSource($0) } }

    /// The nodes that already have values (constants and materialized results), in order.
    var sources: [Node] { nodes.filter(isSource) }

    /// How many nodes there are to compute.
    package var pendingCount: Int { nodes.count - sourceCount }
}
