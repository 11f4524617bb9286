/// What an operation's lowering sees of one MIL operation: its parameters bound to values, its
/// declared outputs, and how to report what is wrong with it.
struct MILOperationContext {
    let operation: MILOperationSpec
    /// Each parameter's values (one for an ordinary parameter, several for `concat`'s `values`).
    let arguments: [String: [MILValue]]
    /// Shared by the operations of one run.
    let run: MILRunState
    /// Runs one of the operation's nested blocks (control flow) on values for the block's inputs,
    /// returning the block's outputs.
    var runBlock: (MILBlockSpec, [MILValue]) throws(ModelError) -> [MILValue] = { _, _ throws(ModelError) in
        throw ModelError(.invalidModel, "no nested block can run here")
    }

    /// How errors name the operation: `'conv_0' (conv)`.
    var label: String { "'\(operation.name)' (\(operation.type))" }

    /// An error about this operation.
    func error(_ message: String, _ kind: ModelError.Kind = .invalidNode) -> ModelError {
        ModelError(kind, message, node: label)
    }

    /// Whether the parameter is bound.
    func has(_ parameter: String) -> Bool { arguments[parameter]?.isEmpty == false }

    /// The parameter's single value.
    func value(_ parameter: String) throws(ModelError) -> MILValue {
        guard let values = arguments[parameter], let first = values.first else {
            throw error("the parameter '\(parameter)' is required but not bound", .invalidModel)
        }
        guard values.count == 1 else {
            throw error("the parameter '\(parameter)' is bound to \(values.count) values, not one", .invalidModel)
        }
        return first
    }

    /// The parameter's values: a variadic parameter's bindings, or a list constant's elements.
    func values(_ parameter: String) throws(ModelError) -> [MILValue] {
        guard let values = arguments[parameter], !values.isEmpty else {
            throw error("the parameter '\(parameter)' is required but not bound", .invalidModel)
        }
        if values.count == 1, case .list(let elements) = values[0] { return elements }
        return values
    }

    /// The parameter as an engine tensor.
    func tensor(_ parameter: String) throws(ModelError) -> Tensor { try tensor(of: try value(parameter), parameter) }

    /// The parameter as an engine tensor, or `nil` when it is not bound.
    func optionalTensor(_ parameter: String) throws(ModelError) -> Tensor? {
        has(parameter) ? try tensor(parameter) : nil
    }

    /// A value as an engine tensor (a host constant is turned into one).
    func tensor(of value: MILValue, _ parameter: String) throws(ModelError) -> Tensor {
        switch value {
        case .imported(.tensor(let tensor, _)): return tensor
        case .imported(.constant(let constant)):
            do { return try constant.tensor() } catch {
                throw self.error("'\(parameter)': \(error.message)", error.kind)
            }
        case .packed(let packed):
            let type: ONNXDataType = packed.type == .int8 || packed.type == .int4 ? .int8 : .uint8
            let constant = ONNXConstant(
                dataType: type, shape: packed.shape, values: .integers(packed.elements.map { Int64($0) }))
            return try tensor(of: .imported(.constant(constant)), parameter)
        case .strings, .state, .list:
            throw error("the parameter '\(parameter)' is not a tensor", .invalidModel)
        }
    }

    /// The parameter's values on the host: a constant as it is, a tensor evaluated now (a size
    /// computed from data).
    func constant(_ parameter: String) throws(ModelError) -> ONNXConstant {
        switch try value(parameter) {
        case .imported(.constant(let constant)): return constant
        case .imported(.tensor(let tensor, let type)):
            if run.dependsOnInputs(tensor) { run.readInputData = true }
            do { return try tensor.hostConstant(type: type) } catch {
                throw self.error("cannot evaluate '\(parameter)', which sets sizes: \(error.message)")
            }
        case .packed(let packed):
            return ONNXConstant(
                dataType: .int64, shape: packed.shape, values: .integers(packed.elements.map { Int64($0) }))
        case .strings, .state, .list:
            throw error("the parameter '\(parameter)' is not a tensor", .invalidModel)
        }
    }

    /// A boolean value read on the host (a loop's or a branch's condition): data-dependent only
    /// when computed from the run's inputs, which then keeps the built graph from being reused.
    func condition(_ value: MILValue, _ what: String) throws(ModelError) -> Bool {
        let constant: ONNXConstant
        switch value {
        case .imported(.constant(let known)): constant = known
        case .imported(.tensor(let tensor, let type)):
            if run.dependsOnInputs(tensor) { run.readInputData = true }
            do { constant = try tensor.hostConstant(type: type) } catch {
                throw self.error("cannot evaluate the \(what): \(error.message)")
            }
        case .packed, .strings, .state, .list:
            throw error("the \(what) is not a boolean tensor", .invalidModel)
        }
        guard constant.count == 1 else { throw error("the \(what) holds \(constant.count) values, not one") }
        return constant.booleans[0]
    }

    /// The parameter as `Int`s (sizes, axes, strides), each checked to fit.
    func ints(_ parameter: String) throws(ModelError) -> [Int] {
        try constant(parameter).integers.map { value throws(ModelError) in
            guard let exact = Int(exactly: value) else { throw error("'\(parameter)' holds \(value), too large") }
            return exact
        }
    }

    /// The parameter as `Int`s, or `nil` when it is not bound.
    func optionalInts(_ parameter: String) throws(ModelError) -> [Int]? { has(parameter) ? try ints(parameter) : nil }

    /// The parameter as one `Int`.
    func int(_ parameter: String) throws(ModelError) -> Int {
        let values = try ints(parameter)
        guard values.count == 1 else { throw error("'\(parameter)' holds \(values.count) values, not one") }
        return values[0]
    }

    func int(_ parameter: String, default value: Int) throws(ModelError) -> Int {
        has(parameter) ? try int(parameter) : value
    }

    /// The parameter as one `Float`.
    func float(_ parameter: String, default value: Float? = nil) throws(ModelError) -> Float {
        guard has(parameter) else {
            guard let value else {
                throw error("the parameter '\(parameter)' is required but not bound", .invalidModel)
            }
            return value
        }
        let reals = try constant(parameter).reals
        guard reals.count == 1 else { throw error("'\(parameter)' holds \(reals.count) values, not one") }
        return Float(reals[0])
    }

    /// The parameter as one `Bool`.
    func bool(_ parameter: String, default value: Bool) throws(ModelError) -> Bool {
        guard has(parameter) else { return value }
        let values = try constant(parameter).booleans
        guard values.count == 1 else { throw error("'\(parameter)' holds \(values.count) values, not one") }
        return values[0]
    }

    /// The parameter as booleans (`slice_by_index`'s masks).
    func bools(_ parameter: String) throws(ModelError) -> [Bool]? {
        has(parameter) ? try constant(parameter).booleans : nil
    }

    /// The parameter as a string (`pad_type`, `mode`).
    func string(_ parameter: String, default value: String? = nil) throws(ModelError) -> String {
        guard has(parameter) else {
            guard let value else {
                throw error("the parameter '\(parameter)' is required but not bound", .invalidModel)
            }
            return value
        }
        guard case .strings(let strings) = try self.value(parameter), strings.count == 1 else {
            throw error("the parameter '\(parameter)' is not a string", .invalidModel)
        }
        return strings[0]
    }

    // MARK: Outputs

    /// The declared type of output `index`.
    func declaredType(_ index: Int = 0) -> MILTensorType? {
        index < operation.outputs.count ? operation.outputs[index].type.tensorType : nil
    }

    /// A tensor result as output `index`: checked against the declared shape, and cast to the
    /// declared element type where the engine computed it in another (an `fp16` operation whose
    /// lowering computed in `Float`).
    func output(_ tensor: Tensor, _ index: Int = 0) throws(ModelError) -> MILValue {
        if let failure = tensor.error { throw error(failure.message) }
        guard let declared = declaredType(index) else { return .imported(.tensor(tensor, .float)) }
        guard let imported = declared.dataType.importedType, let engineType = imported.engineType else {
            throw error("its output is of type \(declared.dataType), which the engine cannot hold", .unsupportedType)
        }
        if declared.rank >= 0 {
            guard declared.dimensions.count == tensor.rank else {
                throw error("computed a \(describe(tensor.shape)) result where the model declares \(declared)")
            }
            for (dimension, size) in zip(declared.dimensions, tensor.shape) {
                if case .fixed(let expected) = dimension, expected != size {
                    throw error("computed a \(describe(tensor.shape)) result where the model declares \(declared)")
                }
            }
        }
        let typed = tensor.dtype == engineType ? tensor : tensor.converted(to: engineType)
        // Small results of constants are folded on the host (loop counters, shape arithmetic), so
        // that conditions read them without evaluating a growing graph.
        if readsConstantsOnly, typed.scalarCount <= Self.foldingLimit {
            do { return .imported(.constant(try typed.hostConstant(type: imported))) } catch {
                throw self.error("cannot fold a result of constants: \(error.message)")
            }
        }
        return .imported(.tensor(typed, imported))
    }

    /// The most elements a result of constants may have to be folded on the host.
    static let foldingLimit = 1024

    /// Whether every argument is known on the host (no tensor computed by the graph, no state).
    var readsConstantsOnly: Bool {
        func isConstant(_ value: MILValue) -> Bool {
            switch value {
            case .imported(.constant), .strings, .packed: true
            case .imported(.tensor), .state: false
            case .list(let items): items.allSatisfy(isConstant)
            }
        }
        return arguments.values.allSatisfy { $0.allSatisfy(isConstant) }
    }

    /// Each result as the output of its position.
    func outputs(_ tensors: [Tensor]) throws(ModelError) -> [MILValue] {
        var values: [MILValue] = []
        for (index, tensor) in tensors.enumerated() { values.append(try output(tensor, index)) }
        return values
    }
}

/// What one run of a program learned and carries beyond its values.
final class MILRunState: @unchecked Sendable {
    /// Whether an operation needed a tensor's values while the graph was built (sizes computed
    /// from data), which makes the built graph valid for those data only.
    var readInputData = false
    /// Each state's value: read by `read_state`, replaced by `coreml_update_state`/`write_state`.
    var states: [String: Tensor] = [:]
    /// The engine nodes of the run's inputs and states: what makes a value depend on the data.
    var inputNodes: Set<ObjectIdentifier> = []

    /// Whether `tensor` is computed from the run's inputs or states (else from constants only, so
    /// reading it on the host while building the graph keeps the graph valid for other data).
    func dependsOnInputs(_ tensor: Tensor) -> Bool {
        guard let root = tensor.node else { return false }
        var pending = [root]
        var seen: Set<ObjectIdentifier> = []
        while let node = pending.popLast() {
            let key = ObjectIdentifier(node)
            if inputNodes.contains(key) { return true }
            guard seen.insert(key).inserted, node.storedResult == nil else { continue }
            pending.append(contentsOf: node.inputs)
        }
        return false
    }
}
