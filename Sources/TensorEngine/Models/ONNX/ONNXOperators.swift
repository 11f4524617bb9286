/// The ONNX operators the importer implements, by domain and op type, gathered from the families'
/// tables (`ONNXOperators+Elementwise.swift`, `+Shape.swift`, `+Math.swift`).
enum ONNXOperators {
    /// The default domain's operators.
    static let standard: [String: ONNXOperator] = {
        var table: [String: ONNXOperator] = [:]
        for family in [
            elementwise, activations, shape, movement, math, normalization, indexing, attention, losses, padding,
            resizing, convolution,
        ] {
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

    /// `count` elements along `axis` from `start`, `step` apart (a view; the other axes whole).
    func slice(alongAxis axis: Int, start: Int, count: Int, step: Int = 1) -> Tensor {
        var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        dimensions[axis] = SliceDimension(start: start, count: count, step: step)
        return Tensor.record(.slice(dimensions), [self], at: nil)
    }

    /// `0, 1, …, count - 1` as `Int32` along `axis` of a rank-`rank` tensor whose other axes are 1
    /// (what one-hot masks compare positions with).
    static func iota(_ count: Int, alongAxis axis: Int, rank: Int) -> Tensor {
        let shape = (0..<rank).map { $0 == axis ? count : 1 }
        return Tensor.constant((0..<Int32(clamping: count)).map { $0 }, shape: shape, op: "iota", at: nil)
    }
}
