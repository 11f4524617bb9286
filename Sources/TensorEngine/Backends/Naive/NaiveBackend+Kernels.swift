extension NaiveBackend {
    /// Offsets of the input grouped by line along `axis`, with the matching output offsets.
    func lines(
        _ name: String, axis: Int, _ input: Value, _ output: TensorSignature,
        _ body: (HostElements, HostElements, ArraySlice<Int>, ArraySlice<Int>) -> Void
    ) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: name)
        let x = try HostElements(input)
        let order = input.layout.shape.indices.filter { $0 != axis } + [axis]
        let source = input.layout.permuted(order).elementOffsets()
        let destination = result.layout.permuted(order).elementOffsets()
        let length = input.shape[axis]
        guard length > 0 else { return result }
        for start in stride(from: 0, to: source.count, by: length) {
            body(x, out, source[start..<start + length], destination[start..<start + length])
        }
        return result
    }

    /// Sums, means and products in `Double` (wrapping `Int64` for integers), extremes with NaN
    /// winning; or the first index of the extreme along the one reduced axis.
    func reduce(_ op: Op, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        guard case .reduction(let definition) = op.descriptor.semantics else {
            throw TensorError(.backendFailure, op: op.name, message: "not a reduction")
        }
        if definition.result == .index { return try indexOfExtreme(op, definition.monoid, input, output) }
        let (result, out) = try allocate(output, for: op.name)
        let x = try HostElements(input)
        let axes = op.axes
        let kept = input.shape.indices.filter { !axes.contains($0) }
        let offsets = input.layout.permuted(kept + axes).elementOffsets()
        let inner = axes.reduce(1) { $0 * input.shape[$1] }
        let monoid = definition.monoid
        for index in 0..<output.elementCount {
            let group = inner == 0 ? [] : offsets[index * inner..<(index + 1) * inner]
            if x.type.isFloatingPoint {
                let total = group.reduce(monoid.identity) { monoid.combine($0, x.double($1)) }
                out.setDouble(definition.result == .mean ? total / Double(group.count) : total, index)
            } else {
                out.setLong(group.reduce(monoid.integerIdentity(x.type)) { monoid.combine($0, x.long($1)) }, index)
            }
        }
        return result
    }

    private func indexOfExtreme(_ op: Op, _ monoid: ReductionMonoid, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: op.name)
        let x = try HostElements(input)
        let axis = op.axis
        let order = input.shape.indices.filter { $0 != axis } + [axis]
        let offsets = input.layout.permuted(order).elementOffsets()
        let length = input.shape[axis]
        for index in 0..<output.elementCount {
            var best = 0
            var bestValue = x.ordered(offsets[index * length])
            for position in 1..<Swift.max(length, 1) where !bestValue.isNaN {
                let candidate = x.ordered(offsets[index * length + position])
                // A strictly better value replaces the best one (the first extreme wins).
                if candidate.isNaN || (candidate != bestValue && (monoid == .maximum) == (candidate > bestValue)) {
                    best = position
                    bestValue = candidate
                }
            }
            out.setLong(Int64(best), index)
        }
        return result
    }

    func topK(k: Int, part: TopKOutput, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "topK")
        let x = try HostElements(input)
        let offsets = input.layout.elementOffsets()
        let length = input.shape.last ?? 0
        guard length > 0 else { return result }
        for line in 0..<(offsets.count / length) {
            let values = (0..<length).map { x.ordered(offsets[line * length + $0]) }
            // Descending; NaN above everything; ties keep the lower index first.
            let order = values.indices.sorted { i, j in
                let (a, b) = (values[i], values[j])
                if a.isNaN != b.isNaN { return a.isNaN }
                if a != b && !a.isNaN { return a > b }
                return i < j
            }
            for (rank, position) in order.prefix(k).enumerated() {
                switch part {
                case .values: out.copy(from: x, offsets[line * length + position], to: line * k + rank)
                case .indices: out.setLong(Int64(position), line * k + rank)
                }
            }
        }
        return result
    }

    func matmul(_ a: Value, _ b: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "matmul")
        let (x, y) = (try HostElements(a), try HostElements(b))
        let (aOffsets, bOffsets) = (a.layout.elementOffsets(), b.layout.elementOffsets())
        let m = a.shape[a.shape.count - 2]
        let k = a.shape[a.shape.count - 1]
        let n = b.shape[b.shape.count - 1]
        let batches = a.shape.dropLast(2).reduce(1, *)
        for batch in 0..<batches {
            for i in 0..<m {
                for j in 0..<n {
                    var total = 0.0
                    for p in 0..<k {
                        total += x.double(aOffsets[(batch * m + i) * k + p]) * y.double(bOffsets[(batch * k + p) * n + j])
                    }
                    out.setDouble(total, (batch * m + i) * n + j)
                }
            }
        }
        return result
    }

    func pad(_ padding: [Padding], _ fill: Double, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "pad")
        let x = try HostElements(input)
        for index in 0..<output.elementCount { out.setDouble(fill, index) }
        let interior = result.layout.sliced(zip(padding, input.shape).map { SliceDimension(start: $0.before, count: $1, step: 1) })
        for (source, destination) in zip(input.layout.elementOffsets(), interior.elementOffsets()) {
            out.copy(from: x, source, to: destination)
        }
        return result
    }

    func concat(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "concat")
        var start = 0
        for input in inputs {
            let x = try HostElements(input)
            var dimensions = output.shape.map { SliceDimension(start: 0, count: $0, step: 1) }
            dimensions[axis] = SliceDimension(start: start, count: input.shape[axis], step: 1)
            start += input.shape[axis]
            for (source, destination) in zip(input.layout.elementOffsets(), result.layout.sliced(dimensions).elementOffsets()) {
                out.copy(from: x, source, to: destination)
            }
        }
        return result
    }

    /// A concatenation into growable storage (``AppendPlan``): past the first operand in its
    /// buffer, or into a new buffer with room to grow.
    func append(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let plan = try AppendPlan(axis: axis, inputs: inputs)
        let buffer: HostBuffer
        if plan.inPlace {
            guard let existing = inputs[0].buffer as? HostBuffer else {
                throw TensorError(.backendFailure, op: "append", message: "a \(inputs[0].memorySpace) buffer reached naive")
            }
            buffer = existing
        } else {
            buffer = try HostBuffer(
                byteCount: plan.newBufferBytes(output.scalarType), op: "append", growth: plan.newCursor())
        }
        let out = HostElements(buffer, output.scalarType)
        for (operand, destination) in plan.writes {
            let input = inputs[operand]
            let x = try HostElements(input)
            for (source, target) in zip(input.layout.elementOffsets(), destination.elementOffsets()) {
                out.copy(from: x, source, to: target)
            }
        }
        return Value(buffer: buffer, layout: plan.geometry.result, scalarType: output.scalarType)
    }

    /// The data with the updates written where the indices say along `axis`: element `p` of the
    /// updates goes to `p` with its `axis` coordinate replaced by index `p`. Positions are taken
    /// in row-major order, so of two updates to one element the later wins.
    func scatter(
        axis: Int, _ input: Value, _ indices: Value, _ updates: Value, _ output: TensorSignature
    ) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "scatter")
        let x = try HostElements(input)
        for (index, offset) in input.layout.elementOffsets().enumerated() { out.copy(from: x, offset, to: index) }
        let chosen = try HostElements(indices)
        let values = try HostElements(updates)
        let extent = input.shape[axis]
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        let count = indices.shape[axis]
        for (position, (indexOffset, valueOffset)) in zip(indices.layout.elementOffsets(), updates.layout.elementOffsets())
            .enumerated()
        {
            let target = Int(chosen.long(indexOffset))
            guard (0..<extent).contains(target) else {
                throw TensorError(
                    .indexOutOfRange, op: "scatter", operandShapes: [input.shape, indices.shape, updates.shape],
                    message: "index \(target) is out of range for axis \(axis) of size \(extent)")
            }
            let (outer, rest) = position.quotientAndRemainder(dividingBy: count * inner)
            out.copy(from: values, valueOffset, to: (outer * extent + target) * inner + rest % inner)
        }
        return result
    }

    func gather(axis: Int, _ input: Value, _ indices: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "gather")
        let x = try HostElements(input)
        let chosen = try HostElements(indices)
        let sourceOffsets = input.layout.elementOffsets()
        let indexOffsets = indices.layout.elementOffsets()
        let outer = input.shape[..<axis].reduce(1, *)
        let extent = input.shape[axis]
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        for (j, indexOffset) in indexOffsets.enumerated() {
            let position = Int(chosen.long(indexOffset))
            guard (0..<extent).contains(position) || outer * inner == 0 else {
                throw TensorError(.indexOutOfRange, op: "gather", operandShapes: [input.shape, indices.shape], message: "index \(position) is out of range for axis \(axis) of size \(extent)")
            }
            for o in 0..<outer {
                for i in 0..<inner {
                    out.copy(from: x, sourceOffsets[(o * extent + position) * inner + i], to: (o * indexOffsets.count + j) * inner + i)
                }
            }
        }
        return result
    }
}
