/// ONNX operators on lines and products: `MatMul`, `Gemm`, `Einsum`, `Softmax`, `LogSoftmax`,
/// `LayerNormalization`, `CumSum`, `TopK`, `ArgMax`, `ArgMin` and the `Reduce*` family.
extension ONNXOperators {
    static let math: [String: ONNXOperator] = {
        var table: [String: ONNXOperator] = [
            "MatMul": ONNXOperator(lower: matmul),
            "Gemm": ONNXOperator(since: 6, lower: gemm),
            "Einsum": ONNXOperator(since: 12, lower: einsum),
            "Softmax": ONNXOperator { node throws(ModelError) in try softmax(node, log: false) },
            "LogSoftmax": ONNXOperator { node throws(ModelError) in try softmax(node, log: true) },
            "LayerNormalization": ONNXOperator(since: 17, lower: layerNormalization),
            "CumSum": ONNXOperator(since: 11) { node throws(ModelError) in try scan(node, product: false) },
            "TopK": ONNXOperator(lower: topK),
            "ArgMax": ONNXOperator { node throws(ModelError) in try argExtreme(node, largest: true) },
            "ArgMin": ONNXOperator { node throws(ModelError) in try argExtreme(node, largest: false) },
        ]
        for (name, reduction) in reductions {
            table[name] = ONNXOperator { node throws(ModelError) in try reduce(node, reduction) }
        }
        return table
    }()

    /// `MatMul` with NumPy's rules (``Tensor/matmul(_:file:line:)``, which also runs a batch of
    /// rows times one matrix as one 2-D product).
    static func matmul(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        [try node.output(try node.tensor(0).matmul(try node.tensor(1)), try node.type(0))]
    }

    /// `Gemm`: `alpha · A' · B' + beta · C`, `'` a transposition when `transA`/`transB` say so.
    static func gemm(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        var a = try node.tensor(0)
        var b = try node.tensor(1)
        if try node.int("transA", default: 0) != 0 { a = a.transposed() }
        if try node.int("transB", default: 0) != 0 { b = b.transposed() }
        let alpha = try node.float("alpha", default: 1)
        let beta = try node.float("beta", default: 1)
        var y = a.matmul(b)
        if alpha != 1 { y = y * alpha }
        if node.hasInput(2), beta != 0 {
            let c = try node.tensor(2)
            // A bias per column (a classifier's `Gemm`) is added by the product as it finishes.
            if alpha == 1, beta == 1, let fused = y.addingBias(c) {
                y = fused
            } else {
                y = Tensor.binary(.add, y, beta == 1 ? c : c * beta, at: nil)
            }
        }
        return [try node.output(y, try node.type(0))]
    }

    /// `Softmax`/`LogSoftmax`: along one axis from opset 13; before, over the input flattened to
    /// 2-D at `axis` (default 1).
    static func softmax(_ node: ONNXNodeContext, log: Bool) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        let type = try node.type(0)
        if node.opset >= 13 {
            let axis = try axis(node, try node.int("axis", default: -1), rank: x.rank)
            return [try node.output(log ? x.logSoftmax(alongAxis: axis) : x.softmax(alongAxis: axis), type)]
        }
        var axis = try node.int("axis", default: 1)
        if axis < 0 { axis += x.rank }
        guard (0...x.rank).contains(axis) else { throw node.error("axis \(axis) is out of range for rank \(x.rank)") }
        let flat = x.reshaped(to: [x.shape[..<axis].reduce(1, *), x.shape[axis...].reduce(1, *)])
        let result = (log ? flat.logSoftmax(alongAxis: 1) : flat.softmax(alongAxis: 1)).reshaped(to: x.shape)
        return [try node.output(result, type)]
    }

    /// `LayerNormalization` over the axes from `axis` to the last, with optional scale and bias;
    /// the optional `Mean` and `InvStdDev` outputs too.
    static func layerNormalization(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let x = try node.tensor(0)
        let type = try node.type(0)
        let axis = try axis(node, try node.int("axis", default: -1), rank: x.rank)
        let epsilon = try node.float("epsilon", default: 1e-5)
        let scale = node.hasInput(1) ? try node.tensor(1) : nil
        let bias = node.hasInput(2) ? try node.tensor(2) : nil
        let trailing = axis == x.rank - 1
        let normalized = Array(x.shape[axis...])
        let extent = normalized.reduce(1, *)
        let flat = trailing ? x : x.reshaped(to: Array(x.shape[..<axis]) + [extent])
        var y: Tensor
        // Scale and bias of the normalized axes' shape (the usual case) go into the op, which
        // applies them as it writes each row.
        let ofNormalizedShape = { (p: Tensor) in p.shape.drop { $0 == 1 }.elementsEqual(normalized.drop { $0 == 1 }) }
        if let scale, let bias, ofNormalizedShape(scale), ofNormalizedShape(bias) {
            y = flat.layerNorm(
                alongAxis: -1, epsilon: epsilon, scale: scale.reshaped(to: [extent]), bias: bias.reshaped(to: [extent]))
            if !trailing { y = y.reshaped(to: x.shape) }
        } else {
            y = flat.layerNorm(alongAxis: -1, epsilon: epsilon)
            if !trailing { y = y.reshaped(to: x.shape) }
            if let scale { y = Tensor.binary(.multiply, y, scale, at: nil) }
            if let bias { y = Tensor.binary(.add, y, bias, at: nil) }
        }
        var results = [try node.output(y, type)]
        if node.node.outputs.count > 1 {
            let axes = Array(axis..<x.rank)
            let mean = x.mean(alongAxes: axes, keepRank: true)
            let centered = Tensor.binary(.subtract, x, mean, at: nil)
            let variance = (centered * centered).mean(alongAxes: axes, keepRank: true)
            results.append(try node.output(mean, type))
            results.append(try node.output((variance + epsilon).rsqrt(), type))
        }
        return results
    }

    /// `CumSum` (and `CumProd` with `product`): a scan along the axis given as input 1, `exclusive`
    /// shifting it by one (the identity first), `reverse` running it from the end.
    static func scan(_ node: ONNXNodeContext, product: Bool) throws(ModelError) -> [ONNXValue] {
        var x = try node.tensor(0)
        let axisValues = try node.ints(input: 1)
        guard axisValues.count == 1 else { throw node.error("axis must hold one value") }
        let axis = try axis(node, axisValues[0], rank: x.rank)
        let reverse = try node.int("reverse", default: 0) != 0
        let exclusive = try node.int("exclusive", default: 0) != 0
        if reverse { x = x.reversed(alongAxes: axis) }
        var y = product ? x.cumulativeProduct(alongAxis: axis) : x.cumulativeSum(alongAxis: axis)
        if exclusive, x.shape[axis] > 0 {
            var sizes = [(before: Int, after: Int)](repeating: (0, 0), count: x.rank)
            sizes[axis] = (1, 0)
            y = y.padded(forSizes: sizes, with: product ? 1 : 0).slice(alongAxis: axis, start: 0, count: x.shape[axis])
        }
        if reverse { y = y.reversed(alongAxes: axis) }
        return [try node.output(y, try node.type(0))]
    }

    /// `TopK` along any axis, largest or smallest, as values and `int64` indices.
    static func topK(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        var x = try node.tensor(0)
        let type = try node.type(0)
        let axis = try axis(node, try node.int("axis", default: -1), rank: x.rank)
        let k: Int
        if node.opset >= 10 {
            let values = try node.ints(input: 1)
            guard values.count == 1 else { throw node.error("K must hold one value") }
            k = values[0]
        } else {
            guard let attribute = try node.int("k") else { throw node.error("has no k", .invalidModel) }
            k = attribute
        }
        guard k >= 0, k <= x.shape[axis] else { throw node.error("k = \(k) is outside 0...\(x.shape[axis])") }
        let largestFlag = try node.int("largest", default: 1)
        let largest = node.opset < 11 || largestFlag != 0
        let last = x.rank - 1
        var permutation = Array(0..<x.rank)
        permutation.swapAt(axis, last)
        if axis != last { x = x.transposed(permutation: permutation) }
        if !largest { x = -x }
        var (values, indices) = x.topK(k)
        if !largest { values = -values }
        if axis != last {
            values = values.transposed(permutation: permutation)
            indices = indices.transposed(permutation: permutation)
        }
        return [try node.output(values, type), try node.output(indices, .int64)]
    }

    /// `ArgMax`/`ArgMin`, the first extreme or (`select_last_index`) the last.
    static func argExtreme(_ node: ONNXNodeContext, largest: Bool) throws(ModelError) -> [ONNXValue] {
        var x = try node.tensor(0)
        let axis = try axis(node, try node.int("axis", default: 0), rank: x.rank)
        let keep = try node.int("keepdims", default: 1) != 0
        let last = try node.int("select_last_index", default: 0) != 0
        if last { x = x.reversed(alongAxes: axis) }
        var indices = largest ? x.argmax(alongAxis: axis, keepRank: keep) : x.argmin(alongAxis: axis, keepRank: keep)
        if last {
            indices = Tensor.binary(.subtract, Tensor.scalar(Double(x.shape[axis] - 1), .int32), indices, at: nil)
        }
        return [try node.output(indices, .int64)]
    }
}
