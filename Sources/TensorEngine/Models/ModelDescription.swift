/// A key of a model's metadata, like Core ML's `MLModelMetadataKey`.
public enum ModelMetadataKey: Sendable, Hashable, CaseIterable {
    /// Who made the model (ONNX: the producer).
    case author
    /// What the model does (ONNX: `doc_string`).
    case description
    /// The model's license.
    case license
    /// The model's version (ONNX: `model_version`).
    case versionString
    /// Every other key the file sets, as `[String: String]` (ONNX: `metadata_props`).
    case creatorDefinedKey
}

/// What a model reads, gives and keeps, like Core ML's `MLModelDescription`.
///
/// ```swift
/// let ids = model.modelDescription.inputDescriptionsByName["input_ids"]?.multiArrayConstraint
/// print(ids?.shape ?? [])   // [batch, sequence]
/// ```
public struct ModelDescription: Sendable, CustomStringConvertible {
    /// The inputs a prediction reads, in the model's order (a model's state inputs are not here).
    public let inputDescriptions: [FeatureDescription]
    /// The outputs a prediction gives, in the model's order (state outputs are not here).
    public let outputDescriptions: [FeatureDescription]
    /// The state a ``State`` carries from one prediction to the next, named by the input it feeds.
    public let stateDescriptions: [FeatureDescription]
    /// Text metadata: author, description, version; ``ModelMetadataKey/creatorDefinedKey`` is
    /// in ``creatorDefinedMetadata``.
    public let metadataStrings: [ModelMetadataKey: String]
    /// The file's other metadata.
    public let creatorDefinedMetadata: [String: String]

    /// A description of these features.
    public init(
        inputs: [FeatureDescription], outputs: [FeatureDescription], states: [FeatureDescription] = [],
        metadata: [ModelMetadataKey: String] = [:], creatorDefined: [String: String] = [:]
    ) {
        inputDescriptions = inputs
        outputDescriptions = outputs
        stateDescriptions = states
        metadataStrings = metadata
        creatorDefinedMetadata = creatorDefined
    }

    /// The inputs by name.
    public var inputDescriptionsByName: [String: FeatureDescription] { byName(inputDescriptions) }
    /// The outputs by name.
    public var outputDescriptionsByName: [String: FeatureDescription] { byName(outputDescriptions) }
    /// The state features by name.
    public var stateDescriptionsByName: [String: FeatureDescription] { byName(stateDescriptions) }

    /// The metadata as Core ML gives it: strings, and `[String: String]` under
    /// ``ModelMetadataKey/creatorDefinedKey``.
    public var metadata: [ModelMetadataKey: any Sendable] {
        var all: [ModelMetadataKey: any Sendable] = metadataStrings.mapValues { $0 }
        if !creatorDefinedMetadata.isEmpty { all[.creatorDefinedKey] = creatorDefinedMetadata }
        return all
    }

    /// The name of the output a classifier predicts (none for the engine's models).
    public var predictedFeatureName: String? { nil }
    /// The name of the output holding a classifier's probabilities (none for the engine's models).
    public var predictedProbabilitiesName: String? { nil }

    private func byName(_ descriptions: [FeatureDescription]) -> [String: FeatureDescription] {
        Dictionary(descriptions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// One line per feature: `input input_ids: int64 [batch, sequence]`.
    public var description: String {
        (inputDescriptions.map { "input \($0)" } + outputDescriptions.map { "output \($0)" }
            + stateDescriptions.map { "state \($0)" }).joined(separator: "\n")
    }
}
