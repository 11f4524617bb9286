/// What an operator's importer sees of one node: its attributes, its inputs (host constants or
/// lazy tensors), the operator set's version, and how to report what is wrong with it.
struct ONNXNodeContext {
    let node: ONNXNodeProto
    /// The version of the node's operator set that the model imports.
    let opset: Int
    /// The node's inputs in order; `nil` for an omitted optional input (an empty name).
    let inputs: [ONNXValue?]
    /// The model's file, where tensors in attributes keep their `raw_data`.
    let source: ONNXDataSource?
    /// Shared by the nodes of one run.
    let state: ONNXRunState
    private let attributes: [String: ONNXAttribute]

    init(node: ONNXNodeProto, opset: Int, inputs: [ONNXValue?], source: ONNXDataSource? = nil, state: ONNXRunState) {
        self.node = node
        self.source = source
        self.state = state
        self.opset = opset
        self.inputs = inputs
        var attributes: [String: ONNXAttribute] = [:]
        for attribute in node.attributes { attributes[attribute.name] = attribute }
        self.attributes = attributes
    }

    /// How errors name the node: `'name' (Op)`, or the op type alone for an unnamed node.
    var label: String { node.name.isEmpty ? node.opType : "'\(node.name)' (\(node.opType))" }

    /// An error about this node.
    func error(_ message: String, _ kind: ModelError.Kind = .invalidNode) -> ModelError {
        ModelError(kind, message, node: label)
    }

    // MARK: Attributes

    func has(_ name: String) -> Bool { attributes[name] != nil }

    private func attribute(_ name: String, _ kind: ONNXAttribute.Kind) throws(ModelError) -> ONNXAttribute? {
        guard let attribute = attributes[name] else { return nil }
        // Old exporters leave the type unset; the value then tells.
        guard attribute.kind == kind || attribute.kind == .undefined else {
            throw self.error("attribute '\(name)' is of type \(attribute.kind), expected \(kind)", .invalidModel)
        }
        return attribute
    }

    func int(_ name: String) throws(ModelError) -> Int? {
        guard let value = try attribute(name, .int)?.int else { return nil }
        guard let exact = Int(exactly: value) else { throw self.error("attribute '\(name)' = \(value) is too large") }
        return exact
    }

    func int(_ name: String, default value: Int) throws(ModelError) -> Int { try int(name) ?? value }

    func ints(_ name: String) throws(ModelError) -> [Int]? {
        guard let values = try attribute(name, .ints)?.ints else { return nil }
        return try values.map { value throws(ModelError) in
            guard let exact = Int(exactly: value) else {
                throw self.error("attribute '\(name)' holds \(value), too large")
            }
            return exact
        }
    }

    func int64s(_ name: String) throws(ModelError) -> [Int64]? { try attribute(name, .ints)?.ints }

    func float(_ name: String, default value: Float) throws(ModelError) -> Float {
        try attribute(name, .float)?.float ?? value
    }

    func floats(_ name: String) throws(ModelError) -> [Float]? { try attribute(name, .floats)?.floats }

    func string(_ name: String, default value: String) throws(ModelError) -> String {
        guard let bytes = try attribute(name, .string)?.string else { return value }
        return String(decoding: bytes, as: UTF8.self)
    }

    func tensorAttribute(_ name: String) throws(ModelError) -> ONNXTensorProto? { try attribute(name, .tensor)?.tensor }

    /// A tensor attribute's values on the host.
    func constant(of tensor: ONNXTensorProto) throws(ModelError) -> ONNXConstant {
        do { return try tensor.constant(source: source) } catch {
            throw self.error(error.message, error.kind == .unsupportedDType ? .unsupportedType : .invalidModel)
        }
    }

    /// The first attribute the node sets, for `Constant`'s one-of `value*` attributes.
    var attributeNames: [String] { node.attributes.map(\.name) }

    func attributeValue(_ name: String) -> ONNXAttribute? { attributes[name] }

    // MARK: Inputs

    var inputCount: Int { inputs.count }

    /// Whether input `index` is given (present and not an empty name).
    func hasInput(_ index: Int) -> Bool { index < inputs.count && inputs[index] != nil }

    func value(_ index: Int) throws(ModelError) -> ONNXValue {
        guard index < inputs.count, let value = inputs[index] else {
            throw self.error("input \(index) is required but not given", .invalidModel)
        }
        return value
    }

    /// Input `index` as an engine tensor (a host constant is turned into one).
    func tensor(_ index: Int) throws(ModelError) -> Tensor {
        switch try value(index) {
        case .tensor(let tensor, _): return tensor
        case .constant(let constant):
            do { return try constant.tensor() } catch { throw self.error(error.message, error.kind) }
        }
    }

    /// Input `index`'s ONNX type.
    func type(_ index: Int) throws(ModelError) -> ONNXDataType { try value(index).dataType }

    /// Input `index`'s values on the host: a constant as it is, a tensor evaluated now (an input
    /// that sets sizes, such as `Reshape`'s shape computed from data).
    func constant(_ index: Int) throws(ModelError) -> ONNXConstant {
        switch try value(index) {
        case .constant(let constant): return constant
        case .tensor(let tensor, let type):
            state.readInputData = true
            do {
                return try tensor.hostConstant(type: type)
            } catch {
                throw self.error("cannot evaluate input \(index), which sets sizes: \(error.message)")
            }
        }
    }

    /// Input `index` as integers (`Reshape`'s shape, `Slice`'s starts, axes given as inputs).
    func integers(_ index: Int) throws(ModelError) -> [Int64] { try constant(index).integers }

    /// Input `index` as `Int` sizes or axes, each checked to fit.
    func ints(input index: Int) throws(ModelError) -> [Int] {
        try integers(index).map { value throws(ModelError) in
            guard let exact = Int(exactly: value) else { throw self.error("input \(index) holds \(value), too large") }
            return exact
        }
    }

    /// Whether every given input is known on the host (the node can be folded).
    var allConstant: Bool {
        inputs.allSatisfy { value in
            guard let value else { return true }
            if case .constant = value { return true }
            return false
        }
    }

    /// A tensor result, or the error the engine recorded in it, attributed to this node. The
    /// tensor is cast to the type's engine type when an op made it in another (an `ArgMax`'s
    /// `Int32` positions for its `int64` output), so a value's tensor always has its type's.
    func output(_ tensor: Tensor, _ type: ONNXDataType) throws(ModelError) -> ONNXValue {
        if let failure = tensor.error { throw self.error(failure.message) }
        guard let engineType = type.engineType else {
            throw self.error("the engine cannot hold \(type) values", .unsupportedType)
        }
        return .tensor(tensor.converted(to: engineType), type)
    }
}

extension Tensor {
    /// Evaluates the tensor now and reads its values on the host (for values that set sizes).
    func hostConstant(type: ONNXDataType) throws(TensorError) -> ONNXConstant {
        try Tensor.evaluateNow([self])
        guard let value = node?.storedResult, let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "onnx", message: "the evaluated tensor has no host result")
        }
        let count = scalarCount
        let start = value.layout.offset
        switch dtype {
        case .float32:
            let pointer = buffer.elements(as: Float.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .reals((0..<count).map { Double(pointer[$0]) }))
        case .float16:
            let pointer = buffer.elements(as: Float16.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .reals((0..<count).map { Double(pointer[$0]) }))
        case .int32:
            let pointer = buffer.elements(as: Int32.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .integers((0..<count).map { Int64(pointer[$0]) }))
        case .bool:
            let pointer = buffer.elements(as: Bool.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .booleans((0..<count).map { pointer[$0] }))
        case .int64:
            let pointer = buffer.elements(as: Int64.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .integers((0..<count).map { pointer[$0] }))
        case .float64:
            let pointer = buffer.elements(as: Double.self) + start
            return ONNXConstant(dataType: type, shape: shape, values: .reals((0..<count).map { pointer[$0] }))
        }
    }
}
