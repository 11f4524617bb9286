import Foundation

/// How the importer turns one ONNX operator into engine ops: a function of the node's context
/// returning its outputs in order, and the operator-set versions it implements.
struct ONNXOperator: Sendable {
    /// The oldest version of the operator's set whose semantics the function implements.
    let sinceVersion: Int
    let lower: @Sendable (ONNXNodeContext) throws(ModelError) -> [ONNXValue]

    init(since version: Int = 1, lower: @escaping @Sendable (ONNXNodeContext) throws(ModelError) -> [ONNXValue]) {
        self.sinceVersion = version
        self.lower = lower
    }
}

/// An ONNX model's main graph, checked once when the model loads and run for each set of inputs.
///
/// Loading reads the initializers (large ones stay in the mapped file), inlines the model's local
/// functions, orders the nodes, and checks that every node's operator is implemented, throwing one
/// ``ModelError`` that lists every node that is not. Running walks the nodes once: values known on
/// the host (shapes and what is computed from them) are folded there, everything else becomes a
/// lazy ``Tensor``, so the result is one engine graph the planner places as a whole.
final class ONNXGraph: Sendable {
    /// The nodes in an order where each one's inputs come before it.
    let nodes: [ONNXNodeProto]
    /// The version of each imported operator set, by domain (`""` for ONNX's default domain).
    let opsets: [String: Int]
    /// The inputs the caller gives (graph inputs that are not initializers).
    let inputs: [ONNXValueInfo]
    let outputs: [ONNXValueInfo]
    /// The initializers (and their replacements: a graph input with an initializer of the same
    /// name is a constant here).
    let initializers: [String: ONNXValue]
    /// The declared types of intermediate values, by name.
    let valueInfo: [String: ONNXValueInfo]
    /// Keeps the model's file (and external-data files) mapped as long as the graph lives.
    let source: ONNXDataSource
    /// `Conv` nodes whose `BatchNormalization` is folded into their weights, by the position of
    /// the normalization (the convolution is lowered at the normalization's turn), and back.
    private let foldedConvolutions: [Int: Int]
    private let deferredConvolutions: Set<Int>
    /// `Relu` and `Clip` nodes fused into the `Conv` whose result they alone read, by the
    /// activation's position, with the convolution's (``ONNXActivationFusion``).
    private let fusedActivations: [Int: Int]
    /// `Add` nodes fused into the `MatMul` whose result they alone read, by the addition's
    /// position (``ONNXBiasFusion``).
    private let fusedBiases: [Int: ONNXBiasFusion.Pair]
    /// `Add` and `Sum` nodes fused into the `Conv` whose result they alone read, by the sum's
    /// position (``ONNXResidualFusion``).
    private let fusedResiduals: [Int: ONNXResidualFusion.Pair]
    /// Activations (`Relu`, `Gelu`, the last `Mul` of a written-out GELU) fused into the
    /// projection whose result they alone read, by the activation's position
    /// (``ONNXLinearActivationFusion``), with the position of the projection's `MatMul`.
    private let fusedLinearActivations: [Int: Int]

    init(model: ONNXModelProto, source: ONNXDataSource) throws(ModelError) {
        self.source = source
        var opsets: [String: Int] = [:]
        for set in model.opsetImports {
            let domain = set.domain == "ai.onnx" ? "" : set.domain
            opsets[domain] = Int(clamping: set.version)
        }
        if opsets[""] == nil, model.irVersion < 3 { opsets[""] = 1 }
        self.opsets = opsets
        let graph = model.graph
        var initializers: [String: ONNXValue] = [:]
        for tensor in graph.initializers {
            do { initializers[tensor.name] = try tensor.value(in: source) } catch {
                throw ModelError(.invalidModel, "initializer '\(tensor.name)': \(error.message)")
            }
        }
        self.initializers = initializers
        inputs = graph.inputs.filter { initializers[$0.name] == nil }
        for value in inputs + graph.outputs {
            if case .other(let kind) = value.type {
                throw ModelError(
                    .unsupportedType, "graph value '\(value.name)' has the \(kind) type, which the engine cannot hold")
            }
            if case .tensor(let type, _) = value.type, type.engineType == nil {
                throw ModelError(
                    .unsupportedType, "graph value '\(value.name)' holds \(type), which the engine cannot hold")
            }
        }
        outputs = graph.outputs
        var valueInfo: [String: ONNXValueInfo] = [:]
        for info in graph.valueInfo { valueInfo[info.name] = info }
        self.valueInfo = valueInfo
        let inlined = try ONNXFunctionInliner(functions: model.functions).inline(graph.nodes)
        let available = Set(initializers.keys).union(inputs.map(\.name))
        let sorted = try Self.sorted(inlined, available: available)
        nodes = sorted
        try Self.checkSupport(nodes, opsets: opsets, functionOpsets: model.functions.flatMap(\.opsetImports))
        let folds = ONNXBatchNormFolding.pairs(
            nodes, initializers: Set(initializers.keys), graphOutputs: Set(graph.outputs.map(\.name)))
        foldedConvolutions = Dictionary(uniqueKeysWithValues: folds.map { ($0.value, $0.key) })
        deferredConvolutions = Set(folds.keys)
        let graphOutputs = Set(graph.outputs.map(\.name))
        fusedBiases = ONNXBiasFusion.pairs(nodes, graphOutputs: graphOutputs)
        // The nodes whose result is a projection's (a fused `MatMul → Add`, by the addition's
        // position, or a `Gemm`), with the product's position: a sum takes a residual into them as
        // into a convolution, and an activation fuses into them.
        var projections = fusedBiases.mapValues(\.product)
        for (index, node) in sorted.enumerated() where node.opType == "Gemm" && node.domain.isEmpty {
            projections[index] = index
        }
        fusedResiduals = ONNXResidualFusion.pairs(
            nodes, graphOutputs: graphOutputs,
            foldedConvolutions: foldedConvolutions.merging(projections) { kept, _ in kept })
        // An activation after a fused sum bounds the convolution that sum became.
        let convolutionResults = foldedConvolutions.merging(
            fusedResiduals.filter { sorted[$0.value.convolution].opType == "Conv" }.mapValues(\.convolution)
        ) { kept, _ in kept }
        fusedActivations = ONNXActivationFusion.pairs(
            nodes, graphOutputs: graphOutputs, foldedConvolutions: convolutionResults)
        fusedLinearActivations = ONNXLinearActivationFusion.activations(
            nodes, graphOutputs: graphOutputs, projections: projections)
    }

    /// The nodes in dependency order (Kahn's algorithm; ONNX asks exporters for this order, not
    /// all of them keep it). A value no node or input defines, or a cycle, is an error.
    private static func sorted(_ nodes: [ONNXNodeProto], available: Set<String>) throws(ModelError) -> [ONNXNodeProto] {
        var producer: [String: Int] = [:]
        for (index, node) in nodes.enumerated() {
            for output in node.outputs where !output.isEmpty {
                guard producer[output] == nil, !available.contains(output) else {
                    throw ModelError(.invalidModel, "value '\(output)' is defined twice", node: label(node, index))
                }
                producer[output] = index
            }
        }
        var waiting = [Int](repeating: 0, count: nodes.count)
        var dependents = [[Int]](repeating: [], count: nodes.count)
        for (index, node) in nodes.enumerated() {
            for input in node.inputs where !input.isEmpty && !available.contains(input) {
                guard let source = producer[input] else {
                    throw ModelError(
                        .invalidModel, "input '\(input)' is not defined by any node, input or initializer",
                        node: label(node, index))
                }
                waiting[index] += 1
                dependents[source].append(index)
            }
        }
        var ready = (0..<nodes.count).filter { waiting[$0] == 0 }.reversed().map { $0 }
        var order: [ONNXNodeProto] = []
        order.reserveCapacity(nodes.count)
        while let next = ready.popLast() {
            order.append(nodes[next])
            for dependent in dependents[next].reversed() {
                waiting[dependent] -= 1
                if waiting[dependent] == 0 { ready.append(dependent) }
            }
        }
        guard order.count == nodes.count else { throw ModelError(.invalidModel, "the graph has a cycle") }
        return order
    }

    static func label(_ node: ONNXNodeProto, _ index: Int) -> String {
        node.name.isEmpty ? "\(node.opType) #\(index)" : "'\(node.name)' (\(node.opType))"
    }

    /// Throws one error listing every node whose operator (or operator version) is not implemented.
    private static func checkSupport(
        _ nodes: [ONNXNodeProto], opsets: [String: Int], functionOpsets: [ONNXOperatorSet]
    ) throws(ModelError) {
        var unsupported: [ModelError.UnsupportedNode] = []
        for node in nodes {
            let domain = node.domain == "ai.onnx" ? "" : node.domain
            let version =
                opsets[domain] ?? functionOpsets.first { $0.domain == domain }.map { Int(clamping: $0.version) } ?? 0
            let opType = domain.isEmpty ? node.opType : "\(domain).\(node.opType)"
            guard let known = ONNXOperators.lookup(domain: domain, opType: node.opType) else {
                let reason =
                    opsets[domain] == nil && !domain.isEmpty
                    ? "domain '\(domain)' is not imported or not implemented" : "not implemented"
                unsupported.append(.init(name: node.name, opType: opType, opsetVersion: version, reason: reason))
                continue
            }
            if version < known.sinceVersion {
                unsupported.append(
                    .init(
                        name: node.name, opType: opType, opsetVersion: version,
                        reason: "implemented from opset \(known.sinceVersion)"))
            }
        }
        guard unsupported.isEmpty else {
            let kinds = Set(unsupported.map(\.opType)).sorted().joined(separator: ", ")
            throw ModelError(
                .unsupportedOperators,
                "\(unsupported.count) node\(unsupported.count == 1 ? "" : "s") use operators the engine does not implement (\(kinds))",
                unsupportedNodes: unsupported)
        }
    }

    /// Runs the graph on inputs (by name) and returns every graph output; with a trace, records
    /// which ONNX node each engine node comes from.
    func run(
        _ given: [String: ONNXValue], trace: ONNXTrace? = nil, state: ONNXRunState = ONNXRunState()
    ) throws(ModelError) -> [String: ONNXValue] {
        var values = initializers
        for input in inputs {
            guard let value = given[input.name] else {
                throw ModelError(.invalidInput, "input '\(input.name)' is not given")
            }
            values[input.name] = value
        }
        if let trace { for value in values.values { trace.mark(value, origin: -1) } }
        for (index, node) in nodes.enumerated() where !deferredConvolutions.contains(index) {
            let context = try self.context(index, values, state, skippingFirst: foldedConvolutions[index] != nil)
            let domain = node.domain == "ai.onnx" ? "" : node.domain
            guard let known = ONNXOperators.lookup(domain: domain, opType: node.opType) else {
                throw ModelError(
                    .unsupportedOperators, "\(node.opType) is not implemented", node: Self.label(node, index))
            }
            let results: [ONNXValue]
            if let convolution = foldedConvolutions[index] {
                results = try ONNXBatchNormFolding.lower(try self.context(convolution, values, state), context)
                trace?.folded.insert(index)
                if let trace { for result in results { trace.mark(result, origin: convolution) } }
            } else if let convolution = fusedActivations[index], let fused = try ONNXActivationFusion.lower(context) {
                // The activation is the convolution's epilogue: its engine operation is the convolution's.
                results = fused
                if let trace { for result in results { trace.mark(result, origin: convolution) } }
            } else if let pair = fusedResiduals[index], let fused = try ONNXResidualFusion.lower(context, pair) {
                // The sum is the convolution's epilogue: its engine operation is the Conv's.
                results = fused
                if let trace { for result in results { trace.mark(result, origin: pair.convolution) } }
            } else if let pair = fusedBiases[index], let fused = try ONNXBiasFusion.lower(context, pair) {
                // The addition is the product's epilogue: its engine operation is the MatMul's.
                results = fused
                if let trace { for result in results { trace.mark(result, origin: pair.product) } }
            } else if let product = fusedLinearActivations[index] {
                // The activation is the projection's epilogue, when its importer recorded one: its
                // engine operation is then the MatMul's.
                let lowered = try known.lower(context)
                let fused = ONNXLinearActivationFusion.fused(lowered)
                results = fused ?? lowered
                if let trace, let fused { for result in fused { trace.mark(result, origin: product) } }
            } else {
                results = try known.lower(context)
            }
            for (name, result) in zip(node.outputs, results) where !name.isEmpty { values[name] = result }
            if let trace {
                for result in results { trace.mark(result, origin: index) }
                if results.allSatisfy({ if case .constant = $0 { true } else { false } }) { trace.folded.insert(index) }
            }
        }
        var results: [String: ONNXValue] = [:]
        for output in outputs {
            guard let value = values[output.name] else {
                throw ModelError(.invalidModel, "graph output '\(output.name)' is not produced by any node")
            }
            results[output.name] = value
        }
        return results
    }
}

extension ONNXGraph {
    /// What node `index`'s importer sees: its attributes and its operands from `values`.
    /// With `skippingFirst`, operand 0 is left out (a folded normalization's, never computed).
    private func context(
        _ index: Int, _ values: [String: ONNXValue], _ state: ONNXRunState, skippingFirst: Bool = false
    ) throws(ModelError) -> ONNXNodeContext {
        let node = nodes[index]
        var operands: [ONNXValue?] = []
        operands.reserveCapacity(node.inputs.count)
        for (position, name) in node.inputs.enumerated() {
            if name.isEmpty || (skippingFirst && position == 0) {
                operands.append(nil)
                continue
            }
            guard let value = values[name] else {
                throw ModelError(
                    .invalidModel, "input '\(name)' is an output no earlier node produced", node: Self.label(node, index))
            }
            operands.append(value)
        }
        let domain = node.domain == "ai.onnx" ? "" : node.domain
        return ONNXNodeContext(node: node, opset: opsets[domain] ?? 0, inputs: operands, source: source, state: state)
    }
}

/// Which ONNX node each engine node was recorded for, gathered while a graph runs.
final class ONNXTrace {
    /// The ONNX node index of each engine node (-1 for inputs and initializers).
    private(set) var origins: [ObjectIdentifier: Int] = [:]
    /// The ONNX nodes whose every output was computed on the host.
    var folded: Set<Int> = []

    /// Marks the engine nodes behind `value` not yet marked, walking back to marked ones.
    func mark(_ value: ONNXValue, origin: Int) {
        guard case .tensor(let tensor, _) = value, let node = tensor.node else { return }
        var pending = [node]
        while let next = pending.popLast() {
            let key = ObjectIdentifier(next)
            guard origins[key] == nil else { continue }
            origins[key] = origin
            pending.append(contentsOf: next.inputs)
        }
    }
}

/// What a run of the graph learned beyond its outputs.
final class ONNXRunState: @unchecked Sendable {
    /// Whether some node needed a tensor's values while the graph was being built (sizes computed
    /// from data), which makes the built graph valid for those data only.
    var readInputData = false
    /// The graph inputs that hold a state's growing cache: a `Concat` that extends one of them
    /// (its first input) appends in place (``Tensor/appending(_:alongAxis:file:line:)``).
    var growableInputs: Set<String> = []
}
