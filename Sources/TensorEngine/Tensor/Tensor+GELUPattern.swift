extension Tensor {
    /// GELU written out, `x · 0.5 · (1 + erf(x / √2))` (the factors in any order and grouping,
    /// `/ √2` or `· (1/√2)`), recognised when its last product is recorded, and recorded as the
    /// one ``gelu(approximation:file:line:)`` op instead.
    ///
    /// PyTorch's exact GELU is exported to ONNX this way (`Div → Erf → Add → Mul → Mul`, every
    /// BERT-style encoder's feed-forward activation) and Core ML programs and MLTensor code may
    /// write it so. As one op it is one pass of one formula, and an importer can fuse it into the
    /// product before it (``fusingActivation(_:)``). The nodes of the written-out form stay in
    /// the graph and are computed only if something else reads them. `nil` for any other shape
    /// (other constants, a broadcast `x`, other scalar types).
    static func recognizedGELU(_ a: Node, _ b: Node, at location: SourceLocation?) -> Tensor? {
        let factors: [Node]
        if a.op.kind == .multiply {
            factors = a.inputs + [b]
        } else if b.op.kind == .multiply {
            factors = [a] + b.inputs
        } else {
            return nil
        }
        guard factors.count == 3, let half = factors.firstIndex(where: { scalarConstant($0) == 0.5 }),
            let shifted = factors.firstIndex(where: { erfPlusOne($0) != nil }),
            let x = erfPlusOne(factors[shifted]), half != shifted,
            factors.indices.contains(where: { $0 != half && $0 != shifted && factors[$0] === x }),
            x.signature.scalarType == .float32 || x.signature.scalarType == .float16,
            x.signature.shape == a.signature.shape || x.signature.shape == b.signature.shape
        else { return nil }
        let gelu = Tensor.record(.gelu(.none), [Tensor(node: x)], at: location)
        return gelu.error == nil ? gelu : nil
    }

    /// `1 + erf(x / √2)` (either order of the sum, `/ √2` or `· (1/√2)` on either side): `x`.
    private static func erfPlusOne(_ node: Node) -> Node? {
        guard node.op.kind == .add, node.inputs.count == 2 else { return nil }
        let (left, right) = (node.inputs[0], node.inputs[1])
        let erf = scalarConstant(right) == 1 ? left : scalarConstant(left) == 1 ? right : nil
        guard let erf, erf.op.kind == .erf, let scaled = erf.inputs.first, scaled.inputs.count == 2 else { return nil }
        let (first, second) = (scaled.inputs[0], scaled.inputs[1])
        func near(_ value: Double?, _ target: Double) -> Bool {
            value.map { Swift.abs($0 - target) <= 1e-6 * target } ?? false
        }
        if scaled.op.kind == .divide { return near(scalarConstant(second), 2.0.squareRoot()) ? first : nil }
        guard scaled.op.kind == .multiply else { return nil }
        if near(scalarConstant(second), 0.5.squareRoot()) { return first }
        return near(scalarConstant(first), 0.5.squareRoot()) ? second : nil
    }
}
