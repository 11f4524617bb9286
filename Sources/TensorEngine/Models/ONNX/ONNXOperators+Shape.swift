/// ONNX operators that describe or re-describe shapes: `Shape`, `Size`, `Reshape`, `Flatten`,
/// `Squeeze`, `Unsqueeze`, `Transpose`, `Expand`, `Tile`, `Identity`, `Dropout`, and the sources
/// `Constant`, `ConstantOfShape`, `Range`. On host constants they fold; on tensors they record
/// the engine's views and copies.
extension ONNXOperators {
    static let shape: [String: ONNXOperator] = [
        "Shape": ONNXOperator(lower: shapeOf),
        "Size": ONNXOperator { node throws(ModelError) in
            [
                .constant(
                    ONNXConstant(
                        dataType: .int64, shape: [], values: .integers([Int64(try node.value(0).shape.reduce(1, *))])))
            ]
        },
        "Reshape": ONNXOperator(since: 5, lower: reshape),
        "Flatten": ONNXOperator(lower: flatten),
        "Squeeze": ONNXOperator(lower: squeeze),
        "Unsqueeze": ONNXOperator(lower: unsqueeze),
        "Transpose": ONNXOperator(lower: transpose),
        "Expand": ONNXOperator(since: 8, lower: expand),
        "Tile": ONNXOperator(since: 6, lower: tile),
        "Identity": ONNXOperator { node throws(ModelError) in [try node.value(0)] },
        "Dropout": ONNXOperator(lower: dropout),
        "Constant": ONNXOperator(lower: constant),
        "ConstantOfShape": ONNXOperator(since: 9, lower: constantOfShape),
        "Range": ONNXOperator(since: 11, lower: range),
    ]

    /// A value re-described in a new shape of the same element count.
    static func reshaped(_ node: ONNXNodeContext, _ value: ONNXValue, to shape: [Int]) throws(ModelError) -> ONNXValue {
        switch value {
        case .constant(var constant):
            guard Shape.elementCount(shape) == constant.count else {
                throw node.error("cannot reshape \(describe(constant.shape)) to \(describe(shape))")
            }
            constant.shape = shape
            return .constant(constant)
        case .tensor(let tensor, let type):
            return try node.output(tensor.shape == shape ? tensor : tensor.reshaped(to: shape), type)
        }
    }

    /// `Shape` (with `start` and `end` from opset 15).
    static func shapeOf(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let shape = try node.value(0).shape.map { Int64($0) }
        let rank = shape.count
        func clampAxis(_ axis: Int) -> Int { Swift.min(Swift.max(axis < 0 ? axis + rank : axis, 0), rank) }
        let start = clampAxis(try node.int("start", default: 0))
        let end = clampAxis(try node.int("end", default: rank))
        return [.constant(.integers(start < end ? Array(shape[start..<end]) : []))]
    }

    /// `Reshape`: `0` copies the input's size (unless `allowzero`), `-1` is inferred.
    static func reshape(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let requested = try node.ints(input: 1)
        let allowZero = try node.int("allowzero", default: 0) != 0
        var shape: [Int] = []
        var inferred: Int?
        for (axis, size) in requested.enumerated() {
            if size == 0 && !allowZero {
                guard axis < input.shape.count else {
                    throw node.error("size 0 at axis \(axis) copies an axis the input lacks")
                }
                shape.append(input.shape[axis])
            } else if size == -1 {
                guard inferred == nil else { throw node.error("shape \(requested) has more than one -1") }
                inferred = axis
                shape.append(1)
            } else {
                guard size >= 0 else { throw node.error("shape \(requested) has the negative size \(size)") }
                shape.append(size)
            }
        }
        let count = input.shape.reduce(1, *)
        if let inferred {
            guard let known = Shape.elementCount(shape), known > 0, count % known == 0 else {
                throw node.error("cannot infer the -1 of \(requested) for \(count) elements")
            }
            shape[inferred] = count / known
        }
        return [try reshaped(node, input, to: shape)]
    }

    static func flatten(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let rank = input.shape.count
        var axis = try node.int("axis", default: 1)
        if axis < 0 { axis += rank }
        guard (0...rank).contains(axis) else { throw node.error("axis \(axis) is out of range for rank \(rank)") }
        let shape = [input.shape[..<axis].reduce(1, *), input.shape[axis...].reduce(1, *)]
        return [try reshaped(node, input, to: shape)]
    }

    /// The axes a node names, from its attribute before `inputVersion` and its input from then on.
    static func axesArgument(_ node: ONNXNodeContext, inputFrom inputVersion: Int, index: Int = 1) throws(ModelError)
        -> [Int]?
    {
        if node.opset >= inputVersion { return node.hasInput(index) ? try node.ints(input: index) : nil }
        return try node.ints("axes")
    }

    static func normalized(_ node: ONNXNodeContext, axes: [Int], rank: Int) throws(ModelError) -> [Int] {
        var result: [Int] = []
        for axis in axes {
            let normalized = axis < 0 ? axis + rank : axis
            guard (0..<rank).contains(normalized), !result.contains(normalized) else {
                throw node.error("axes \(axes) are out of range or repeated for rank \(rank)")
            }
            result.append(normalized)
        }
        return result.sorted()
    }

    static func squeeze(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let shape = input.shape
        let axes =
            try axesArgument(node, inputFrom: 13).map { axes throws(ModelError) in
                try normalized(node, axes: axes, rank: shape.count)
            } ?? shape.indices.filter { shape[$0] == 1 }
        for axis in axes where shape[axis] != 1 {
            throw node.error("cannot squeeze axis \(axis) of size \(shape[axis])")
        }
        let result = shape.indices.filter { !axes.contains($0) }.map { shape[$0] }
        return [try reshaped(node, input, to: result)]
    }

    static func unsqueeze(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        guard let given = try axesArgument(node, inputFrom: 13) else { throw node.error("has no axes", .invalidModel) }
        let rank = input.shape.count + given.count
        let axes = try normalized(node, axes: given, rank: rank)
        var shape: [Int] = []
        var source = input.shape.makeIterator()
        for axis in 0..<rank { shape.append(axes.contains(axis) ? 1 : (source.next() ?? 1)) }
        return [try reshaped(node, input, to: shape)]
    }

    static func transpose(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let rank = input.shape.count
        let permutation = try node.ints("perm") ?? Array((0..<rank).reversed())
        guard permutation.sorted() == Array(0..<rank) else {
            throw node.error("perm \(permutation) is not a permutation of \(rank) axes")
        }
        if case .constant(let constant) = input, constant.count <= ONNXConstant.hostElementLimit {
            let indices = ONNXHost.permutationIndices(constant.shape, permutation)
            return [.constant(ONNXHost.pick(constant, indices, shape: permutation.map { constant.shape[$0] }))]
        }
        return [try node.output(try node.tensor(0).transposed(permutation: permutation), input.dataType)]
    }

    /// `Expand`: broadcasts the input and the requested shape together (either may have 1s).
    static func expand(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let requested = try node.ints(input: 1)
        guard let shape = Op.broadcastShape(input.shape, requested) else {
            throw node.error("cannot expand \(describe(input.shape)) to \(describe(requested))")
        }
        guard let count = Shape.elementCount(shape) else { throw node.error("cannot expand to \(describe(requested)): too many elements") }
        if case .constant(let constant) = input, count <= ONNXConstant.hostElementLimit {
            return [
                .constant(ONNXHost.pick(constant, ONNXHost.broadcastMap(from: constant.shape, to: shape), shape: shape))
            ]
        }
        let tensor = try node.tensor(0)
        let ranked =
            tensor.rank < shape.count
            ? tensor.reshaped(to: [Int](repeating: 1, count: shape.count - tensor.rank) + tensor.shape) : tensor
        return [try node.output(ranked.broadcastIfNeeded(to: shape, at: nil), input.dataType)]
    }

    static func tile(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let repeats = try node.ints(input: 1)
        return [try node.output(try node.tensor(0).tiled(multiples: repeats), try node.type(0))]
    }

    /// `Dropout` at inference: the input, and a mask of `true`s when asked for.
    static func dropout(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        if node.hasInput(2), try node.constant(2).booleans.contains(true) {
            throw node.error(
                "training-mode Dropout (random masks) is not supported; inference ignores it", .unsupportedOperators)
        }
        guard node.node.outputs.count > 1 else { return [input] }
        let mask = Tensor.scalar(1, .bool).broadcastIfNeeded(to: input.shape, at: nil)
        return [input, try node.output(mask.rank == input.shape.count ? mask : mask.reshaped(to: input.shape), .bool)]
    }

    /// `Constant`: one of `value`, `value_float(s)`, `value_int(s)`.
    static func constant(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        guard let name = node.attributeNames.first, let attribute = node.attributeValue(name) else {
            throw node.error("has no value attribute", .invalidModel)
        }
        switch name {
        case "value":
            guard let tensor = attribute.tensor else { throw node.error("'value' holds no tensor", .invalidModel) }
            return [.constant(try node.constant(of: tensor))]
        case "value_float":
            return [.constant(ONNXConstant(dataType: .float, shape: [], values: .reals([Double(attribute.float)])))]
        case "value_floats":
            return [
                .constant(
                    ONNXConstant(
                        dataType: .float, shape: [attribute.floats.count],
                        values: .reals(attribute.floats.map { Double($0) })))
            ]
        case "value_int":
            return [.constant(ONNXConstant(dataType: .int64, shape: [], values: .integers([attribute.int])))]
        case "value_ints": return [.constant(.integers(attribute.ints))]
        default:
            throw node.error("value attribute '\(name)' (strings, sparse tensors) is not supported", .unsupportedType)
        }
    }

    static func constantOfShape(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let shape = try node.ints(input: 0)
        guard shape.allSatisfy({ $0 >= 0 }) else { throw node.error("shape \(shape) has a negative size") }
        var fill = ONNXConstant(dataType: .float, shape: [1], values: .reals([0]))
        if let tensor = try node.tensorAttribute("value") {
            fill = try node.constant(of: tensor)
            guard fill.count == 1 else {
                throw node.error("'value' holds \(fill.count) elements, not one", .invalidModel)
            }
        }
        guard let count = Shape.elementCount(shape) else { throw node.error("shape \(shape) is too large") }
        if count <= ONNXConstant.hostElementLimit {
            return [.constant(ONNXHost.pick(fill, [Int](repeating: 0, count: count), shape: shape))]
        }
        // Materialized, not a broadcast view: such fills are weights (ONNX's light models), which
        // kernels would otherwise copy out of the view on every run.
        var one = fill
        one.shape = []
        let scalar = try node.output(try one.tensor(), fill.dataType)
        guard case .tensor(let tensor, _) = scalar else { return [scalar] }
        let filled = Tensor.record(.contiguous, [tensor.broadcastIfNeeded(to: shape, at: nil)], at: nil)
        do { try Tensor.evaluateNow([filled]) } catch { throw node.error("cannot fill \(describe(shape)): \(error.message)") }
        return [try node.output(filled, fill.dataType)]
    }

    /// `Range(start, limit, delta)`: `max(ceil((limit - start) / delta), 0)` elements.
    static func range(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let (start, limit, delta) = (try node.constant(0), try node.constant(1), try node.constant(2))
        guard start.count == 1, limit.count == 1, delta.count == 1 else {
            throw node.error("start, limit and delta must be scalars")
        }
        let type = start.dataType
        let constant: ONNXConstant
        if type.isInteger {
            let (s, l, d) = (start.integers[0], limit.integers[0], delta.integers[0])
            guard d != 0 else { throw node.error("delta is 0") }
            let count = try rangeCount(node, (Double(l) - Double(s)) / Double(d))
            constant = ONNXConstant(
                dataType: type, shape: [count], values: .integers((0..<count).map { s &+ Int64($0) &* d }))
        } else {
            let (s, l, d) = (start.reals[0], limit.reals[0], delta.reals[0])
            guard d != 0, s.isFinite, l.isFinite, d.isFinite else {
                throw node.error("start, limit and delta must be finite, delta non-zero")
            }
            let count = try rangeCount(node, (l - s) / d)
            constant = ONNXConstant(
                dataType: type, shape: [count], values: .reals((0..<count).map { s + Double($0) * d })
            ).cast(to: type)
        }
        guard constant.count > ONNXConstant.hostElementLimit else { return [.constant(constant)] }
        // Large ranges go to the engine as tensors; the limit keeps the host array bounded.
        do { return [.tensor(try constant.tensor(), type)] } catch { throw node.error(error.message, error.kind) }
    }

    /// The element count of a range, `ceil(span / delta)` clamped at 0, checked against memory.
    private static func rangeCount(_ node: ONNXNodeContext, _ steps: Double) throws(ModelError) -> Int {
        let rounded = steps.rounded(.up)
        guard rounded.isFinite || rounded < 0, rounded <= Double(Tensor.maximumByteCount / 8) else {
            throw node.error("a range of \(steps) elements is too large")
        }
        return rounded.isNaN || rounded < 0 ? 0 : Int(rounded)
    }
}
