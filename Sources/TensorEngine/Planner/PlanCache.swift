import Synchronization

/// The structure of a pending graph: ops, shapes, scalar types, wiring, targets and policy. Two
/// graphs with the same key get the same plan, whatever their data.
///
/// A lookup does not build a key: the graph walk hashes the structure as it goes
/// (``PendingGraph/structureHash``) and ``matches(_:policy:)`` compares a stored key with
/// the graph in place, so a cache hit allocates nothing for the key. A key is built only to store
/// a new plan.
struct PlanKey: Sendable {
    /// Per position: the node's op, or `nil` for a source.
    private let ops: [Op?]
    /// Per position: the node's signature.
    private let signatures: [TensorSignature]
    /// Each pending node's inputs by position, -2 closing each node's list; then the targets'
    /// positions.
    private let wiring: [Int]
    private let policy: ComputePolicy
    /// The graph's ``PendingGraph/structureHash``.
    let contentHash: Int
    /// The graph's ``PendingGraph/sizeFreeHash(targets:)``.
    let sizeFreeHash: Int

    init(graph: PendingGraph, targets: [Node], policy: ComputePolicy) {
        self.ops = graph.nodes.indices.map { graph.isSource(at: $0) ? nil : graph.nodes[$0].op }
        self.signatures = graph.nodes.map(\.signature)
        self.wiring = graph.wiring
        self.policy = policy
        contentHash = graph.structureHash
        sizeFreeHash = graph.sizeFreeHash(targets: targets)
    }

    /// Whether `graph` has this key's structure up to sizes, with every node's element count
    /// within a factor of two of the key's (so a plan placed for these sizes suits it): the same
    /// policy and wiring, and per position the same op kind, scalar type and rank. Elementwise ops
    /// must be equal, attributes included, as fused regions keep them; other ops may differ in
    /// their attributes (a slice's range, a reshape's sizes), as a step runs its node's own op.
    /// The caller still checks that every step runs at the new sizes (``Planner/fits(_:_:)``).
    func matchesUpToSizes(_ graph: PendingGraph, policy: ComputePolicy) -> Bool {
        compare(graph, policy: policy, upToSizes: true)
    }

    /// Whether two element counts are within a factor of two (both empty, or both not).
    private static func similar(_ a: Int, _ b: Int) -> Bool {
        guard a != b else { return true }
        guard a > 0, b > 0 else { return false }
        return a / 2 <= b && b / 2 <= a
    }

    /// Whether `graph` (its targets are in its wiring) with `policy` has this key; stops at the
    /// first difference.
    func matches(_ graph: PendingGraph, policy: ComputePolicy) -> Bool {
        compare(graph, policy: policy, upToSizes: false)
    }

    /// The walk behind both matches: the wiring, then per position the node against the key.
    private func compare(_ graph: PendingGraph, policy: ComputePolicy, upToSizes: Bool) -> Bool {
        // The walk wrote the graph's wiring down in the key's form, the targets' positions last.
        guard policy == self.policy, graph.nodes.count == ops.count, graph.wiring == wiring else { return false }
        for (position, node) in graph.nodes.enumerated() {
            let (new, old) = (node.signature, signatures[position])
            if upToSizes {
                guard new.scalarType == old.scalarType, new.shape.count == old.shape.count,
                    PlanKey.similar(new.elementCount, old.elementCount)
                else { return false }
            } else {
                guard new == old else { return false }
            }
            let isSource = graph.isSource(at: position)
            guard let op = ops[position] else {
                guard isSource else { return false }
                continue
            }
            guard !isSource else { return false }
            if upToSizes {
                guard node.op.kind == op.kind, !op.kind.isElementwise || node.op == op else { return false }
            } else {
                guard node.op == op else { return false }
            }
        }
        return true
    }
}

/// A bounded cache of planning decisions by graph structure, so a loop that evaluates the
/// same-shaped graph again does not plan again. Least recently used entries go first.
package final class PlanCache: Sendable {
    /// How many plans the cache keeps.
    let capacity: Int
    private let state = Guarded(State())

    private struct State {
        /// Entries by their graph's structure hash; a bucket holds one structure's plans under
        /// different policies, and more only on a collision.
        var entries: [Int: [Entry]] = [:]
        /// The entries planned afresh, by their graph's size-free hash: the plans a graph of the
        /// same structure at other sizes may reuse.
        var bySizeFreeHash: [Int: [Entry]] = [:]
        var count = 0
        var clock: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    /// A class, so that a hit updates its last use without writing to the dictionary (a second
    /// hash and lookup); touched only under the cache's lock.
    private final class Entry: @unchecked Sendable {
        let key: PlanKey
        let plan: PlanTemplate
        var lastUse: UInt64

        init(key: PlanKey, plan: PlanTemplate, lastUse: UInt64) {
            self.key = key
            self.plan = plan
            self.lastUse = lastUse
        }
    }

    package init(capacity: Int = 128) { self.capacity = capacity }

    /// The plan stored for a graph of this structure, if any.
    func plan(for graph: PendingGraph, policy: ComputePolicy) -> PlanTemplate? {
        let hash = graph.structureHash
        return state.withLock { state in
            state.clock += 1
            let clock = state.clock
            guard let entry = state.entries[hash]?.first(where: { $0.key.matches(graph, policy: policy) }) else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            entry.lastUse = clock
            return entry.plan
        }
    }

    /// A plan stored for a graph of this structure at similar sizes
    /// (``PlanKey/matchesUpToSizes(_:policy:)``), if any, most recently used first.
    func plansUpToSizes(for graph: PendingGraph, targets: [Node], policy: ComputePolicy) -> [PlanTemplate] {
        let sizeFree = graph.sizeFreeHash(targets: targets)
        return state.withLock { state in
            state.clock += 1
            let clock = state.clock
            let bucket = state.bySizeFreeHash[sizeFree] ?? []
            let matching = bucket.sorted { $0.lastUse > $1.lastUse }
                .filter { $0.key.matchesUpToSizes(graph, policy: policy) }
            // Used again: kept longer than plans of one size only.
            for entry in matching { entry.lastUse = clock }
            return matching.map(\.plan)
        }
    }

    /// Stores the plan for a graph of this structure, evicting the least recently used entry
    /// when the cache is full. A plan made afresh (`reusableAtOtherSizes`) also serves graphs of
    /// the same structure at similar sizes; one reused from such a plan is stored for its exact
    /// structure only.
    func store(
        _ plan: PlanTemplate, for graph: PendingGraph, targets: [Node], policy: ComputePolicy,
        reusableAtOtherSizes: Bool = true
    ) {
        let key = PlanKey(graph: graph, targets: targets, policy: policy)
        state.withLock { state in
            state.clock += 1
            if let index = state.entries[key.contentHash]?.firstIndex(where: { $0.key.matches(graph, policy: policy) }) {
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
                if let oldest, let evicted = state.entries[oldest.hash]?.remove(at: oldest.index) {
                    if state.entries[oldest.hash]?.isEmpty ?? false { state.entries[oldest.hash] = nil }
                    let sizeFree = evicted.key.sizeFreeHash
                    state.bySizeFreeHash[sizeFree]?.removeAll { $0 === evicted }
                    if state.bySizeFreeHash[sizeFree]?.isEmpty ?? false { state.bySizeFreeHash[sizeFree] = nil }
                    state.count -= 1
                }
            }
            let entry = Entry(key: key, plan: plan, lastUse: state.clock)
            state.entries[key.contentHash, default: []].append(entry)
            if reusableAtOtherSizes { state.bySizeFreeHash[key.sizeFreeHash, default: []].append(entry) }
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
            state.bySizeFreeHash.removeAll()
            state.count = 0
        }
    }
}
