import Synchronization

/// The structure of a pending graph: ops, shapes, scalar types, wiring and policy. Two graphs with
/// the same key get the same plan, whatever their data.
///
/// A lookup does not build a key: it hashes the graph as it stands (``hash(of:targets:policy:)``)
/// and compares it with the keys of that hash in place (``matches(_:targets:policy:)``), so a
/// cache hit allocates nothing for the key. A key is built only to store a new plan.
struct PlanKey: Sendable {
    private let ops: [Op]
    private let signatures: [TensorSignature]
    private let wiring: [Int]
    private let policy: ComputePolicy
    /// ``hash(of:targets:policy:)`` of the graph the key was made from.
    let contentHash: Int

    init(graph: PendingGraph, targets: [Node], policy: ComputePolicy) {
        var builder = Builder()
        builder.signatures.reserveCapacity(graph.nodeCount)
        builder.ops.reserveCapacity(graph.order.count)
        Self.walk(graph, targets: targets, &builder)
        ops = builder.ops
        signatures = builder.signatures
        wiring = builder.wiring
        self.policy = policy
        contentHash = Self.hash(of: graph, targets: targets, policy: policy)
    }

    /// The hash of the key `graph` would make, without making it.
    static func hash(of graph: PendingGraph, targets: [Node], policy: ComputePolicy) -> Int {
        var hashing = Hashing()
        walk(graph, targets: targets, &hashing)
        hashing.hasher.combine(policy)
        return hashing.hasher.finalize()
    }

    /// Whether `graph` (with `targets` and `policy`) has this key: the walk of
    /// ``walk(_:targets:_:)`` written out, to stop at the first difference.
    func matches(_ graph: PendingGraph, targets: [Node], policy: ComputePolicy) -> Bool {
        guard policy == self.policy, ops.count == graph.order.count, signatures.count == graph.nodeCount else { return false }
        for (index, source) in graph.sources.enumerated() where source.signature != signatures[index] { return false }
        var wire = 0
        for (index, node) in graph.order.enumerated() {
            guard node.op == ops[index], node.signature == signatures[graph.sources.count + index] else { return false }
            for input in node.inputs {
                guard wire < wiring.count, wiring[wire] == graph.position(of: input.id) ?? -1 else { return false }
                wire += 1
            }
            guard wire < wiring.count, wiring[wire] == -2 else { return false }
            wire += 1
        }
        for target in targets {
            guard wire < wiring.count, wiring[wire] == graph.position(of: target.id) ?? -1 else { return false }
            wire += 1
        }
        return wire == wiring.count
    }

    /// What a key is made of, in the order ``walk(_:targets:_:)`` visits it.
    private protocol Visitor {
        mutating func signature(_ signature: TensorSignature)
        mutating func op(_ op: Op)
        mutating func wire(_ position: Int)
    }

    /// The one walk that making and hashing a key share (``matches(_:targets:policy:)`` follows
    /// it): the sources' signatures; each pending node's op, signature and inputs by position, -2
    /// closing its inputs; then the targets' positions.
    private static func walk<V: Visitor>(_ graph: PendingGraph, targets: [Node], _ visitor: inout V) {
        for source in graph.sources { visitor.signature(source.signature) }
        for node in graph.order {
            visitor.op(node.op)
            visitor.signature(node.signature)
            for input in node.inputs { visitor.wire(graph.position(of: input.id) ?? -1) }
            visitor.wire(-2)
        }
        for target in targets { visitor.wire(graph.position(of: target.id) ?? -1) }
    }

    private struct Builder: Visitor {
        var ops: [Op] = []
        var signatures: [TensorSignature] = []
        var wiring: [Int] = []
        mutating func signature(_ signature: TensorSignature) { signatures.append(signature) }
        mutating func op(_ op: Op) { ops.append(op) }
        mutating func wire(_ position: Int) { wiring.append(position) }
    }

    private struct Hashing: Visitor {
        var hasher = Hasher()
        mutating func signature(_ signature: TensorSignature) { hasher.combine(signature) }
        mutating func op(_ op: Op) { hasher.combine(op) }
        mutating func wire(_ position: Int) { hasher.combine(position) }
    }
}

/// A bounded cache of planning decisions by graph structure, so a loop that evaluates the
/// same-shaped graph again does not plan again. Least recently used entries go first.
final class PlanCache: Sendable {
    /// How many plans the cache keeps.
    let capacity: Int
    private let state = Guarded(State())

    private struct State {
        /// Entries by their key's content hash; a bucket holds more than one only on a collision.
        var entries: [Int: [Entry]] = [:]
        var count = 0
        var clock: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    /// A class, so that a hit updates its last use without writing to the dictionary (a second
    /// hash and lookup); touched only under the cache's lock.
    private final class Entry: @unchecked Sendable {
        let key: PlanKey
        let plan: CachedPlan
        var lastUse: UInt64

        init(key: PlanKey, plan: CachedPlan, lastUse: UInt64) {
            self.key = key
            self.plan = plan
            self.lastUse = lastUse
        }
    }

    init(capacity: Int = 128) { self.capacity = capacity }

    /// What a cache entry keeps: the fusion pass's grouping and a decision per candidate.
    struct CachedPlan: Sendable {
        let layout: CandidateLayout
        let decisions: [Planner.Decision]
    }

    /// The plan stored for a graph of this structure, if any.
    func plan(for graph: PendingGraph, targets: [Node], policy: ComputePolicy) -> CachedPlan? {
        let hash = PlanKey.hash(of: graph, targets: targets, policy: policy)
        return state.withLock { state in
            state.clock += 1
            let clock = state.clock
            guard let entry = state.entries[hash]?.first(where: { $0.key.matches(graph, targets: targets, policy: policy) }) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            entry.lastUse = clock
            return entry.plan
        }
    }

    /// Stores the plan for a graph of this structure, evicting the least recently used entry
    /// when the cache is full.
    func store(_ plan: CachedPlan, for graph: PendingGraph, targets: [Node], policy: ComputePolicy) {
        let key = PlanKey(graph: graph, targets: targets, policy: policy)
        state.withLock { state in
            state.clock += 1
            if let index = state.entries[key.contentHash]?.firstIndex(where: { $0.key.matches(graph, targets: targets, policy: policy) }) {
                state.entries[key.contentHash]?[index] = Entry(key: key, plan: plan, lastUse: state.clock)
                return
            }
            if state.count >= capacity {
                var oldest: (hash: Int, index: Int, lastUse: UInt64)?
                for (hash, bucket) in state.entries {
                    for (index, entry) in bucket.enumerated() where entry.lastUse < oldest?.lastUse ?? .max {
                        oldest = (hash, index, entry.lastUse)
                    }
                }
                if let oldest {
                    state.entries[oldest.hash]?.remove(at: oldest.index)
                    if state.entries[oldest.hash]?.isEmpty ?? false { state.entries[oldest.hash] = nil }
                    state.count -= 1
                }
            }
            state.entries[key.contentHash, default: []].append(Entry(key: key, plan: plan, lastUse: state.clock))
            state.count += 1
        }
    }

    /// Entries, hits and misses so far.
    var statistics: (entries: Int, hits: Int, misses: Int) {
        state.withLock { ($0.count, $0.hits, $0.misses) }
    }

    func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.count = 0
        }
    }
}
