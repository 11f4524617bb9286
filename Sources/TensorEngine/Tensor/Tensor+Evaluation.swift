extension Tensor {
    /// Evaluates the tensor (if it has not been) and returns its scalars.
    ///
    /// Throws the ``TensorError`` the tensor carries, a run-time error (an out-of-range gather
    /// index, a failed allocation, a backend failure), or ``TensorError/Kind/materialization`` when
    /// `type` is not the tensor's scalar type. A result, once computed, is kept, and the array shares
    /// it without a copy: asking again, at any size, costs the same few microseconds.
    public func shapedArray<S: TensorScalar>(of type: S.Type, file: StaticString = #fileID, line: UInt = #line)
        async throws(TensorError) -> ShapedArray<S>
    {
        let location = SourceLocation(file, line)
        guard S.scalarType == dtype || error != nil else {
            throw TensorError(
                .materialization, op: "shapedArray", operandShapes: [shape],
                message: "the tensor holds \(dtype), not \(S.scalarType)", location: location)
        }
        if let failure = error { throw failure.locatedIfUnknown(location) }
        if let node, !node.hasStoredResult { _ = try await Tensor.evaluate(pending: [node], policy: nil, at: location) }
        guard let value = node?.storedResult, let buffer = value.buffer as? HostBuffer else {
            throw TensorError(
                .backendFailure, op: "shapedArray", message: "the evaluated tensor has no host result",
                location: location)
        }
        // The array shares the result (the node keeps it too, read-only): no copy at any size.
        return ShapedArray(sharing: buffer, offset: value.layout.offset, shape: shape, count: scalarCount)
    }

    /// Evaluates several tensors in one plan, so subgraphs they share run once. Results are kept
    /// on the tensors; later ``shapedArray(of:file:line:)`` calls return them at no cost. A tensor
    /// another task is evaluating at the same moment is not computed again: this call waits for
    /// that result (and computes it itself only if that evaluation fails).
    ///
    /// - Parameter policy: the compute policy for this evaluation; by default the task-local one
    ///   (``withComputePolicy(_:_:)``), else `TENSORENGINE_POLICY`, else `.all`.
    /// - Returns: memory and step counts of the evaluation.
    @discardableResult
    public static func evaluate(
        _ tensors: [Tensor], policy: ComputePolicy? = nil, file: StaticString = #fileID, line: UInt = #line
    ) async throws(TensorError) -> EvaluationStatistics {
        let location = SourceLocation(file, line)
        if let failed = tensors.first(where: { $0.error != nil })?.error {
            throw failed.locatedIfUnknown(location)
        }
        return try await evaluate(pending: unevaluatedNodes(of: tensors), policy: policy, at: location)
    }

    /// ``evaluate(_:policy:file:line:)`` of the nodes without a result yet (one array: a
    /// tensor's read-back makes no array of tensors first).
    private static func evaluate(
        pending: [Node], policy: ComputePolicy?, at location: SourceLocation
    ) async throws(TensorError) -> EvaluationStatistics {
        guard !pending.isEmpty else {
            return EvaluationStatistics(peakLiveBytes: 0, totalIntermediateBytes: 0, steps: 0, copies: 0)
        }
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        // Tensors another task is evaluating right now are waited for, not computed twice.
        let (mine, others) = InFlightEvaluations.shared.claim(pending)
        var statistics = EvaluationStatistics(peakLiveBytes: 0, totalIntermediateBytes: 0, steps: 0, copies: 0)
        if !mine.isEmpty {
            defer { InFlightEvaluations.shared.finish(mine) }
            statistics = try run(mine, policy: chosen)
        }
        for completion in others { await completion.wait() }
        if pending.contains(where: { $0.storedResult == nil }) {
            let failedElsewhere = pending.filter { $0.storedResult == nil }
            let own = try run(failedElsewhere, policy: chosen)
            statistics = EvaluationStatistics(
                peakLiveBytes: Swift.max(statistics.peakLiveBytes, own.peakLiveBytes),
                totalIntermediateBytes: statistics.totalIntermediateBytes + own.totalIntermediateBytes,
                steps: statistics.steps + own.steps, copies: statistics.copies + own.copies)
        }
        return statistics
    }

    /// The nodes of `tensors` without a result yet, in one array (evaluating one small op is a
    /// few microseconds, and each array made on the way is a noticeable share of them).
    private static func unevaluatedNodes(of tensors: [Tensor]) -> [Node] {
        var nodes: [Node] = []
        nodes.reserveCapacity(tensors.count)
        for tensor in tensors { if let node = tensor.node, node.storedResult == nil { nodes.append(node) } }
        return nodes
    }

    /// Evaluates tensors synchronously on the calling thread, for the engine's own use when a value
    /// must be known to go on building a graph (an ONNX `Reshape` whose shape is computed from data).
    /// By default the task-local policy applies.
    package static func evaluateNow(_ tensors: [Tensor], policy: ComputePolicy? = nil) throws(TensorError) {
        if let failed = tensors.first(where: { $0.error != nil })?.error { throw failed }
        let pending = unevaluatedNodes(of: tensors)
        guard !pending.isEmpty else { return }
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        _ = try run(pending, policy: chosen)
    }

    /// Plans, checks and runs the graph behind `nodes`, keeping their results on them.
    private static func run(_ nodes: [Node], policy: ComputePolicy) throws(TensorError) -> EvaluationStatistics {
        try runKeepingPlan(nodes, policy: policy).statistics
    }

    /// ``run(_:policy:)`` that also returns the plan it ran, for callers that run it again on new
    /// inputs (an ONNX model's prepared predictions), and the results.
    ///
    /// Results are kept on their nodes, except those marked in `inPlace` (by node): they are only
    /// returned, where the plan left them (a device's memory, a growable buffer), for a holder that
    /// keeps them there (a ``State``); no node may hold a result users could read as row-major
    /// host memory.
    package static func runKeepingPlan(
        _ nodes: [Node], policy: ComputePolicy, inPlace: [Bool] = []
    ) throws(TensorError) -> (plan: Plan, statistics: EvaluationStatistics, results: [Value]) {
        let engine = Engine.shared
        return try runKeepingPlan(nodes, backends: engine.backends, inPlace: inPlace) { nodes throws(TensorError) in
            try engine.plan(nodes, policy: policy).0
        }
    }

    /// What an evaluation does once its policy is chosen: plans the graph behind `nodes` (with
    /// `makePlan`), checks the memory limit, runs the plan on `backends` and keeps the results on
    /// the nodes. The engine's evaluations and the calibration's measurement of their cost
    /// (``Calibration/bookkeepingSeconds(_:launch:budget:)``, which runs before the engine is
    /// set up, with a planner of its own) take this same path.
    static func runKeepingPlan(
        _ nodes: [Node], backends: [any Backend], inPlace: [Bool] = [],
        plan makePlan: ([Node]) throws(TensorError) -> Plan
    ) throws(TensorError) -> (plan: Plan, statistics: EvaluationStatistics, results: [Value]) {
        let plan = try makePlan(nodes)
        try MemoryLimit.check(plan)
        let (results, statistics) = try Executor(backends: backends).run(plan, inPlace: inPlace)
        for (index, (node, value)) in zip(nodes, results).enumerated()
        where !(index < inPlace.count && inPlace[index]) {
            node.store(value)
        }
        return (plan, statistics, results)
    }
}
