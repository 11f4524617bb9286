import Foundation

/// A Core ML model (`.mlpackage`, or an `.mlmodel` file whose constants are all in it) holding an
/// ML Program, run by the engine on any backend; ``Model`` wraps it with Core ML's API.
///
/// ```swift
/// let model = try Model(contentsOf: URL(fileURLWithPath: "Classifier.mlpackage"))
/// let output = try model.prediction(from: DictionaryFeatureProvider(dictionary: ["image": image]))
/// ```
///
/// Loading decodes the specification, maps the weight file (weights are used in place), checks
/// every operation of the function (one ``ModelError`` lists every unsupported one) and
/// decompresses compressed weights once. Each prediction builds the lazy graph of the program for
/// the given inputs and evaluates every output in one plan; the plan is kept per input-shape
/// signature and policy, so later predictions at those shapes run it on the new data directly.
/// Stateful programs (iOS 18) read and write their state through ``State``.
public final class CoreMLModel: ModelImplementation {
    /// The package or model file the model was read from.
    public let url: URL
    /// The specification version (7: iOS 16, 8: iOS 17, 9: iOS 18).
    public let specificationVersion: Int
    /// The inputs, outputs, state and metadata, as Core ML describes them.
    public let modelDescription: ModelDescription
    /// The function that runs (`main`, or the configuration's ``ModelConfiguration/functionName``).
    public var functionName: String { program.functionName }
    /// The opset of the function's block (`CoreML7`).
    public var opset: String { program.opset }
    /// The number of operations in the function, constants included.
    public var operationCount: Int { program.operations.count }

    let program: MILProgram
    /// Whether predictions keep a prepared plan per input-shape signature.
    private let keepsPreparedPlans: Bool
    private let preparedPredictions = PreparedPredictions()

    /// Reads and checks a Core ML model.
    ///
    /// - Throws: ``FileFormatError`` for a malformed package or specification,
    ///   ``ModelError/Kind/unsupportedType`` for a model that is not an ML Program (a
    ///   neural-network model, a pipeline...), ``ModelError/Kind/unsupportedOperators`` listing
    ///   every operation the engine does not implement.
    public init(contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()) throws {
        self.url = url
        let package = try CoreMLPackage(url: url)
        let spec = package.spec
        guard spec.kind == .mlProgram, let programSpec = spec.program else {
            throw ModelError(
                .unsupportedType,
                "\(url.lastPathComponent) is \(spec.kind) (specification version \(spec.specificationVersion)); the "
                    + "engine runs ML Programs (specification 7 and later): convert the source model with "
                    + "coremltools' convert_to=\"mlprogram\"")
        }
        specificationVersion = Int(spec.specificationVersion)
        let description = spec.description
        let name =
            configuration.functionName
            ?? (description.defaultFunctionName.isEmpty ? "main" : description.defaultFunctionName)
        program = try MILProgram(program: programSpec, functionName: name, package: package)
        let features: (inputs: [CoreMLFeatureSpec], outputs: [CoreMLFeatureSpec], states: [CoreMLFeatureSpec])
        if let function = description.functions.first(where: { $0.name == name }) {
            features = (function.inputs, function.outputs, function.states)
        } else {
            features = (description.inputs, description.outputs, description.states)
        }
        keepsPreparedPlans = configuration.optimizationHints.reshapeFrequency == .infrequent
        let metadata = description.metadata
        var strings: [ModelMetadataKey: String] = [:]
        if !metadata.author.isEmpty { strings[.author] = metadata.author }
        if !metadata.shortDescription.isEmpty { strings[.description] = metadata.shortDescription }
        if !metadata.versionString.isEmpty { strings[.versionString] = metadata.versionString }
        if !metadata.license.isEmpty { strings[.license] = metadata.license }
        var programTypes: [String: MILValueType] = [:]
        for input in program.inputs { programTypes[input.name] = input.type }
        for operation in program.operations {
            for output in operation.outputs where program.outputNames.contains(output.name) {
                programTypes[output.name] = output.type
            }
        }
        let describe = { (feature: CoreMLFeatureSpec) in Self.featureDescription(feature, programTypes[feature.name]) }
        modelDescription = ModelDescription(
            inputs: features.inputs.map(describe), outputs: features.outputs.map(describe),
            states: features.states.map(describe), metadata: strings, creatorDefined: metadata.userDefined)
    }

    /// Reads a Core ML model (Core ML's `MLModel.load(contentsOf:)` form).
    public static func load(
        contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration()
    ) async throws -> CoreMLModel {
        try CoreMLModel(contentsOf: url, configuration: configuration)
    }

    /// A feature as ``Model`` describes it: a multi-array's element type and shape (open sizes
    /// where the model allows a range or a list of shapes), an image as the pixel tensor its
    /// program reads or gives (`float32 pixels [1, 3, H, W]`, in the model's channel order and
    /// range), or the kind of another feature.
    private static func featureDescription(_ feature: CoreMLFeatureSpec, _ programType: MILValueType?)
        -> FeatureDescription
    {
        let array: CoreMLArrayTypeSpec
        let isState: Bool
        switch feature.type {
        case .multiArray(let type): (array, isState) = (type, false)
        case .state(let type): (array, isState) = (type, true)
        case .image:
            guard let tensor = programType?.tensorType, let type = tensor.dataType.importedType?.engineType else {
                return FeatureDescription(name: feature.name, multiArrayConstraint: nil, otherType: "image")
            }
            let shape = tensor.dimensions.map { dimension -> FeatureDimension in
                if case .fixed(let size) = dimension { return .fixed(size) }
                return .unknown
            }
            let constraint = MultiArrayConstraint(
                shape: tensor.rank < 0 ? nil : shape, modelElementType: "\(type) pixels", dataType: type)
            return FeatureDescription(
                name: feature.name, type: .image, isOptional: feature.isOptional, multiArrayConstraint: constraint)
        case .int64, .double, .string, .dictionary, .sequence, .unknown:
            return FeatureDescription(name: feature.name, multiArrayConstraint: nil, otherType: "\(feature.type)")
        }
        let type: ScalarType
        switch array.dataType {
        case 65552: type = .float16
        case 131104, 131080: type = .int32
        default: type = .float32
        }
        let dimensions = array.shape.enumerated().map { axis, size -> FeatureDimension in
            if axis < array.shapeRanges.count, array.shapeRanges[axis].lower != array.shapeRanges[axis].upper {
                return .unknown
            }
            if array.enumeratedShapes.contains(where: { $0.count > axis && $0[axis] != size }) { return .unknown }
            return .fixed(Int(clamping: size))
        }
        let constraint = MultiArrayConstraint(
            shape: array.shape.isEmpty ? nil : dimensions, modelElementType: array.dataTypeName, dataType: type)
        return FeatureDescription(
            name: feature.name, type: isState ? .state : .multiArray, isOptional: feature.isOptional,
            multiArrayConstraint: constraint)
    }

    // MARK: Predictions

    /// Predicts from a feature provider; a stateful model starts from a fresh state.
    public func prediction(from input: any FeatureProvider, policy: ComputePolicy) throws -> any FeatureProvider {
        if !modelDescription.stateDescriptions.isEmpty {
            return try prediction(from: input, using: makeState(), policy: policy)
        }
        return DictionaryFeatureProvider(
            tensors: try predict(try tensors(from: input), states: [:], policy: policy).outputs)
    }

    /// Predicts one step, reading each state from `state` and storing what the program writes.
    public func prediction(
        from input: any FeatureProvider, using state: State, policy: ComputePolicy
    ) throws -> any FeatureProvider {
        guard !modelDescription.stateDescriptions.isEmpty else {
            throw ModelError(.invalidModel, "the model has no state: use prediction(from:)")
        }
        let inputs = try tensors(from: input)
        return try state.stepLock.withLock { _ throws -> any FeatureProvider in
            var states: [String: Tensor] = [:]
            for description in modelDescription.stateDescriptions {
                states[description.name] =
                    state.tensor(for: description.name) ?? State.initialValue(of: description, sizes: [:])
            }
            let (outputs, written) = try predict(inputs, states: states, policy: policy)
            for (name, tensor) in written { state.store(tensor, for: name) }
            return DictionaryFeatureProvider(tensors: outputs)
        }
    }

    /// The outputs for tensors (no state: a stateful model starts from zeros and its writes are
    /// dropped), evaluated together in one plan.
    public func prediction(from inputs: [String: Tensor], policy: ComputePolicy? = nil) throws -> [String: Tensor] {
        var states: [String: Tensor] = [:]
        for description in modelDescription.stateDescriptions {
            states[description.name] = State.initialValue(of: description, sizes: [:])
        }
        return try predict(inputs, states: states, policy: policy ?? Engine.currentPolicy()).outputs
    }

    /// The tensors of a provider's input features, converted where the conversion is exact.
    private func tensors(from input: any FeatureProvider) throws(ModelError) -> [String: Tensor] {
        var tensors: [String: Tensor] = [:]
        for description in modelDescription.inputDescriptions {
            guard let value = input.featureValue(for: description.name) else {
                if description.isOptional { continue }
                throw ModelError(.invalidInput, "input '\(description.name)' (\(description)) is not given")
            }
            tensors[description.name] = try description.tensor(of: value)
        }
        return tensors
    }

    /// The name a state takes among a prepared prediction's inputs and outputs (a space cannot
    /// appear in a MIL name).
    private static func stateKey(_ name: String) -> String { "state \(name)" }

    /// Runs the program on `inputs` and `states`: its outputs, and the states it wrote.
    func predict(_ inputs: [String: Tensor], states: [String: Tensor], policy: ComputePolicy) throws -> (
        outputs: [String: Tensor], states: [String: Tensor]
    ) {
        let bound = try bind(inputs)
        try Tensor.evaluateNow((Array(bound.values) + Array(states.values)).filter { $0.node?.storedResult == nil })
        var keyed = bound
        for (name, tensor) in states { keyed[Self.stateKey(name)] = tensor }
        let key = PreparedPredictions.Key(inputs: keyed, policy: policy)
        if let prepared = preparedPredictions[key] {
            return split(try prepared.run(keyed))
        }
        let run = MILRunState()
        run.states = states
        var results = try outputs(of: try program.run(imported(bound), state: run))
        for (name, tensor) in run.states where tensor.node !== states[name]?.node {
            results[Self.stateKey(name)] = tensor
        }
        let names = results.keys.sorted().filter { results[$0]?.node?.storedResult == nil }
        let targets = names.compactMap { results[$0]?.node }
        guard !targets.isEmpty else { return split(results) }
        let plan = try Tensor.runKeepingPlan(targets, policy: policy).plan
        if !run.readInputData, keepsPreparedPlans {
            preparedPredictions.keep(plan, for: key, inputs: keyed, targetNames: names, outputs: results)
        }
        return split(results)
    }

    /// Bound inputs as the program's values, each with its declared element type.
    private func imported(_ bound: [String: Tensor]) -> [String: ONNXValue] {
        var values: [String: ONNXValue] = [:]
        for input in program.inputs {
            guard let tensor = bound[input.name] else { continue }
            values[input.name] = .tensor(tensor, input.type.tensorType?.dataType.importedType ?? .float)
        }
        return values
    }

    // MARK: Compute plan

    /// The compute plan of a prediction on `inputs`, by the program's operations, without
    /// running it.
    public func computePlan(for inputs: [String: Tensor], policy: ComputePolicy? = nil) throws -> ModelComputePlan {
        let trace = ONNXTrace()
        let run = MILRunState()
        for description in modelDescription.stateDescriptions {
            run.states[description.name] = State.initialValue(of: description, sizes: [:])
        }
        let bound = try bind(inputs)
        var results = try outputs(of: try program.run(imported(bound), state: run, trace: trace))
        for (name, tensor) in run.states { results[Self.stateKey(name)] = tensor }
        trace.folded.formUnion(program.constantOperations)
        let targets = results.keys.sorted().compactMap { results[$0] }
        let plan = try ComputePlan(for: targets, policy: policy, prepared: true)
        let sources = program.operations.map { operation in
            var reads: [String] = []
            var parameters: [String: [String]] = [:]
            for parameter in operation.inputs.keys.sorted() {
                var names: [String] = []
                for case .name(let name) in operation.inputs[parameter] ?? [] { names.append(name) }
                reads += names
                if !names.isEmpty { parameters[parameter] = names }
            }
            return ModelComputePlan.Source(
                name: operation.name, opType: operation.type, inputs: reads, outputs: operation.outputs.map(\.name),
                parameters: parameters)
        }
        let inputValues = program.inputs.map { input in
            ModelStructure.NamedValueType(
                name: input.name, shape: bound[input.name]?.shape ?? run.states[input.name]?.shape,
                scalarType: bound[input.name]?.dtype ?? run.states[input.name]?.dtype)
        }
        return ModelComputePlan(
            sources: sources, inputValues: inputValues, outputNames: program.outputNames, trace: trace,
            enginePlan: plan)
    }

    /// The compute plan for inputs of the given shapes (zeros of each input's type), for example
    /// `["image": [1, 3, 224, 224]]`; an input not named takes its declared shape, an open size 1.
    public func computePlan(inputShapes: [String: [Int]], policy: ComputePolicy? = nil) throws -> ModelComputePlan {
        try computePlan(openSizesAsOne: inputShapes, policy: policy ?? Engine.currentPolicy())
    }

    /// The compute plan for inputs of the given shapes (zeros), an open size not given taken as 1.
    func computePlan(openSizesAsOne inputShapes: [String: [Int]], policy: ComputePolicy) throws -> ModelComputePlan {
        var inputs: [String: Tensor] = [:]
        for input in program.inputs {
            guard let declared = input.type.tensorType, case .tensor = input.type else { continue }
            guard let type = declared.dataType.importedType?.engineType else {
                throw ModelError(.unsupportedType, "input '\(input.name)' is of type \(input.type)")
            }
            let shape =
                inputShapes[input.name]
                ?? declared.dimensions.map { dimension -> Int in
                    if case .fixed(let size) = dimension { return size }
                    return 1
                }
            inputs[input.name] = Tensor(zerosOf: type, shape: shape)
        }
        return try computePlan(for: inputs, policy: policy)
    }

    /// Outputs and written states, apart.
    private func split(_ results: [String: Tensor]) -> (outputs: [String: Tensor], states: [String: Tensor]) {
        var outputs: [String: Tensor] = [:]
        var states: [String: Tensor] = [:]
        for (name, tensor) in results {
            if name.hasPrefix("state ") { states[String(name.dropFirst(6))] = tensor } else { outputs[name] = tensor }
        }
        return (outputs, states)
    }

    /// The program's output values as tensors.
    private func outputs(of values: [String: ONNXValue]) throws(ModelError) -> [String: Tensor] {
        var tensors: [String: Tensor] = [:]
        for (name, value) in values {
            switch value {
            case .tensor(let tensor, _): tensors[name] = tensor
            case .constant(let constant): tensors[name] = try constant.tensor()
            }
        }
        return tensors
    }

    /// Checks each input against the function's declared type and shape; `Float16` converts to
    /// `Float` and back where the model declares the other.
    private func bind(_ inputs: [String: Tensor]) throws(ModelError) -> [String: Tensor] {
        var bound: [String: Tensor] = [:]
        for input in program.inputs {
            if case .state = input.type { continue }
            guard var tensor = inputs[input.name] else {
                throw ModelError(.invalidInput, "input '\(input.name)' (\(input.type)) is not given")
            }
            if let failure = tensor.error {
                throw ModelError(.invalidInput, "input '\(input.name)' carries an error: \(failure)")
            }
            guard let declared = input.type.tensorType, let expected = declared.dataType.importedType?.engineType else {
                throw ModelError(
                    .unsupportedType, "input '\(input.name)' is of type \(input.type), which the engine cannot take")
            }
            let mismatch = "input '\(input.name)' expects \(declared), given \(tensor.dtype) \(describe(tensor.shape))"
            if tensor.dtype != expected {
                guard tensor.dtype == .float16, expected == .float32 else { throw ModelError(.invalidInput, mismatch) }
                tensor = tensor.converted(to: expected)
            }
            if declared.rank >= 0 {
                guard declared.dimensions.count == tensor.rank else { throw ModelError(.invalidInput, mismatch) }
                for (dimension, size) in zip(declared.dimensions, tensor.shape) {
                    if case .fixed(let fixed) = dimension, fixed != size { throw ModelError(.invalidInput, mismatch) }
                }
            }
            bound[input.name] = tensor
        }
        return bound
    }

    /// A state with every state feature not yet written (zeros of its declared shape).
    public func makeState() -> State { State(descriptions: modelDescription.stateDescriptions) }
}
