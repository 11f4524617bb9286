/// Composite ops on a backend without a kernel for them: the op's decomposition (`Decompositions`)
/// built on the operands, planned on that backend alone (fused like any graph) and run there.
/// A backend that registers only primitives runs every composite op this way.
extension Backend {
    /// Supported when every op of the decomposition is; the parts are what the planner costs.
    func decompositionCapability(_ op: Op, _ decomposition: Decomposition, inputs: [TensorSignature]) -> Capability {
        let placeholders = inputs.map { Node(op: .constant, inputs: [], signature: $0, location: nil) }
        let result = decomposition.build(op, placeholders.map(Tensor.init(node:)))
        guard let root = result.node else {
            return .unsupported(reason: "its decomposition does not build: \(String(describing: result.error))")
        }
        var parts: [LoweredPart] = []
        var seen = NodeSet()
        for placeholder in placeholders { seen.insert(placeholder.id) }
        // Operands before users, without recursion (decompositions are small, but compose).
        var stack: [(node: Node, expanded: Bool)] = [(root, false)]
        while let (node, expanded) = stack.popLast() {
            if expanded {
                let inputs = node.inputs.map { CostOperand(signature: $0.signature, layout: $0.layout) }
                switch capability(for: .op(node.op), inputs: inputs.map(\.signature), output: node.signature) {
                case .unsupported(let reason):
                    return .unsupported(reason: "\(node.op.name) in its decomposition: \(reason)")
                case .lowered(let inner):
                    parts += inner
                case .kernel:
                    parts.append(LoweredPart(op: node.op, inputs: inputs, output: node.signature))
                }
                continue
            }
            // Sources (the operands, constants such as an epsilon) are not computed.
            guard !seen.contains(node.id), node.storedResult == nil else { continue }
            seen.insert(node.id)
            stack.append((node, true))
            for input in node.inputs.reversed() where !seen.contains(input.id) { stack.append((input, false)) }
        }
        return .lowered(parts)
    }

    /// Runs the decomposition on this backend, the operands as they are (in its memory space),
    /// the result left there.
    func executeDecomposition(_ op: Op, _ decomposition: Decomposition, _ inputs: [Value]) throws(TensorError) -> Value
    {
        let sources = inputs.map { value in
            Tensor(node: Node(op: .constant, inputs: [], signature: value.signature, location: nil, data: value))
        }
        let result = decomposition.build(op, sources)
        guard let node = result.node else {
            throw result.error ?? TensorError(.backendFailure, op: op.name, message: "its decomposition does not build")
        }
        let planner = Planner(backends: [self], profiles: [:], policy: .only(id))
        let (plan, _) = try planner.plan(targets: [node], cache: LoweringPlans.cache)
        let values = try Executor(backends: [self]).runInPlace(plan)
        guard let value = values.first else {
            throw TensorError(.backendFailure, op: op.name, message: "its decomposition produced no value")
        }
        return value
    }
}

/// The plans of decompositions run so far, by structure: a composite op run again on the same
/// shapes plans nothing.
enum LoweringPlans {
    static let cache = PlanCache(capacity: 256)
}
