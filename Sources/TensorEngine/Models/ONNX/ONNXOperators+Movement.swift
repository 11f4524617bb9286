/// ONNX operators that move elements: `Concat`, `Split`, `Slice`, `Gather`, `GatherElements`
/// (`Pad` is in `ONNXOperators+Pad.swift`). Host constants fold: shape vectors are concatenated,
/// gathered and sliced there.
extension ONNXOperators {
    static let movement: [String: ONNXOperator] = [
        "Concat": ONNXOperator(since: 4, lower: concat),
        "Split": ONNXOperator(since: 2, lower: split),
        "Slice": ONNXOperator(lower: slice),
        "Gather": ONNXOperator(lower: gather),
        "GatherElements": ONNXOperator(since: 11, lower: gatherElements),
    ]

    static func axis(_ node: ONNXNodeContext, _ axis: Int, rank: Int) throws(ModelError) -> Int {
        let normalized = axis < 0 ? axis + rank : axis
        guard (0..<rank).contains(normalized) else { throw node.error("axis \(axis) is out of range for rank \(rank)") }
        return normalized
    }

    static func concat(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let values = try (0..<node.inputCount).map { index throws(ModelError) in try node.value(index) }
        guard let first = values.first else { throw node.error("needs at least one input", .invalidModel) }
        let axis = try axis(node, try node.int("axis", default: 0), rank: first.shape.count)
        if values.count == 1 { return [first] }
        let constants = values.compactMap { value -> ONNXConstant? in
            if case .constant(let constant) = value { return constant }
            return nil
        }
        if constants.count == values.count, constants.allSatisfy({ $0.shape.count == first.shape.count }),
            constants.reduce(0, { $0 + $1.count }) <= ONNXConstant.hostElementLimit
        {
            return [.constant(try concatenate(node, constants, axis: axis))]
        }
        let tensors = try (0..<node.inputCount).map { index throws(ModelError) in try node.tensor(index) }
        // A state's cache extended by this step's keys or values grows in place.
        if let extended = node.node.inputs.first, node.state.growableInputs.contains(extended) {
            return [try node.output(tensors[0].appending(Array(tensors.dropFirst()), alongAxis: axis), first.dataType)]
        }
        return [try node.output(Tensor(concatenating: tensors, alongAxis: axis), first.dataType)]
    }

    private static func concatenate(_ node: ONNXNodeContext, _ parts: [ONNXConstant], axis: Int) throws(ModelError)
        -> ONNXConstant
    {
        var shape = parts[0].shape
        for part in parts.dropFirst() {
            for dim in shape.indices where dim != axis && part.shape[dim] != shape[dim] {
                throw node.error(
                    "cannot concatenate \(describe(parts[0].shape)) and \(describe(part.shape)) along axis \(axis)")
            }
        }
        shape[axis] = parts.reduce(0) { $0 + $1.shape[axis] }
        let outer = shape[..<axis].reduce(1, *)
        var integers: [Int64] = []
        var reals: [Double] = []
        var booleans: [Bool] = []
        let family = parts[0].values
        for block in 0..<outer {
            for part in parts {
                let inner = part.shape[axis...].reduce(1, *)
                let range = (block * inner)..<((block + 1) * inner)
                switch family {
                case .integers: integers += part.integers[range]
                case .reals: reals += part.reals[range]
                case .booleans: booleans += part.booleans[range]
                }
            }
        }
        let values: ONNXConstant.Values =
            switch family {
            case .integers: .integers(integers)
            case .reals: .reals(reals)
            case .booleans: .booleans(booleans)
            }
        return ONNXConstant(dataType: parts[0].dataType, shape: shape, values: values)
    }

    /// `Split`: sizes from the `split` attribute (before 13) or input, else equal parts (from 18,
    /// `num_outputs` parts of `ceil(size / n)`, the last smaller).
    static func split(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let axis = try axis(node, try node.int("axis", default: 0), rank: input.shape.count)
        let size = input.shape[axis]
        let outputs = node.node.outputs.count
        var sizes: [Int]
        if node.opset >= 13, node.hasInput(1) {
            sizes = try node.ints(input: 1)
        } else if node.opset < 13, let attribute = try node.ints("split") {
            sizes = attribute
        } else if let parts = try node.int("num_outputs"), node.opset >= 18 {
            guard parts > 0, parts == outputs else {
                throw node.error("num_outputs \(parts) must be positive and the node's \(outputs) outputs")
            }
            let chunk = size / parts + (size % parts == 0 ? 0 : 1)
            sizes = (0..<parts).map { Swift.max(0, Swift.min(chunk, size - $0 * chunk)) }
        } else {
            guard outputs > 0, size % outputs == 0 else {
                throw node.error("axis \(axis) of size \(size) does not split into \(outputs) equal parts")
            }
            sizes = [Int](repeating: size / outputs, count: outputs)
        }
        guard sizes.count == outputs, sizes.allSatisfy({ $0 >= 0 }), Tensor.checkedSum(sizes) == size else {
            throw node.error("split sizes \(sizes) do not add up to axis \(axis)'s size \(size)")
        }
        var results: [ONNXValue] = []
        var start = 0
        for part in sizes {
            var dimensions = input.shape.map { SliceDimension(start: 0, count: $0, step: 1) }
            dimensions[axis] = SliceDimension(start: start, count: part, step: 1)
            results.append(try sliced(node, input, dimensions))
            start += part
        }
        return results
    }

    /// A strided slice of a value (on the host for constants).
    static func sliced(_ node: ONNXNodeContext, _ value: ONNXValue, _ dimensions: [SliceDimension]) throws(ModelError)
        -> ONNXValue
    {
        let shape = dimensions.map(\.count)
        switch value {
        case .constant(let constant):
            return .constant(ONNXHost.pick(constant, ONNXHost.sliceIndices(constant.shape, dimensions), shape: shape))
        case .tensor(let tensor, let type):
            if dimensions.allSatisfy({ $0.start == 0 && $0.step == 1 }) && shape == tensor.shape { return value }
            return try node.output(Tensor.record(.slice(dimensions), [tensor], at: nil), type)
        }
    }

    /// `Slice`: starts, ends, axes and steps as attributes before opset 10, inputs from it.
    /// Bounds clamp as ONNX says (`INT64_MAX` means "to the end"); negative steps walk backwards.
    static func slice(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let shape = input.shape
        let starts: [Int64]
        let ends: [Int64]
        let axesGiven: [Int64]?
        let steps: [Int64]?
        if node.opset < 10 {
            guard let s = try node.int64s("starts"), let e = try node.int64s("ends") else {
                throw node.error("needs starts and ends", .invalidModel)
            }
            (starts, ends, axesGiven, steps) = (s, e, try node.int64s("axes"), nil)
        } else {
            starts = try node.integers(1)
            ends = try node.integers(2)
            axesGiven = node.hasInput(3) ? try node.integers(3) : nil
            steps = node.hasInput(4) ? try node.integers(4) : nil
        }
        let axes = try (axesGiven ?? (0..<Int64(starts.count)).map { $0 }).map { axis throws(ModelError) in
            try Self.axis(node, Int(clamping: axis), rank: shape.count)
        }
        guard starts.count == ends.count, axes.count == starts.count, steps.map({ $0.count == starts.count }) ?? true,
            Set(axes).count == axes.count
        else {
            throw node.error("starts, ends, axes and steps must have one entry per distinct axis")
        }
        var dimensions = shape.map { SliceDimension(start: 0, count: $0, step: 1) }
        for (index, axis) in axes.enumerated() {
            let size = Int64(shape[axis])
            let step = Swift.max(Swift.min(steps?[index] ?? 1, 1 << 40), -(1 << 40))
            guard step != 0 else { throw node.error("step 0 on axis \(axis)") }
            var start = starts[index]
            var end = ends[index]
            if start < 0 { start = start &+ size }
            if end < 0 { end = end &+ size }
            if step > 0 {
                start = Swift.min(Swift.max(start, 0), size)
                end = Swift.min(Swift.max(end, 0), size)
            } else {
                start = Swift.min(Swift.max(start, 0), size - 1)
                end = Swift.min(Swift.max(end, -1), size - 1)
            }
            let span = end - start
            let count =
                span == 0 || (span > 0) != (step > 0) ? 0 : (Swift.abs(span) + Swift.abs(step) - 1) / Swift.abs(step)
            dimensions[axis] = SliceDimension(
                start: count == 0 ? 0 : Int(start), count: Int(count), step: Int(clamping: step))
        }
        return [try sliced(node, input, dimensions)]
    }

    /// Indices with negative entries counted from the end of an axis of `size`.
    static func wrappedIndices(_ node: ONNXNodeContext, index: Int, size: Int) throws(ModelError) -> Tensor {
        switch try node.value(index) {
        case .constant(let constant):
            var wrapped = constant
            wrapped.values = .integers(constant.integers.map { $0 < 0 ? $0 + Int64(size) : $0 })
            wrapped.dataType = .int64
            do { return try wrapped.tensor() } catch { throw node.error(error.message, error.kind) }
        case .tensor(let tensor, _):
            let indices = ScalarTypeSet.integers.contains(tensor.dtype) ? tensor : tensor.converted(to: .int64)
            let size = Tensor.scalar(Double(size), indices.dtype)
            return indices.replacing(with: Tensor.binary(.add, indices, size, at: nil), where: indices .< 0)
        }
    }

    static func gather(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let data = try node.value(0)
        let axis = try axis(node, try node.int("axis", default: 0), rank: data.shape.count)
        if case .constant(let table) = data, case .constant(let picks) = try node.value(1) {
            let size = Int64(table.shape[axis])
            let indices = picks.integers.map { $0 < 0 ? $0 + size : $0 }
            guard indices.allSatisfy({ (0..<size).contains($0) }) else {
                throw node.error("indices \(picks.integers) are out of range for axis \(axis) of size \(size)")
            }
            let outer = table.shape[..<axis].reduce(1, *)
            let inner = table.shape[(axis + 1)...].reduce(1, *)
            guard outer * indices.count * inner <= ONNXConstant.hostElementLimit else {
                let gathered = try node.tensor(0).gathering(atIndices: try wrappedIndices(node, index: 1, size: Int(size)), alongAxis: axis)
                return [try node.output(gathered, data.dataType)]
            }
            var positions: [Int] = []
            for block in 0..<outer {
                for index in indices {
                    let base = (block * Int(size) + Int(index)) * inner
                    positions += base..<(base + inner)
                }
            }
            let shape = Array(table.shape[..<axis]) + picks.shape + Array(table.shape[(axis + 1)...])
            return [.constant(ONNXHost.pick(table, positions, shape: shape))]
        }
        let indices = try wrappedIndices(node, index: 1, size: data.shape[axis])
        return [try node.output(try node.tensor(0).gathering(atIndices: indices, alongAxis: axis), data.dataType)]
    }

    /// `GatherElements`: `out[i][j] = data[indices[i][j]][j]` (axis 0), as a gather on the
    /// flattened data at positions computed from the indices.
    static func gatherElements(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let data = try node.tensor(0)
        let rank = data.rank
        let axis = try axis(node, try node.int("axis", default: 0), rank: rank)
        let indexShape = try node.value(1).shape
        guard indexShape.count == rank else { throw node.error("indices must have the data's rank \(rank)") }
        let indices = try wrappedIndices(node, index: 1, size: data.shape[axis])
        guard let result = data.gatheringElements(atIndices: indices, alongAxis: axis) else {
            throw node.error("the data is too large to index in 32 bits")
        }
        return [try node.output(result, try node.type(0))]
    }
}
