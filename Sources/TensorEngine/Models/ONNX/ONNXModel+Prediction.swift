import Foundation

/// One output of a stateful ONNX model that feeds one of its inputs at the next prediction.
public struct StatePair: Sendable, Hashable, CustomStringConvertible {
    /// The output that gives the new state (`present.0.key`).
    public let output: String
    /// The input the state feeds (`past_key_values.0.key`); the state feature's name.
    public let input: String

    /// `present.0.key → past_key_values.0.key`.
    public var description: String { "\(output) → \(input)" }

    /// Hugging Face's `present.S` → `past_key_values.S` pairs found by name, and the `declared`
    /// ones (output → input).
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for a declared pair naming an output or input
    ///   the model does not have.
    static func pairs(
        inputs: [FeatureDescription], outputs: [FeatureDescription], declared: [String: String]
    ) throws(ModelError) -> [StatePair] {
        let outputNames = Set(outputs.map(\.name))
        let inputNames = Set(inputs.map(\.name))
        var pairs: [StatePair] = []
        for input in inputs where input.name.hasPrefix("past_key_values.") {
            let output = "present." + input.name.dropFirst("past_key_values.".count)
            if outputNames.contains(output), declared[output] == nil {
                pairs.append(StatePair(output: output, input: input.name))
            }
        }
        for (output, input) in declared.sorted(by: { $0.key < $1.key }) {
            guard outputNames.contains(output), inputNames.contains(input) else {
                throw ModelError(
                    .invalidInput,
                    "the state pair \(output) → \(input) names "
                        + (outputNames.contains(output) ? "an input" : "an output") + " the model does not have")
            }
            pairs.append(StatePair(output: output, input: input))
        }
        return pairs
    }
}

extension ONNXModel {
    /// Predicts from a feature provider; a stateful model starts from a fresh state.
    public func prediction(from input: any FeatureProvider, policy: ComputePolicy) throws -> any FeatureProvider {
        if !statePairs.isEmpty { return try prediction(from: input, using: makeState(), policy: policy) }
        return DictionaryFeatureProvider(tensors: try predict(try tensors(from: input), policy: policy))
    }

    /// Predicts one step, feeding each state input from `state` and storing the state outputs back.
    public func prediction(
        from input: any FeatureProvider, using state: State, policy: ComputePolicy
    ) throws -> any FeatureProvider {
        guard !statePairs.isEmpty else {
            throw ModelError(.invalidModel, "the model has no state: use prediction(from:)")
        }
        var inputs = try tensors(from: input)
        let sizes = symbolSizes(of: inputs)
        let descriptions = inputDescriptionsByName
        return try state.stepLock.withLock { _ throws -> any FeatureProvider in
            for pair in statePairs {
                guard let description = descriptions[pair.input] else { continue }
                inputs[pair.input] = state.held(pair.input) ?? State.initialValue(of: description, sizes: sizes)
            }
            var outputs = try predict(inputs, policy: policy, statePairs: statePairs)
            for pair in statePairs {
                if let tensor = outputs.removeValue(forKey: pair.output) { state.store(tensor, for: pair.input) }
            }
            return DictionaryFeatureProvider(tensors: outputs)
        }
    }

    /// A state with every state input not yet written (it starts empty along its open axis).
    public func makeState() -> State {
        var shared: Set<String> = []
        for description in modelDescription.inputDescriptions {
            for case .symbolic(let name) in description.multiArrayConstraint?.shape ?? [] { shared.insert(name) }
        }
        return State(descriptions: modelDescription.stateDescriptions, sharedSymbols: shared)
    }

    /// The size each symbolic dimension takes in the given inputs.
    func symbolSizes(of inputs: [String: Tensor]) -> [String: Int] {
        var sizes: [String: Int] = [:]
        for description in modelDescription.inputDescriptions {
            guard let shape = description.multiArrayConstraint?.shape, let tensor = inputs[description.name],
                tensor.rank == shape.count
            else { continue }
            for (dimension, size) in zip(shape, tensor.shape) {
                if case .symbolic(let name) = dimension { sizes[name] = size }
            }
        }
        return sizes
    }

    /// The tensors of a provider's input features, converted where the conversion is exact.
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` naming the feature, its expected type and shape
    ///   and what was given, for a missing feature or one that does not convert exactly.
    func tensors(from input: any FeatureProvider) throws(ModelError) -> [String: Tensor] {
        var tensors: [String: Tensor] = [:]
        for description in modelDescription.inputDescriptions {
            guard let value = input.featureValue(for: description.name) else {
                throw ModelError(.invalidInput, "input '\(description.name)' (\(description)) is not given")
            }
            tensors[description.name] = try description.tensor(of: value)
        }
        return tensors
    }
}
