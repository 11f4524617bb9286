import Foundation

/// What a ``Model`` runs: an ONNX graph (``ONNXModel``), a sentence embedder
/// (``SentenceEmbedder``), or a model of your own.
///
/// Implementations do their work synchronously on the calling thread; ``Model``'s `async`
/// methods call them off Swift's cooperative pool.
public protocol ModelImplementation: Sendable {
    /// The model's inputs, outputs and state.
    var modelDescription: ModelDescription { get }
    /// Predicts the outputs for one input under `policy`.
    func prediction(from input: any FeatureProvider, policy: ComputePolicy) throws -> any FeatureProvider
    /// Predicts the outputs for several inputs, in order; an implementation may batch them.
    func predictions(from inputs: [any FeatureProvider], policy: ComputePolicy) throws -> [any FeatureProvider]
    /// Predicts the outputs for one input, reading and updating `state`.
    func prediction(from input: any FeatureProvider, using state: State, policy: ComputePolicy) throws
        -> any FeatureProvider
    /// The state a stateful model starts from.
    func makeState() -> State
}

extension ModelImplementation {
    /// One ``prediction(from:policy:)`` after another.
    public func predictions(from inputs: [any FeatureProvider], policy: ComputePolicy) throws -> [any FeatureProvider] {
        try inputs.map { try prediction(from: $0, policy: policy) }
    }

    /// Throws ``ModelError/Kind/invalidModel``: the model has no state.
    public func prediction(from input: any FeatureProvider, using state: State, policy: ComputePolicy) throws
        -> any FeatureProvider
    {
        guard modelDescription.stateDescriptions.isEmpty else {
            throw ModelError(.invalidModel, "the model declares state but does not implement stateful prediction")
        }
        throw ModelError(.invalidModel, "the model has no state: use prediction(from:)")
    }

    /// A state with no buffers.
    public func makeState() -> State { State(descriptions: modelDescription.stateDescriptions) }
}

/// A model loaded for prediction, like Core ML's `MLModel`.
///
/// ```swift
/// let config = ModelConfiguration()
/// config.computeUnits = .cpuOnly
/// let model = try await Model.load(contentsOf: URL(fileURLWithPath: "model.onnx"), configuration: config)
/// let input = try DictionaryFeatureProvider(dictionary: ["input_ids": FeatureValue(multiArray: ids)])
/// let output = try await model.prediction(from: input)
/// let logits = output.featureValue(for: "logits")?.multiArrayValue
/// ```
///
/// `Model.load(contentsOf:)` reads an ONNX file (`.onnx`), a model compiled by ``compileModel(at:)``,
/// or a sentence-embedding folder (sentence-transformers' layout). Predictions run under the
/// configuration's compute units; `async` ones run off Swift's cooperative pool, so awaiting a
/// prediction never blocks other tasks.
public final class Model: Sendable {
    /// What the model runs.
    public let implementation: any ModelImplementation
    /// The configuration the model was loaded with (a copy: later changes to the caller's object
    /// do not affect the model).
    public let configuration: ModelConfiguration
    /// The file or folder the model was loaded from, if any.
    public let url: URL?

    /// A model that runs `implementation`.
    public init(implementation: any ModelImplementation, configuration: ModelConfiguration = ModelConfiguration()) {
        self.implementation = implementation
        self.configuration = configuration.copy()
        url = nil
    }

    /// Loads a model synchronously (Core ML's `MLModel(contentsOf:configuration:)`).
    ///
    /// - Throws: ``ModelError`` for a model the engine cannot run (every unsupported node listed),
    ///   ``FileFormatError`` for a malformed file, ``ModelError/Kind/unsupportedType`` for a kind
    ///   of file the engine does not read.
    public init(contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()) throws {
        let copied = configuration.copy()
        implementation = try ModelLoader.implementation(at: url, configuration: copied)
        self.configuration = copied
        self.url = url
    }

    /// Loads a model, off the cooperative pool (Core ML's `MLModel.load(contentsOf:configuration:)`).
    public static func load(
        contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()
    ) async throws -> Model {
        let copied = configuration.copy()
        return try await Model.offPool { try Model(contentsOf: url, configuration: copied) }.value
    }

    /// The model's inputs, outputs, state and metadata.
    public var modelDescription: ModelDescription { implementation.modelDescription }

    /// The compute devices this process has (Core ML's `MLModel.availableComputeDevices`).
    public static var availableComputeDevices: [ComputeDevice] { ComputeDevice.allComputeDevices }

    // MARK: Predictions

    /// Predicts the outputs for one input, on the calling thread.
    public func prediction(from input: any FeatureProvider) throws -> any FeatureProvider {
        try prediction(from: input, options: PredictionOptions())
    }

    /// Predicts the outputs for one input with options, on the calling thread.
    public func prediction(from input: any FeatureProvider, options: PredictionOptions) throws -> any FeatureProvider {
        let policy = try policy(for: options)
        return try implementation.prediction(from: input, policy: policy)
    }

    /// Predicts the outputs for one input, off the cooperative pool.
    public func prediction(
        from input: any FeatureProvider, options: PredictionOptions = PredictionOptions()
    ) async throws -> any FeatureProvider {
        let policy = try policy(for: options)
        let implementation = implementation
        let features = snapshot(of: input)
        return try await Model.offPool { try implementation.prediction(from: features, policy: policy) }.value
    }

    /// Predicts the outputs for tensors (Core ML's `prediction(from: [String: MLTensor])`); the
    /// outputs are computed tensors.
    public func prediction(
        from inputs: [String: Tensor], options: PredictionOptions = PredictionOptions()
    ) async throws -> [String: Tensor] {
        let output = try await prediction(from: DictionaryFeatureProvider(tensors: inputs), options: options)
        return Model.tensors(of: output)
    }

    /// Predicts a batch, on the calling thread: inputs that fit are stacked into batched
    /// evaluations (see ``ONNXModel``), and the outputs split back, in order.
    public func predictions(from batch: any BatchProvider, options: PredictionOptions = PredictionOptions()) throws
        -> any BatchProvider
    {
        let policy = try policy(for: options)
        let inputs = (0..<batch.count).map(batch.features(at:))
        return ArrayBatchProvider(array: try implementation.predictions(from: inputs, policy: policy))
    }

    /// Predicts a batch, off the cooperative pool.
    public func predictions(from batch: any BatchProvider, options: PredictionOptions = PredictionOptions())
        async throws
        -> any BatchProvider
    {
        let policy = try policy(for: options)
        let inputs = (0..<batch.count).map { snapshot(of: batch.features(at: $0)) }
        let implementation = implementation
        let outputs = try await Model.offPool { try implementation.predictions(from: inputs, policy: policy) }
        return ArrayBatchProvider(array: outputs.value)
    }

    /// Predicts a batch (Core ML's older `predictions(fromBatch:)`).
    public func predictions(fromBatch batch: any BatchProvider) throws -> any BatchProvider {
        try predictions(from: batch, options: PredictionOptions())
    }

    /// Predicts several inputs, off the cooperative pool, batching those that fit.
    public func predictions(from inputs: [any FeatureProvider]) async throws -> [any FeatureProvider] {
        let output = try await predictions(from: ArrayBatchProvider(array: inputs), options: PredictionOptions())
        return (0..<output.count).map(output.features(at:))
    }

    // MARK: State

    /// A fresh state for a stateful model (a KV cache at length 0); each independent sequence needs
    /// its own.
    public func makeState() -> State { implementation.makeState() }

    /// A fresh state (Core ML's older name for ``makeState()``).
    public func newState() -> State { makeState() }

    /// Predicts one step of a stateful model on the calling thread, reading and updating `state`.
    public func prediction(
        from input: any FeatureProvider, using state: State, options: PredictionOptions = PredictionOptions()
    ) throws -> any FeatureProvider {
        let policy = try policy(for: options)
        return try implementation.prediction(from: input, using: state, policy: policy)
    }

    /// Predicts one step of a stateful model off the cooperative pool, reading and updating `state`.
    public func prediction(
        from input: any FeatureProvider, using state: State, options: PredictionOptions = PredictionOptions()
    ) async throws -> any FeatureProvider {
        let policy = try policy(for: options)
        let implementation = implementation
        let features = snapshot(of: input)
        return try await Model.offPool {
            try implementation.prediction(from: features, using: state, policy: policy)
        }.value
    }

    /// Predicts one step of a stateful model from tensors.
    public func prediction(
        from inputs: [String: Tensor], using state: State, options: PredictionOptions = PredictionOptions()
    ) async throws -> [String: Tensor] {
        let output = try await prediction(
            from: DictionaryFeatureProvider(tensors: inputs), using: state, options: options)
        return Model.tensors(of: output)
    }

    // MARK: Helpers

    /// The policy of a prediction: the options', else the configuration's; a configuration left
    /// at `.all` follows the task-local policy and `TENSORENGINE_POLICY`.
    func policy(for options: PredictionOptions) throws -> ComputePolicy {
        if let policy = options.computePolicy { return policy }
        if let policy = configuration.computePolicy { return policy }
        let units = configuration.computeUnits
        return units == .all ? try Engine.currentPolicy() : ComputePolicy(units)
    }

    /// The tensor outputs of a provider.
    static func tensors(of output: any FeatureProvider) -> [String: Tensor] {
        var tensors: [String: Tensor] = [:]
        for name in output.featureNames {
            if let tensor = output.featureValue(for: name)?.tensorValue { tensors[name] = tensor }
        }
        return tensors
    }

    /// The input features the model reads, read now on the caller's task (a provider need not be
    /// `Sendable`, and may compute a feature only when asked): each value is `Sendable`.
    func snapshot(of input: any FeatureProvider) -> DictionaryFeatureProvider {
        let names = modelDescription.inputDescriptions.map(\.name)
        var values: [String: FeatureValue] = [:]
        for name in names { if let value = input.featureValue(for: name) { values[name] = value } }
        return DictionaryFeatureProvider(values)
    }

    /// Runs `work` on a dispatch thread and resumes the caller with its result, so the cooperative
    /// pool's threads stay free while a model computes.
    static func offPool<R>(_ work: @escaping @Sendable () throws -> R) async throws -> Transferred<R> {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { Transferred(try work()) })
            }
        }
    }
}

/// A value handed from the thread that made it to the task that awaits it, and used only there:
/// the work that made it has finished, so nothing else touches it (a transfer, not sharing).
struct Transferred<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The error a model throws for input features it cannot use.
public struct ModelInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The feature at fault.
    public let featureName: String
    /// What is wrong with it.
    public let message: String

    /// Creates an error.
    public init(featureName: String, message: String) {
        self.featureName = featureName
        self.message = message
    }

    /// `feature 'text': message`.
    public var description: String { "feature '\(featureName)': \(message)" }
}
