import Synchronization

/// The structure of a pending graph: ops, shapes, scalar types, wiring and policy. Two graphs with
/// the same key get the same plan, whatever their data.
///
/// The key hashes its contents once, when made: a cache lookup and the update of the entry's
/// last use then hash one integer each, not the whole graph again.
struct PlanKey: Hashable, Sendable {
    private let ops: [Op]
    private let signatures: [TensorSignature]
    private let wiring: [Int]
    private let policy: ComputePolicy
    private let contentHash: Int

    static func == (lhs: PlanKey, rhs: PlanKey) -> Bool {
        lhs.contentHash == rhs.contentHash && lhs.wiring == rhs.wiring && lhs.ops == rhs.ops
            && lhs.signatures == rhs.signatures && lhs.policy == rhs.policy
    }

    func hash(into hasher: inout Hasher) { hasher.combine(contentHash) }

    init(graph: PendingGraph, targets: [Node], policy: ComputePolicy) {
        var position = NodeMap<Int>(capacity: graph.sources.count + graph.order.count)
        var signatures: [TensorSignature] = []
        var wiring: [Int] = []
        for source in graph.sources {
            position[source.id] = position.count
            signatures.append(source.signature)
        }
        var ops: [Op] = []
        ops.reserveCapacity(graph.order.count)
        for node in graph.order {
            position[node.id] = position.count
            ops.append(node.op)
            signatures.append(node.signature)
            for input in node.inputs { wiring.append(position[input.id] ?? -1) }
            wiring.append(-2)
        }
        for target in targets { wiring.append(position[target.id] ?? -1) }
        self.ops = ops
        self.signatures = signatures
        self.wiring = wiring
        self.policy = policy
        var hasher = Hasher()
        hasher.combine(ops)
        hasher.combine(signatures)
        hasher.combine(wiring)
        hasher.combine(policy)
        contentHash = hasher.finalize()
    }
}

/// A bounded cache of planning decisions by graph structure, so a loop that evaluates the
/// same-shaped graph again does not plan again. Least recently used entries go first.
final class PlanCache: Sendable {
    /// How many plans the cache keeps.
    let capacity: Int
    private let state = Guarded(State())

    private struct State {
        var entries: [PlanKey: (plan: CachedPlan, lastUse: UInt64)] = [:]
        var clock: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    init(capacity: Int = 128) { self.capacity = capacity }

    /// What a cache entry keeps: the fusion pass's grouping and a decision per candidate.
    struct CachedPlan: Sendable {
        let layout: CandidateLayout
        let decisions: [Planner.Decision]
    }

    func plan(for key: PlanKey) -> CachedPlan? {
        state.withLock { state in
            state.clock += 1
            let clock = state.clock
            guard let plan = state.entries[key]?.plan else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            state.entries[key]?.lastUse = clock
            return plan
        }
    }

    func store(_ plan: CachedPlan, for key: PlanKey) {
        state.withLock { state in
            state.clock += 1
            if state.entries.count >= capacity, state.entries[key] == nil,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
            state.entries[key] = (plan, state.clock)
        }
    }

    /// Entries, hits and misses so far.
    var statistics: (entries: Int, hits: Int, misses: Int) {
        state.withLock { ($0.entries.count, $0.hits, $0.misses) }
    }

    func removeAll() { state.withLock { $0.entries.removeAll() } }
}
