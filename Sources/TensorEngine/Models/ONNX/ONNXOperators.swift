/// The ONNX operators the importer implements, by domain and op type, gathered from the families'
/// tables (`ONNXOperators+Elementwise.swift`, `+Shape.swift`, `+Math.swift`).
enum ONNXOperators {
    /// The default domain's operators.
    static let standard: [String: ONNXOperator] = {
        var table: [String: ONNXOperator] = [:]
        for family in [elementwise, activations, shape, movement, math, normalization, indexing, attention, losses, padding, resizing] {
            table.merge(family) { first, _ in first }
        }
        return table
    }()

    /// Operators of other domains, by `domain|opType`.
    static let extensions: [String: ONNXOperator] = [:]

    /// The operator for a node, or `nil` when the engine does not implement it.
    static func lookup(domain: String, opType: String) -> ONNXOperator? {
        domain.isEmpty ? standard[opType] : extensions["\(domain)|\(opType)"]
    }

    /// The op types of the default domain the engine implements, sorted.
    static var supportedOpTypes: [String] { standard.keys.sorted() }
}

extension Tensor {
    /// Records a unary elementwise op of the op table.
    static func apply(_ kind: OpKind, _ x: Tensor) -> Tensor { record(Op(kind), [x], at: nil) }

    /// The tensor cast to an engine scalar type.
    func converted(to type: ScalarType) -> Tensor { Tensor.record(.cast(type), [self], at: nil) }
}
