extension OpenBLASBackend {
    func cast(_ input: Value, to type: ScalarType, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "cast")
        let (source, owner) = try contiguous(input)
        let n = output.elementCount
        func convert<S: CastScalar, D: CastScalar>(_: S.Type, _: D.Type) {
            let x = source.assumingMemoryBound(to: S.self)
            let y = buffer.elements(as: D.self)
            Parallel.forEachRange(n, parts: Parallel.workerCount(forElements: n)) { range in
                for i in range { y[i] = D(wide: x[i].wide) }
            }
        }
        func from<S: CastScalar>(_ source: S.Type) {
            switch type {
            case .float32: convert(S.self, Float.self)
            case .float16: convert(S.self, Float16.self)
            case .float64: convert(S.self, Double.self)
            case .int32: convert(S.self, Int32.self)
            case .int64: convert(S.self, Int64.self)
            case .bool: convert(S.self, Bool.self)
            }
        }
        switch input.scalarType {
        case .float32: from(Float.self)
        case .float16: from(Float16.self)
        case .float64: from(Double.self)
        case .int32: from(Int32.self)
        case .int64: from(Int64.self)
        case .bool: from(Bool.self)
        }
        withExtendedLifetime(owner) {}
        return result
    }

    /// Fills `count` elements of a buffer with one value converted to the buffer's type.
    static func fill(_ pointer: UnsafeMutableRawPointer, _ type: ScalarType, _ value: Double, count: Int) {
        func fill<T: CastScalar>(_: T.Type) {
            pointer.assumingMemoryBound(to: T.self).update(repeating: T(wide: .float(value)), count: count)
        }
        switch type {
        case .float32: fill(Float.self)
        case .float16: fill(Float16.self)
        case .float64: fill(Double.self)
        case .int32: fill(Int32.self)
        case .int64: fill(Int64.self)
        case .bool: fill(Bool.self)
        }
    }

    func pad(_ padding: [Padding], _ value: Double, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "pad")
        let size = output.scalarType.byteCount
        Self.fill(buffer.pointer, output.scalarType, value, count: output.elementCount)
        guard input.layout.elementCount > 0 else { return result }
        let (source, owner) = try contiguous(input)
        let interior = result.layout.sliced(zip(padding, input.shape).map { SliceDimension(start: $0.before, count: $1, step: 1) })
        let rowLength = input.shape.last ?? 1
        let rowStarts = Layout(shape: Array(interior.shape.dropLast()), strides: Array(interior.strides.dropLast()), offset: interior.offset).elementOffsets()
        for (row, start) in rowStarts.enumerated() {
            (buffer.pointer + start * size).copyMemory(from: source + row * rowLength * size, byteCount: rowLength * size)
        }
        withExtendedLifetime(owner) {}
        return result
    }

    /// The operands side by side along `axis`. The result is a sequence of runs, one per operand
    /// within each index of the axes before `axis`; with few runs, the cores copy disjoint byte
    /// ranges of the result (a CNN's concatenation of two branches is two runs of a megabyte).
    func concat(
        axis: Int, _ inputs: [Value], _ output: TensorSignature, into placement: OutputPlacement? = nil
    ) throws(TensorError) -> Value {
        let size = output.scalarType.byteCount
        let outer = output.shape[..<axis].reduce(1, *)
        let inner = output.shape[(axis + 1)...].reduce(1, *)
        if let placement, outer == 1, let (result, start) = placement.value(output) {
            // One run per operand: those written in place already are left; the others copied.
            var offset = placement.elementOffset
            for input in inputs {
                let count = input.layout.elementCount
                let inPlace =
                    input.buffer === placement.buffer && input.layout.offset == offset
                    && input.layout.isRowMajor(shape: input.shape, from: offset)
                if !inPlace, count > 0 {
                    StridedCopy.copy(
                        try Self.pointer(input), input.layout, to: start + (offset - placement.elementOffset) * size,
                        elementSize: size)
                }
                offset += count
            }
            return result
        }
        let (result, buffer) = try allocate(output, for: "concat")
        var sources: [(pointer: UnsafeRawPointer, run: Int)] = []
        var owners: [Value] = []
        for input in inputs {
            guard input.layout.elementCount > 0 else { continue }
            let (source, owner) = try contiguous(input)
            sources.append((UnsafeRawPointer(source), input.shape[axis] * inner * size))
            owners.append(owner)
        }
        let parts = Parallel.workerCount(forElements: output.elementCount)
        if parts > 1, outer * sources.count <= Self.parallelConcatRuns {
            // The runs in the result's order, then each part's bytes of them.
            let runs = (0..<outer).flatMap { o in sources.map { (source: $0.pointer + o * $0.run, bytes: $0.run) } }
            Parallel.forEachRange(output.elementCount * size, parts: parts, alignment: 64) { range in
                var offset = 0
                for run in runs {
                    let low = Swift.max(range.lowerBound, offset)
                    let high = Swift.min(range.upperBound, offset + run.bytes)
                    if low < high {
                        (buffer.pointer + low).copyMemory(from: run.source + (low - offset), byteCount: high - low)
                    }
                    offset += run.bytes
                    if offset >= range.upperBound { break }
                }
            }
        } else {
            var target = buffer.pointer
            for o in 0..<outer {
                for source in sources {
                    target.copyMemory(from: source.pointer + o * source.run, byteCount: source.run)
                    target += source.run
                }
            }
        }
        withExtendedLifetime(owners) {}
        return result
    }

    /// Runs of a concatenation above which the cores do not split it by bytes (each part walks
    /// the list of runs).
    static let parallelConcatRuns = 4096

    /// A concatenation into growable storage: written past the first operand in its buffer when
    /// ``AppendPlan`` says so, else into a new buffer with room to grow.
    func append(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let plan = try AppendPlan(axis: axis, inputs: inputs)
        let buffer: HostBuffer
        if plan.inPlace {
            buffer = try Self.hostBuffer(inputs[0], op: "append")
        } else {
            buffer = try HostBuffer(
                byteCount: plan.newBufferBytes(output.scalarType), op: "append", growth: plan.newCursor())
        }
        let size = output.scalarType.byteCount
        let capacityShape = plan.geometry.capacityShape
        let outer = capacityShape[..<axis].reduce(1, *)
        let inner = capacityShape[(axis + 1)...].reduce(1, *)
        let capacity = capacityShape[axis]
        for (operand, destination) in plan.writes {
            let input = inputs[operand]
            let (source, owner) = try contiguous(input)
            let run = input.shape[axis] * inner * size
            // The destination's offset is its start along the axis, times the inner size.
            for o in 0..<outer {
                (buffer.pointer + (o * capacity * inner + destination.offset) * size).copyMemory(
                    from: source + o * run, byteCount: run)
            }
            withExtendedLifetime(owner) {}
        }
        return Value(buffer: buffer, layout: plan.geometry.result, scalarType: output.scalarType)
    }

    func gather(axis: Int, _ input: Value, _ indices: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "gather")
        let size = output.scalarType.byteCount
        let (indexPointer, indexOwner) = try contiguous(indices)
        let count = indices.layout.elementCount
        // Int32 or Int64 indices, read as `Int` once.
        let chosen: [Int] = switch indices.scalarType {
        case .int64: UnsafeBufferPointer(start: indexPointer.assumingMemoryBound(to: Int64.self), count: count).map { Int($0) }
        case .int32, .float32, .float16, .float64, .bool:
            UnsafeBufferPointer(start: indexPointer.assumingMemoryBound(to: Int32.self), count: count).map { Int($0) }
        }
        let extent = input.shape[axis]
        let outer = input.shape[..<axis].reduce(1, *)
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        guard outer * inner > 0, count > 0 else { return result }
        if let bad = chosen.first(where: { !(0..<extent).contains($0) }) {
            throw TensorError(.indexOutOfRange, op: "gather", operandShapes: [input.shape, indices.shape], message: "index \(bad) is out of range for axis \(axis) of size \(extent)")
        }
        let (source, owner) = try contiguous(input)
        let run = inner * size
        Parallel.forEachRange(outer * count, parts: Parallel.workerCount(forElements: outer * count * inner)) { range in
            for line in range {
                let (o, j) = (line / count, line % count)
                (buffer.pointer + line * run).copyMemory(from: source + (o * extent + chosen[j]) * run, byteCount: run)
            }
        }
        withExtendedLifetime((owner, indexOwner)) {}
        return result
    }
}
