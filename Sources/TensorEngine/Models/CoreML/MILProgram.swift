/// How the importer turns one MIL operation into engine ops: a function of the operation's
/// context returning its outputs in order.
struct MILOperator: Sendable {
    let lower: @Sendable (MILOperationContext) throws(ModelError) -> [MILValue]
}

/// One function of an ML Program, checked once when the model loads and run for each prediction.
///
/// Loading picks the function's block for its opset, checks that every value an operation reads
/// is defined before it and that every operation type is implemented (one ``ModelError`` lists
/// every operation that is not), and computes the constants: `const` operations, and the
/// `constexpr_*` decompressions of weights, once. Running walks the operations: each becomes lazy
/// engine ops, so the whole function is one engine graph the planner places at once.
final class MILProgram: Sendable {
    /// The function's name (`main`).
    let functionName: String
    /// The opset its block is written in (`CoreML7`).
    let opset: String
    /// The function's inputs, states included (a state input's type is a state type).
    let inputs: [MILNamedValueType]
    /// The operations in order.
    let operations: [MILOperationSpec]
    /// The names of the values the function gives.
    let outputNames: [String]
    /// The value each constant operation gives, computed at load.
    private let constants: [String: MILValue]
    /// The operations computed at load (constants), by position.
    let constantOperations: Set<Int>
    let package: CoreMLPackage?

    init(program: MILProgramSpec, functionName: String, package: CoreMLPackage?) throws(ModelError) {
        guard let function = program.functions[functionName] else {
            let known = program.functions.keys.sorted().joined(separator: ", ")
            throw ModelError(.invalidInput, "the program has no function '\(functionName)' (it has \(known))")
        }
        let opset = function.opset.isEmpty ? function.blockSpecializations.keys.sorted().last ?? "" : function.opset
        guard let block = function.blockSpecializations[opset] else {
            throw ModelError(.invalidModel, "function '\(functionName)' has no block for its opset '\(opset)'")
        }
        self.functionName = functionName
        self.opset = opset
        self.package = package
        inputs = function.inputs
        operations = block.operations
        outputNames = block.outputs
        try Self.checkSupport(block.operations, opset: opset)
        try Self.checkBindings(block, inputs: function.inputs)
        var constants: [String: MILValue] = [:]
        var constantOperations: Set<Int> = []
        let state = MILRunState()
        for (index, operation) in block.operations.enumerated() {
            if operation.type == "const" {
                guard let value = operation.attributes["val"] else {
                    throw ModelError(.invalidModel, "const '\(operation.name)' has no 'val' attribute")
                }
                for output in operation.outputs {
                    constants[output.name] = try MILConstants.value(value, package: package, name: operation.name)
                }
                constantOperations.insert(index)
            } else if operation.type.hasPrefix("constexpr_") {
                let context = try Self.context(operation, constants, package: package, state: state)
                let results = try MILOperators.lookup(operation.type)?.lower(context) ?? []
                for (output, result) in zip(operation.outputs, results) { constants[output.name] = result }
                constantOperations.insert(index)
            }
        }
        self.constants = constants
        self.constantOperations = constantOperations
    }

    /// The version number of an opset name (`CoreML7` → 7), for error reports.
    static func opsetNumber(_ opset: String) -> Int { Int(opset.filter(\.isNumber)) ?? 0 }

    /// Throws one error listing every operation whose type is not implemented.
    private static func checkSupport(_ operations: [MILOperationSpec], opset: String) throws(ModelError) {
        var unsupported: [ModelError.UnsupportedNode] = []
        func check(_ operations: [MILOperationSpec]) {
            for operation in operations {
                if operation.type != "const" && MILOperators.lookup(operation.type) == nil {
                    unsupported.append(
                        .init(
                            name: operation.name, opType: operation.type, opsetVersion: opsetNumber(opset),
                            reason: "not implemented"))
                }
                for block in operation.blocks { check(block.operations) }
            }
        }
        check(operations)
        guard unsupported.isEmpty else {
            let kinds = Set(unsupported.map(\.opType)).sorted().joined(separator: ", ")
            let count = unsupported.count
            throw ModelError(
                .unsupportedOperators,
                "\(count) operation\(count == 1 ? "" : "s") use MIL operators the engine does not implement (\(kinds))",
                unsupportedNodes: unsupported)
        }
    }

    /// Checks that every name an operation reads is an input or an earlier operation's output.
    private static func checkBindings(_ block: MILBlockSpec, inputs: [MILNamedValueType]) throws(ModelError) {
        var defined = Set(inputs.map(\.name))
        for operation in block.operations {
            for (parameter, bindings) in operation.inputs {
                for case .name(let name) in bindings where !defined.contains(name) {
                    throw ModelError(
                        .invalidModel,
                        "its parameter '\(parameter)' reads '\(name)', which no earlier operation defines",
                        node: "'\(operation.name)' (\(operation.type))")
                }
            }
            for output in operation.outputs {
                guard defined.insert(output.name).inserted else {
                    throw ModelError(.invalidModel, "the value '\(output.name)' is defined twice")
                }
            }
        }
        for output in block.outputs where !defined.contains(output) {
            throw ModelError(.invalidModel, "the block's output '\(output)' is not defined")
        }
    }

    /// Binds an operation's parameters to values.
    private static func context(
        _ operation: MILOperationSpec, _ values: [String: MILValue], package: CoreMLPackage?, state: MILRunState,
        program: MILProgram? = nil
    ) throws(ModelError) -> MILOperationContext {
        var arguments: [String: [MILValue]] = [:]
        for (parameter, bindings) in operation.inputs {
            var bound: [MILValue] = []
            for binding in bindings {
                switch binding {
                case .name(let name):
                    guard let value = values[name] else {
                        throw ModelError(
                            .invalidModel, "its parameter '\(parameter)' reads '\(name)', which is not defined",
                            node: "'\(operation.name)' (\(operation.type))")
                    }
                    bound.append(value)
                case .value(let spec):
                    bound.append(try MILConstants.value(spec, package: package, name: "\(operation.name).\(parameter)"))
                }
            }
            arguments[parameter] = bound
        }
        // Compile-time parameters (`constexpr_*`'s data, scales and tables) are stored as attributes.
        for (parameter, value) in operation.attributes where parameter != "name" && arguments[parameter] == nil {
            arguments[parameter] = [
                try MILConstants.value(value, package: package, name: "\(operation.name).\(parameter)")
            ]
        }
        var context = MILOperationContext(operation: operation, arguments: arguments, run: state)
        if let program {
            // A nested block sees the enclosing scope's values and its own inputs.
            context.runBlock = { block, given throws(ModelError) in
                guard block.inputs.count == given.count else {
                    throw ModelError(
                        .invalidModel, "a block of \(block.inputs.count) inputs is given \(given.count) values",
                        node: "'\(operation.name)' (\(operation.type))")
                }
                var scope = values
                for (input, value) in zip(block.inputs, given) { scope[input.name] = value }
                try program.execute(block.operations, values: &scope, state: state)
                return try block.outputs.map { name throws(ModelError) in
                    guard let value = scope[name] else {
                        throw ModelError(.invalidModel, "the block's output '\(name)' is not defined")
                    }
                    return value
                }
            }
        }
        return context
    }

    /// Runs `operations` on `values` (each result added under its name): constants are read,
    /// other operations lowered; with a trace, each engine node is attributed to the position of
    /// the operation that recorded it. Positions in `skipping` are constants computed at load.
    func execute(
        _ operations: [MILOperationSpec], values: inout [String: MILValue], state: MILRunState,
        trace: ONNXTrace? = nil, skipping: Set<Int> = []
    ) throws(ModelError) {
        for (index, operation) in operations.enumerated() where !skipping.contains(index) {
            if operation.type == "const" {
                guard let value = operation.attributes["val"] else {
                    throw ModelError(.invalidModel, "const '\(operation.name)' has no 'val' attribute")
                }
                let constant = try MILConstants.value(value, package: package, name: operation.name)
                for output in operation.outputs { values[output.name] = constant }
                continue
            }
            let context = try Self.context(operation, values, package: package, state: state, program: self)
            guard let known = MILOperators.lookup(operation.type) else {
                throw ModelError(.unsupportedOperators, "\(operation.type) is not implemented", node: context.label)
            }
            let results = try known.lower(context)
            for (output, result) in zip(operation.outputs, results) {
                values[output.name] = result
                if let trace, case .imported(let value) = result { trace.mark(value, origin: index) }
            }
            if let trace, results.allSatisfy({ if case .imported(.constant) = $0 { true } else { false } }) {
                trace.folded.insert(index)
            }
            if let trace {
                for tensor in state.states.values { trace.mark(.tensor(tensor, .float), origin: index) }
            }
        }
    }

    /// Runs the function: `given` binds its (non-state) inputs, `state.states` its states (updated
    /// in place by the operations that write them). Returns the function's outputs; with a trace,
    /// records which operation each engine node comes from.
    func run(
        _ given: [String: ONNXValue], state: MILRunState, trace: ONNXTrace? = nil
    ) throws(ModelError) -> [String: ONNXValue] {
        var values = constants
        for input in inputs {
            if case .state = input.type {
                guard state.states[input.name] != nil else {
                    throw ModelError(.invalidInput, "state '\(input.name)' has no value")
                }
                values[input.name] = .state(name: input.name)
                continue
            }
            guard let value = given[input.name] else {
                throw ModelError(.invalidInput, "input '\(input.name)' is not given")
            }
            values[input.name] = .imported(value)
            if case .tensor(let tensor, _) = value, let node = tensor.node { state.inputNodes.insert(ObjectIdentifier(node)) }
            trace?.mark(value, origin: -1)
        }
        for tensor in state.states.values {
            if let node = tensor.node { state.inputNodes.insert(ObjectIdentifier(node)) }
            trace?.mark(.tensor(tensor, .float), origin: -1)
        }
        try execute(operations, values: &values, state: state, trace: trace, skipping: constantOperations)
        var results: [String: ONNXValue] = [:]
        for name in outputNames {
            guard case .imported(let value) = values[name] else {
                throw ModelError(.invalidModel, "the function's output '\(name)' is not a tensor")
            }
            results[name] = value
        }
        return results
    }
}
