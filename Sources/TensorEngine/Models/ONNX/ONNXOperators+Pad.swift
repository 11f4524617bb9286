/// ONNX's `Pad`: constant, reflect, edge and wrap modes, pads as an attribute (before opset 11) or
/// an input, negative pads cropping.
extension ONNXOperators {
    static let padding: [String: ONNXOperator] = [
        "Pad": ONNXOperator(since: 2, lower: pad)
    ]

    /// `Pad`: `constant`, `reflect` and `edge` modes; negative pads crop.
    static func pad(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let rank = input.shape.count
        var pads: [Int]
        var value: Double = 0
        var axes = Array(0..<rank)
        if node.opset < 11 {
            let named = try node.ints("pads")
            let older = try node.ints("paddings")
            guard let attribute = named ?? older else { throw node.error("has no pads", .invalidModel) }
            pads = attribute
            value = Double(try node.float("value", default: 0))
        } else {
            pads = try node.ints(input: 1)
            if node.hasInput(2) {
                let fill = try node.constant(2)
                value = fill.count > 0 ? fill.reals[0] : 0
            }
            if node.opset >= 18, node.hasInput(3) {
                axes = try node.ints(input: 3).map { axis throws(ModelError) in try Self.axis(node, axis, rank: rank) }
            }
        }
        guard pads.count == 2 * axes.count else {
            throw node.error("pads \(pads) need two entries for each of \(axes.count) axes")
        }
        // Each padded size must exist: no overflow, and no more elements than memory holds.
        var padded: [Int] = input.shape
        for (index, axis) in axes.enumerated() {
            guard pads[index] > Int.min / 2, pads[index + axes.count] > Int.min / 2,
                let grown = Tensor.checkedSum([input.shape[axis], pads[index], pads[index + axes.count]]), grown >= 0
            else { throw node.error("pads \(pads) do not leave a valid shape for \(describe(input.shape))") }
            padded[axis] = grown
        }
        guard let total = Shape.elementCount(padded), total <= Tensor.maximumByteCount / 4 else {
            throw node.error(
                "padding \(describe(input.shape)) to \(describe(padded)) needs more memory than the machine has")
        }
        var before = [Int](repeating: 0, count: rank)
        var after = [Int](repeating: 0, count: rank)
        for (index, axis) in axes.enumerated() {
            before[axis] = pads[index]
            after[axis] = pads[index + axes.count]
        }
        var x = try node.tensor(0)
        // Crop first (negative pads), then pad what is left.
        if before.contains(where: { $0 < 0 }) || after.contains(where: { $0 < 0 }) {
            let dimensions = (0..<rank).map { axis in
                let start = Swift.max(0, -before[axis])
                return SliceDimension(
                    start: start, count: Swift.max(0, x.shape[axis] - start - Swift.max(0, -after[axis])), step: 1)
            }
            x = Tensor.record(.slice(dimensions), [x], at: nil)
        }
        let sizes = (0..<rank).map { (before: Swift.max(0, before[$0]), after: Swift.max(0, after[$0])) }
        switch try node.string("mode", default: "constant") {
        case "constant": x = x.padded(forSizes: sizes, with: Float(value))
        case "reflect": x = x.padded(forSizes: sizes, mode: .reflection)
        case "edge": x = edgePadded(x, sizes)
        case "wrap": x = wrapPadded(x, sizes)
        case let other:
            throw node.error(
                "mode '\(other)' is not supported (constant, reflect, edge and wrap are)", .unsupportedOperators)
        }
        return [try node.output(x, input.dataType)]
    }

    /// Padding that continues periodically: the last elements before, the first ones after.
    private static func wrapPadded(_ x: Tensor, _ sizes: [(before: Int, after: Int)]) -> Tensor {
        var result = x
        for (axis, size) in sizes.enumerated() where size.before > 0 || size.after > 0 {
            let extent = result.shape[axis]
            guard extent > 0 else { continue }
            func part(_ start: Int, _ count: Int) -> [Tensor] {
                // A padding longer than the axis repeats the whole axis.
                var pieces: [Tensor] = []
                var position = ((start % extent) + extent) % extent
                var left = count
                while left > 0 {
                    let take = Swift.min(left, extent - position)
                    pieces.append(result.slice(alongAxis: axis, start: position, count: take))
                    left -= take
                    position = 0
                }
                return pieces
            }
            let parts = part(-size.before, size.before) + [result] + part(0, size.after)
            result = Tensor(concatenating: parts, alongAxis: axis)
        }
        return result
    }

    /// Padding that repeats the edge element.
    static func edgePadded(_ x: Tensor, _ sizes: [(before: Int, after: Int)]) -> Tensor {
        var result = x
        for (axis, size) in sizes.enumerated() where size.before > 0 || size.after > 0 {
            let extent = result.shape[axis]
            guard extent > 0 else { continue }
            func edge(_ index: Int, _ count: Int) -> Tensor {
                var target = result.shape
                target[axis] = count
                return result.slice(alongAxis: axis, start: index, count: 1).broadcastIfNeeded(to: target, at: nil)
            }
            var parts: [Tensor] = []
            if size.before > 0 { parts.append(edge(0, size.before)) }
            parts.append(result)
            if size.after > 0 { parts.append(edge(extent - 1, size.after)) }
            result = Tensor(concatenating: parts, alongAxis: axis)
        }
        return result
    }
}
