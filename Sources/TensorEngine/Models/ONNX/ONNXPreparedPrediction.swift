/// A model's prediction prepared for one set of input shapes: the engine plan of its graph, run
/// again with new input data, so a repeated prediction neither rebuilds the graph nor plans it.
///
/// Preparing is the first prediction at those shapes: the importer walks the ONNX graph (folding
/// shape arithmetic), the planner places the result, and the plan is kept with the positions of
/// the input nodes in it. Later predictions put their inputs' values at those positions and run
/// the same steps. A graph whose folding read input *data* (a `Reshape` to sizes computed from an
/// input's values) is not kept: its plan would not hold for other data.
final class ONNXPreparedPrediction: Sendable {
    private let plan: Plan
    /// The plan's position of each input's node.
    private let inputPositions: [String: Int]
    /// The outputs, in the plan's target order; outputs folded on the host are kept as tensors.
    private let targetNames: [String]
    private let constantOutputs: [String: Tensor]
    /// By target: whether its value is returned where the plan leaves it (a state's cache).
    private let inPlace: [Bool]

    init(
        plan: Plan, inputs: [String: Tensor], targetNames: [String], constantOutputs: [String: Tensor],
        inPlace: [Bool]
    ) {
        self.plan = plan
        var positions: [String: Int] = [:]
        var index: [ObjectIdentifier: Int] = [:]
        for (position, node) in plan.nodes.enumerated() { index[ObjectIdentifier(node)] = position }
        for (name, tensor) in inputs {
            if let node = tensor.node, let position = index[ObjectIdentifier(node)] { positions[name] = position }
        }
        inputPositions = positions
        self.targetNames = targetNames
        self.constantOutputs = constantOutputs
        self.inPlace = inPlace
    }

    /// Runs the plan on new inputs of the prepared shapes (their tensors are evaluated first when
    /// they are themselves pending graphs).
    func run(_ inputs: [String: Tensor]) throws(TensorError) -> [String: Tensor] {
        var pending: [Tensor] = []
        for name in inputPositions.keys {
            guard let tensor = inputs[name] else { continue }
            if tensor.node?.storedResult == nil { pending.append(tensor) }
        }
        if !pending.isEmpty { try Tensor.evaluateNow(pending) }
        var bindings: [(position: Int, value: Value)] = []
        bindings.reserveCapacity(inputPositions.count)
        for (name, position) in inputPositions {
            guard let value = inputs[name]?.node?.storedResult else { continue }
            bindings.append((position, value))
        }
        let (results, _) = try Executor(backends: Engine.shared.backends).run(
            plan, bindings: bindings, inPlace: inPlace)
        var outputs = constantOutputs
        for (name, value) in zip(targetNames, results) {
            outputs[name] = Tensor.constant(value: value, op: "prediction")
        }
        return outputs
    }
}

/// A model's prepared predictions by the shapes and types of their inputs and their policy (an
/// ONNX model's and a Core ML program's alike), at most ``limit`` signatures.
final class PreparedPredictions: Sendable {
    /// The shapes and types of a prediction's inputs, its policy, and whether it binds a state
    /// (whose caches grow in place).
    struct Key: Hashable {
        let signatures: [String: TensorSignature]
        let policy: ComputePolicy
        let stateful: Bool

        init(inputs: [String: Tensor], policy: ComputePolicy, stateful: Bool = false) {
            signatures = inputs.mapValues(\.signature)
            self.policy = policy
            self.stateful = stateful
        }
    }

    /// How many input-shape signatures a model keeps prepared predictions for.
    static let limit = 16

    private let entries = Guarded<[Key: ONNXPreparedPrediction]>([:])

    /// The prediction prepared for `key`, if any.
    subscript(key: Key) -> ONNXPreparedPrediction? { entries.withLock { $0[key] } }

    /// Keeps the plan that computed `outputs` from `inputs` (the outputs it did not compute, known
    /// before it ran, are kept as they are).
    func keep(
        _ plan: Plan, for key: Key, inputs: [String: Tensor], targetNames: [String], outputs: [String: Tensor],
        inPlace: [Bool] = []
    ) {
        let constants = outputs.filter { !targetNames.contains($0.key) }
        let prepared = ONNXPreparedPrediction(
            plan: plan, inputs: inputs, targetNames: targetNames, constantOutputs: constants, inPlace: inPlace)
        entries.withLock { cache in
            if cache.count >= Self.limit { cache.removeAll() }
            cache[key] = prepared
        }
    }
}
