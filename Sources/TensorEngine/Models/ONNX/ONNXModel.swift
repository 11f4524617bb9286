import Foundation

/// A model read from an ONNX file, run by the engine on any backend; ``Model`` wraps it with Core
/// ML's API.
///
/// ```swift
/// let model = try ONNXModel(contentsOf: URL(fileURLWithPath: "model.onnx"))
/// let outputs = try await model.prediction(from: ["input_ids": ids, "attention_mask": mask])
/// let hidden = try await outputs["last_hidden_state"]!.shapedArray(of: Float.self)
/// ```
///
/// Loading maps the file (weights stay in it, wrapped without copying), checks every node's
/// operator and throws one ``ModelError`` listing all unsupported nodes. Each prediction builds
/// the lazy graph for the given input shapes (symbolic batch and sequence sizes are fixed by the
/// inputs) and evaluates every output in one plan.
public final class ONNXModel: ModelImplementation {
    /// The file the model was read from.
    public let url: URL
    /// The inputs the model reads, in the model's order.
    public let inputDescriptions: [FeatureDescription]
    /// The outputs the model gives, in the model's order.
    public let outputDescriptions: [FeatureDescription]
    /// The producer the file names (`pytorch 2.3.0`).
    public let producer: String
    /// The version of ONNX's default operator set the model imports.
    public let opsetVersion: Int
    /// The number of nodes in the main graph (after inlining local functions).
    public var nodeCount: Int { graph.nodes.count }

    /// The inputs, outputs and state, as ``Model`` shows them: inputs fed by state outputs are
    /// state, not inputs.
    public let modelDescription: ModelDescription
    /// The state pairs: each output that feeds an input at the next stateful prediction.
    public let statePairs: [StatePair]
    /// Whether predictions keep a prepared plan per input-shape signature.
    let keepsPreparedPlans: Bool
    /// How many evaluations the model has run (one per prediction, one per stacked batch).
    public var evaluationCount: Int { evaluations.withLock { $0 } }
    private let evaluations = Guarded<Int>(0)

    let graph: ONNXGraph

    /// Reads and checks an ONNX model.
    ///
    /// - Parameter configuration: its ``ModelConfiguration/statePairs`` add state pairs to the
    ///   ones found by name; its ``ModelConfiguration/optimizationHints`` say whether prepared
    ///   plans are kept; its ``ModelConfiguration/functionName`` must be `nil` or `main`.
    /// - Throws: ``FileFormatError`` for a file that is not valid ONNX (naming the message and
    ///   field), ``ModelError`` for a model the engine cannot run (every unsupported node listed).
    public init(contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()) throws {
        if let function = configuration.functionName, function != "main" {
            throw ModelError(.invalidInput, "an ONNX model has one function, 'main', not '\(function)'")
        }
        self.url = url
        let file = try MappedFile(url: url, format: "onnx")
        let proto: ONNXModelProto
        do { proto = try ONNXModelProto.decode(file.bytes) } catch { throw error.at(url.path) }
        let source = ONNXDataSource(file: file, directory: url.deletingLastPathComponent())
        graph = try ONNXGraph(model: proto, source: source)
        producer = [proto.producerName, proto.producerVersion].filter { !$0.isEmpty }.joined(separator: " ")
        opsetVersion = graph.opsets[""] ?? 0
        inputDescriptions = graph.inputs.map(Self.featureDescription)
        outputDescriptions = graph.outputs.map(Self.featureDescription)
        statePairs = try StatePair.pairs(
            inputs: inputDescriptions, outputs: outputDescriptions, declared: configuration.statePairs)
        keepsPreparedPlans = configuration.optimizationHints.reshapeFrequency == .infrequent
        var metadata: [ModelMetadataKey: String] = [:]
        if !producer.isEmpty { metadata[.author] = producer }
        if !proto.docString.isEmpty { metadata[.description] = proto.docString }
        if proto.modelVersion != 0 { metadata[.versionString] = "\(proto.modelVersion)" }
        let stateInputs = Set(statePairs.map(\.input))
        let stateOutputs = Set(statePairs.map(\.output))
        modelDescription = ModelDescription(
            inputs: inputDescriptions.filter { !stateInputs.contains($0.name) },
            outputs: outputDescriptions.filter { !stateOutputs.contains($0.name) },
            states: inputDescriptions.filter { stateInputs.contains($0.name) }.map(\.asState),
            metadata: metadata, creatorDefined: proto.metadata)
    }

    /// Reads an ONNX model (Core ML's `MLModel.load(contentsOf:)` form).
    public static func load(
        contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()
    ) async throws -> ONNXModel {
        try ONNXModel(contentsOf: url, configuration: configuration)
    }

    private static func featureDescription(_ info: ONNXValueInfo) -> FeatureDescription {
        switch info.type {
        case .tensor(let type, let shape):
            let dims = shape?.map { dimension -> FeatureDimension in
                switch dimension {
                case .value(let size): .fixed(Int(clamping: size))
                case .symbol(let name): .symbolic(name)
                case .unknown: .unknown
                }
            }
            guard let engineType = type.engineType else {
                return FeatureDescription(name: info.name, multiArrayConstraint: nil, otherType: "tensor of \(type)")
            }
            let constraint = MultiArrayConstraint(shape: dims, modelElementType: type.description, dataType: engineType)
            return FeatureDescription(name: info.name, multiArrayConstraint: constraint, otherType: nil)
        case .other(let name): return FeatureDescription(name: info.name, multiArrayConstraint: nil, otherType: name)
        case .unknown: return FeatureDescription(name: info.name, multiArrayConstraint: nil, otherType: nil)
        }
    }

    /// The inputs' descriptions by name.
    public var inputDescriptionsByName: [String: FeatureDescription] {
        Dictionary(inputDescriptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The outputs' descriptions by name.
    public var outputDescriptionsByName: [String: FeatureDescription] {
        Dictionary(outputDescriptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The names of the model's inputs (graph inputs that are not initializers).
    public var inputFeatureNames: Set<String> { Set(inputDescriptions.map(\.name)) }
    /// The names of the model's outputs.
    public var outputFeatureNames: Set<String> { Set(outputDescriptions.map(\.name)) }

    /// The model's outputs for `inputs` as lazy tensors: nothing runs until they are materialized.
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for a missing input or one of the wrong type or
    ///   shape; ``ModelError/Kind/invalidNode`` when a node cannot run on the shapes given.
    public func outputs(for inputs: [String: Tensor]) throws(ModelError) -> [String: Tensor] {
        try outputs(for: inputs, trace: nil)
    }

    func outputs(
        for inputs: [String: Tensor], trace: ONNXTrace?, state: ONNXRunState = ONNXRunState()
    ) throws(ModelError) -> [String: Tensor] {
        let values = try graph.run(try bind(inputs), trace: trace, state: state)
        var tensors: [String: Tensor] = [:]
        for (name, value) in values {
            switch value {
            case .tensor(let tensor, _): tensors[name] = tensor
            case .constant(let constant):
                do { tensors[name] = try constant.tensor() } catch {
                    throw ModelError(error.kind, "output '\(name)': \(error.message)")
                }
            }
        }
        return tensors
    }

    /// The compute plan of a prediction on `inputs`, by the model's nodes, without running it.
    public func computePlan(for inputs: [String: Tensor], policy: ComputePolicy? = nil) throws -> ModelComputePlan {
        let trace = ONNXTrace()
        let outputs = try outputs(for: inputs, trace: trace)
        let names = outputDescriptions.map(\.name)
        let plan = try ComputePlan(for: names.compactMap { outputs[$0] }, policy: policy, prepared: true)
        return ModelComputePlan(graph: graph, trace: trace, enginePlan: plan, inputs: inputs)
    }

    /// The compute plan for inputs of the given shapes (zeros of each input's type), for example
    /// `["input_ids": [1, 128], "attention_mask": [1, 128]]`; an input not named takes its declared
    /// shape, which must then be fixed.
    public func computePlan(inputShapes: [String: [Int]], policy: ComputePolicy? = nil) throws -> ModelComputePlan {
        try computePlan(for: try zeroInputs(inputShapes, openSize: nil), policy: policy)
    }

    /// The compute plan with open sizes not given in `inputShapes` taken as 1, except a state
    /// input's own open sizes, taken as 0 (an empty cache).
    func computePlan(openSizesAsOne inputShapes: [String: [Int]], policy: ComputePolicy) throws -> ModelComputePlan {
        try computePlan(for: try zeroInputs(inputShapes, openSize: 1), policy: policy)
    }

    /// Zeros of each input's type and shape: given, declared, or with open sizes `openSize`.
    private func zeroInputs(_ inputShapes: [String: [Int]], openSize: Int?) throws(ModelError) -> [String: Tensor] {
        let stateInputs = Set(statePairs.map(\.input))
        var symbols: [String: Int] = [:]
        for description in inputDescriptions where !stateInputs.contains(description.name) {
            guard let given = inputShapes[description.name], let declared = description.multiArrayConstraint?.shape,
                declared.count == given.count
            else { continue }
            for (dimension, size) in zip(declared, given) { if case .symbolic(let name) = dimension { symbols[name] = size } }
        }
        var regularSymbols: Set<String> = []
        for description in inputDescriptions where !stateInputs.contains(description.name) {
            for case .symbolic(let name) in description.multiArrayConstraint?.shape ?? [] { regularSymbols.insert(name) }
        }
        var inputs: [String: Tensor] = [:]
        for description in inputDescriptions {
            guard let constraint = description.multiArrayConstraint else {
                throw ModelError(.unsupportedType, "input '\(description.name)' is not a tensor (\(description))")
            }
            var shape = inputShapes[description.name]
            if shape == nil, let declared = constraint.shape {
                let isState = stateInputs.contains(description.name)
                shape = declared.compactMap { dimension -> Int? in
                    switch dimension {
                    case .fixed(let size): size
                    case .symbolic(let name):
                        symbols[name] ?? openSize.map { isState && !regularSymbols.contains(name) ? 0 : $0 }
                    case .unknown: openSize.map { isState ? 0 : $0 }
                    }
                }
                guard shape?.count == declared.count else {
                    throw ModelError(
                        .invalidInput,
                        "input '\(description.name)' (\(description)) needs a shape: its sizes are not fixed")
                }
            }
            guard let shape else { throw ModelError(.invalidInput, "input '\(description.name)' needs a shape") }
            inputs[description.name] = Tensor(zerosOf: constraint.dataType, shape: shape)
        }
        return inputs
    }

    /// Predicts every output for `inputs`, evaluated together in one plan (state outputs included:
    /// this form binds no state).
    ///
    /// The first prediction at given input shapes (and policy) builds the graph, plans it and keeps
    /// the plan; later ones at the same shapes run that plan on the new data directly.
    public func prediction(from inputs: [String: Tensor], policy: ComputePolicy? = nil) async throws -> [String: Tensor]
    {
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        return try predict(inputs, policy: chosen)
    }

    /// ``prediction(from:policy:)`` on the calling thread.
    ///
    /// With `statePairs`, the state inputs' caches grow in place (a `Concat` extending one
    /// appends to it) and the state outputs are returned where the plan left them: in their
    /// growable buffers, on the device that computed them, for the ``State`` to keep.
    func predict(
        _ inputs: [String: Tensor], policy chosen: ComputePolicy, statePairs pairs: [StatePair] = []
    ) throws -> [String: Tensor] {
        if let (name, failed) = inputs.first(where: { $0.value.error != nil }), let error = failed.error {
            throw ModelError(.invalidInput, "input '\(name)' carries an error: \(error)")
        }
        // Inputs that are themselves pending graphs run first, so that each is a source of the plan.
        try Tensor.evaluateNow(inputs.values.filter { $0.node?.storedResult == nil })
        evaluations.withLock { $0 += 1 }
        let key = PreparedPredictions.Key(inputs: inputs, policy: chosen, stateful: !pairs.isEmpty)
        if let prepared = preparedPredictions[key] { return try prepared.run(inputs) }
        let state = ONNXRunState()
        state.growableInputs = Set(pairs.map(\.input))
        var outputs = try outputs(for: inputs, trace: nil, state: state)
        let names = outputDescriptions.map(\.name).filter { outputs[$0]?.node?.storedResult == nil }
        let targets = names.compactMap { outputs[$0]?.node }
        guard !targets.isEmpty else { return outputs }
        let kept = Set(pairs.map(\.output))
        let inPlace = names.map(kept.contains)
        let (plan, _, results) = try Tensor.runKeepingPlan(targets, policy: chosen, inPlace: inPlace)
        let computed = outputs
        for (index, name) in names.enumerated() where inPlace[index] {
            outputs[name] = Tensor.constant(value: results[index], op: "state")
        }
        if !state.readInputData, keepsPreparedPlans {
            preparedPredictions.keep(
                plan, for: key, inputs: inputs, targetNames: names, outputs: computed, inPlace: inPlace)
        }
        return outputs
    }

    private let preparedPredictions = PreparedPredictions()

    /// Checks each input against its description and converts the exact conversions.
    private func bind(_ inputs: [String: Tensor]) throws(ModelError) -> [String: ONNXValue] {
        var symbols: [String: (Int, String)] = [:]
        var bound: [String: ONNXValue] = [:]
        for (info, description) in zip(graph.inputs, inputDescriptions) {
            guard let given = inputs[info.name] else {
                throw ModelError(.invalidInput, "input '\(info.name)' (\(description)) is not given")
            }
            if let failure = given.error {
                throw ModelError(.invalidInput, "input '\(info.name)' carries an error: \(failure)")
            }
            guard case .tensor(let type, _) = info.type, let constraint = description.multiArrayConstraint else {
                throw ModelError(
                    .unsupportedType, "input '\(info.name)' is of a type the engine cannot take (\(description))")
            }
            let mismatch =
                "input '\(info.name)' expects \(description.multiArrayConstraint?.description ?? ""), given \(given.dtype) \(describe(given.shape))"
            guard let tensor = MultiArrayConstraint.exactly(given, as: constraint.dataType) else {
                throw ModelError(.invalidInput, mismatch)
            }
            if let shape = constraint.shape {
                guard shape.count == given.rank else { throw ModelError(.invalidInput, mismatch) }
                for (dimension, size) in zip(shape, given.shape) {
                    switch dimension {
                    case .fixed(let expected) where expected != size: throw ModelError(.invalidInput, mismatch)
                    case .symbolic(let name):
                        if let (known, other) = symbols[name], known != size {
                            throw ModelError(.invalidInput, "\(mismatch): '\(name)' is \(known) in input '\(other)'")
                        }
                        symbols[name] = (size, info.name)
                    case .fixed, .unknown: break
                    }
                }
            }
            bound[info.name] = .tensor(tensor, type)
        }
        return bound
    }
}

extension Tensor {
    /// A constant of zeros of an engine scalar type (a real buffer, as a model input is, not a
    /// broadcast view), or a tensor carrying the error when the shape cannot exist.
    package init(zerosOf type: ScalarType, shape: [Int]) {
        if let failure = Tensor.sizeFailure(shape, type, op: "zeros", at: nil) {
            self = failure
            return
        }
        let count = shape.reduce(1, *)
        switch type {
        case .float32: self = Tensor.constant([Float](repeating: 0, count: count), shape: shape, op: "zeros", at: nil)
        case .float16: self = Tensor.constant([Float16](repeating: 0, count: count), shape: shape, op: "zeros", at: nil)
        case .int32: self = Tensor.constant([Int32](repeating: 0, count: count), shape: shape, op: "zeros", at: nil)
        case .bool: self = Tensor.constant([Bool](repeating: false, count: count), shape: shape, op: "zeros", at: nil)
        case .int64: self = Tensor.constant([Int64](repeating: 0, count: count), shape: shape, op: "zeros", at: nil)
        case .float64: self = Tensor.constant([Double](repeating: 0, count: count), shape: shape, op: "zeros", at: nil)
        }
    }
}
