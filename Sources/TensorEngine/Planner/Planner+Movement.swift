extension Planner {
    /// Bytes of consecutive memory from which a data-movement op counts as moving runs: one
    /// cache line.
    static let runBytes = 64

    /// Whether a data-movement op reads and writes every element in runs of at least
    /// ``runBytes`` consecutive bytes (head-splitting permutes, row gathers, concatenation of
    /// long rows): the profile's run-movement rate applies rather than the transpose-measured
    /// movement rate. Always `false` for other ops.
    static func movesRuns(_ candidate: Candidate, op: Op) -> Bool {
        guard op.kind.category == .dataMovement else { return false }
        let elementBytes = candidate.node.signature.scalarType.byteCount
        let run: Int? = switch op {
        case .contiguous:
            candidate.operands.first.flatMap { layout(of: $0) }.map(\.contiguousSuffix.elements)
        case .gather(let axis):
            candidate.operands.first.map { $0.signature.shape.dropFirst(axis + 1).reduce(1, *) }
        case .concat(let axis):
            candidate.node.signature.shape.dropFirst(axis + 1).reduce(1, *)
        case .pad:
            nil
        case .constant, .unary, .binary, .select, .cast, .reduce, .argReduce, .cumulativeSum, .topK, .matmul,
            .softmax, .logSoftmax, .layerNorm, .reshape, .permute, .broadcast, .slice:
            nil
        }
        guard let run else { return false }
        return run * elementBytes >= runBytes
    }

    /// The layout a node's value will have, from its stored value or the first computed node
    /// behind its chain of views, through those views; `nil` where a reshape would need a copy.
    static func layout(of node: Node) -> Layout? {
        var views: [Op] = []
        var base = node
        while base.storedResult == nil, base.op.kind.isView, let input = base.inputs.first {
            views.append(base.op)
            base = input
        }
        var layout = base.storedResult?.layout ?? Layout(contiguous: base.signature.shape)
        for view in views.reversed() {
            guard let viewed = layout.viewed(by: view) else { return nil }
            layout = viewed
        }
        return layout
    }
}
