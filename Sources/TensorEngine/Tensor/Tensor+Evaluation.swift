extension Tensor {
    /// Evaluates the tensor (if it has not been) and returns its scalars.
    ///
    /// Throws the ``TensorError`` the tensor carries, a run-time error (an out-of-range gather
    /// index, a failed allocation, a backend failure), or ``TensorError/Kind/materialization`` when
    /// `type` is not the tensor's scalar type. A result, once computed, is kept: asking again costs
    /// nothing.
    public func shapedArray<S: TensorScalar>(of type: S.Type, file: StaticString = #fileID, line: UInt = #line) async throws(TensorError) -> ShapedArray<S> {
        let location = SourceLocation(file, line)
        guard S.scalarType == dtype || error != nil else {
            throw TensorError(.materialization, op: "shapedArray", operandShapes: [shape], message: "the tensor holds \(dtype), not \(S.scalarType)", location: location)
        }
        try await Tensor.evaluate([self], file: file, line: line)
        guard let value = node?.storedResult, let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "shapedArray", message: "the evaluated tensor has no host result", location: location)
        }
        let scalars = Array(UnsafeBufferPointer(start: buffer.elements(as: S.self) + value.layout.offset, count: scalarCount))
        return ShapedArray(unchecked: scalars, shape: shape)
    }

    /// Evaluates several tensors in one plan, so subgraphs they share run once. Results are kept
    /// on the tensors; later ``shapedArray(of:file:line:)`` calls return them at no cost.
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
        let pending = tensors.compactMap(\.node).filter { $0.storedResult == nil }
        guard !pending.isEmpty else { return EvaluationStatistics(peakLiveBytes: 0, totalIntermediateBytes: 0, steps: 0, copies: 0) }
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        let (plan, _) = try Engine.shared.plan(pending, policy: chosen)
        try MemoryLimit.check(plan)
        let (results, statistics) = try Executor(backends: Engine.shared.backends).run(plan)
        for (node, value) in zip(pending, results) { node.store(value) }
        return statistics
    }
}
