import Foundation

// A compute plan in Core ML's `MLComputePlan` form: the program it is of, and each program
// operation's device usage and cost.

extension ComputePlan {
    /// Plans a model file without running it (Core ML's `MLComputePlan.load(contentsOf:configuration:)`):
    /// the plan's ``modelStructure`` is the model's program, one operation per ONNX node.
    ///
    /// ```swift
    /// let plan = try await ComputePlan.load(contentsOf: url, configuration: config)
    /// if case let .program(program) = plan.modelStructure, let main = program.functions["main"] {
    ///     for operation in main.block.operations {
    ///         print(operation.operatorName, plan.deviceUsage(for: operation)?.preferredComputeDevice as Any)
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter inputShapes: sizes for inputs whose declared shapes are open; an open size not
    ///   given is 1 (a state input's own open size is 0: an empty cache).
    /// - Throws: what ``Model/init(contentsOf:configuration:)`` throws, and
    ///   ``ModelError/Kind/unsupportedType`` for a model that is not an ONNX graph.
    public static func load(
        contentsOf url: URL, configuration: ModelConfiguration = ModelConfiguration(),
        inputShapes: [String: [Int]] = [:]
    ) async throws -> ComputePlan {
        let copied = configuration.copy()
        let model = try await Model.load(contentsOf: url, configuration: copied)
        guard let planned = model.implementation as? any PlannableModel else {
            throw ModelError(.unsupportedType, "\(url.lastPathComponent) is not a graph the planner can describe")
        }
        let policy = try model.policy(for: PredictionOptions())
        return try await Model.offPool {
            try planned.computePlan(openSizesAsOne: inputShapes, policy: policy).computePlan
        }.value
    }

    /// Where a program operation runs and may run; `nil` for one that runs nowhere at prediction
    /// time (folded on the host while importing, or fused into a later operation's kernel).
    public func deviceUsage(for operation: ModelStructure.Operation) -> DeviceUsage? {
        usageByOperation[operation.identifier]
    }

    /// A program operation's estimated cost and share of the plan; `nil` as for ``deviceUsage(for:)``.
    public func estimatedCost(of operation: ModelStructure.Operation) -> EstimatedCost? {
        costByOperation[operation.identifier]
    }

    /// Describes the plan's own engine operations as its program.
    mutating func describeEngineProgram() {
        let program = operations.map { operation in
            ModelStructure.Operation(
                identifier: operation.index, name: "%\(operation.index)", operatorName: operation.op,
                inputs: ModelStructure.Argument.positional(operation.inputs),
                outputs: [.init(name: "%\(operation.index)", shape: operation.shape, scalarType: operation.scalarType)],
                blocks: [])
        }
        usageByOperation = Dictionary(uniqueKeysWithValues: operations.map { ($0.index, $0.deviceUsage) })
        costByOperation = Dictionary(uniqueKeysWithValues: operations.map { ($0.index, $0.estimatedCost) })
        let block = ModelStructure.Block(
            inputs: [], operations: program, outputNames: operations.last.map { ["%\($0.index)"] } ?? [])
        modelStructure = .program(.init(functions: ["main": .init(inputs: [], block: block)]))
    }
}

/// A model whose program the planner describes operation by operation (an ONNX graph, a Core ML
/// ML Program).
protocol PlannableModel: ModelImplementation {
    /// The plan for inputs of the given shapes, open sizes not given taken as 1.
    func computePlan(openSizesAsOne inputShapes: [String: [Int]], policy: ComputePolicy) throws -> ModelComputePlan
}

extension ONNXModel: PlannableModel {}
extension CoreMLModel: PlannableModel {}

extension ModelComputePlan {
    /// The engine's plan with the model's program as its structure.
    public var computePlan: ComputePlan {
        var plan = enginePlan
        var usage: [Int: ComputePlan.DeviceUsage] = [:]
        var costs: [Int: ComputePlan.EstimatedCost] = [:]
        let program = operations.enumerated().map { index, operation in
            if let deviceUsage = operation.deviceUsage { usage[index] = deviceUsage }
            if let cost = operation.estimatedCost { costs[index] = cost }
            let last = operation.engineOperations.last.map { enginePlan.operations[$0] }
            return ModelStructure.Operation(
                identifier: index, name: operation.name, operatorName: operation.opType,
                inputs: operation.parameters.isEmpty
                    ? ModelStructure.Argument.positional(operation.inputs)
                    : operation.parameters.mapValues { ModelStructure.Argument(bindings: $0.map { .name($0) }) },
                outputs: operation.outputs.map { name in
                    let known = operation.outputs.count == 1 ? last : nil
                    return .init(name: name, shape: known?.shape, scalarType: known?.scalarType)
                },
                blocks: [])
        }
        let block = ModelStructure.Block(inputs: [], operations: program, outputNames: outputNames)
        plan.modelStructure = .program(.init(functions: ["main": .init(inputs: inputValues, block: block)]))
        plan.usageByOperation = usage
        plan.costByOperation = costs
        return plan
    }
}

extension ModelStructure {
    /// The structure of the model at `url` (Core ML's `MLModelStructure.load(contentsOf:)`): its
    /// program, as ``ComputePlan/load(contentsOf:configuration:inputShapes:)`` describes it.
    public static func load(contentsOf url: URL) async throws -> ModelStructure {
        try await ComputePlan.load(contentsOf: url).modelStructure
    }
}

extension ModelStructure.Argument {
    /// Operands in order as parameters `input0`, `input1`, ..., each bound to its value's name.
    static func positional(_ names: [String]) -> [String: ModelStructure.Argument] {
        Dictionary(
            uniqueKeysWithValues: names.enumerated().map { ("input\($0.offset)", .init(bindings: [.name($0.element)])) }
        )
    }
}
