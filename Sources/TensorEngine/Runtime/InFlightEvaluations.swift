import Synchronization

/// The unevaluated tensors some evaluation is computing right now, so that tasks asking for the
/// same tensor at once compute it once: the first claims it and runs it; the others wait for
/// its result instead of planning and running the same graph again.
///
/// An evaluation computes what it claimed before it waits for anything, so no two evaluations
/// can wait for each other. If the claiming evaluation fails, its waiters find no result and
/// compute the tensor themselves (and meet the same error, as their own).
final class InFlightEvaluations: Sendable {
    static let shared = InFlightEvaluations()

    /// By claimed node: the completion its waiters wait for, made when the first one comes (an
    /// evaluation nobody waits for, nearly all of them, allocates nothing here).
    private let claims = Guarded<[ObjectIdentifier: Completion?]>([:])

    /// Claims the nodes no other evaluation is computing; returns them, and the completions of
    /// the others.
    func claim(_ nodes: [Node]) -> (mine: [Node], others: [Completion]) {
        claims.withLock { claims in
            if !nodes.contains(where: { claims[ObjectIdentifier($0)] != nil }) {
                for node in nodes { claims[ObjectIdentifier(node)] = .some(nil) }
                return (nodes, [])
            }
            var mine: [Node] = []
            var others: [Completion] = []
            for node in nodes {
                let key = ObjectIdentifier(node)
                if let claimed = claims[key] {
                    let completion = claimed ?? Completion()
                    claims[key] = completion
                    others.append(completion)
                } else {
                    claims[key] = .some(nil)
                    mine.append(node)
                }
            }
            return (mine, others)
        }
    }

    /// Releases claims (whether or not the nodes got results) and wakes their waiters.
    func finish(_ nodes: [Node]) {
        let finished = claims.withLock { claims in
            nodes.compactMap { claims.removeValue(forKey: ObjectIdentifier($0)) ?? nil }
        }
        for completion in finished { completion.signal() }
    }

    /// The number of claims held (for tests: zero once every evaluation has returned).
    var claimCount: Int { claims.withLock { $0.count } }
}

/// A one-shot event tasks can wait for.
final class Completion: Sendable {
    private let state = Guarded<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Returns once ``signal()`` has been called (at once if it has).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.done { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func signal() {
        let waiters = state.withLock { state in
            state.done = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
