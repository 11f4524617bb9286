extension OpenBLASBackend {
    func cast(_ input: Value, to type: ScalarType, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "cast")
        let (source, owner) = try contiguous(input)
        let n = output.elementCount
        func convert<S, D>(_ from: S.Type, _ to: D.Type, _ f: (S) -> D) {
            let x = source.assumingMemoryBound(to: S.self)
            let y = buffer.elements(as: D.self)
            Parallel.forEachRange(n, parts: Parallel.workerCount(forElements: n)) { range in
                for i in range { y[i] = f(x[i]) }
            }
        }
        switch (input.scalarType, type) {
        case (.float32, .float32): convert(Float.self, Float.self) { $0 }
        case (.float32, .float16): convert(Float.self, Float16.self) { Float16($0) }
        case (.float32, .int32): convert(Float.self, Int32.self) { Int32(converting: Double($0)) }
        case (.float32, .bool): convert(Float.self, Bool.self) { $0 != 0 }
        case (.float16, .float32): convert(Float16.self, Float.self) { Float($0) }
        case (.float16, .float16): convert(Float16.self, Float16.self) { $0 }
        case (.float16, .int32): convert(Float16.self, Int32.self) { Int32(converting: Double(Float($0))) }
        case (.float16, .bool): convert(Float16.self, Bool.self) { $0 != 0 }
        case (.int32, .float32): convert(Int32.self, Float.self) { Float($0) }
        case (.int32, .float16): convert(Int32.self, Float16.self) { Float16(Float($0)) }
        case (.int32, .int32): convert(Int32.self, Int32.self) { $0 }
        case (.int32, .bool): convert(Int32.self, Bool.self) { $0 != 0 }
        case (.bool, .float32): convert(Bool.self, Float.self) { $0 ? 1 : 0 }
        case (.bool, .float16): convert(Bool.self, Float16.self) { $0 ? 1 : 0 }
        case (.bool, .int32): convert(Bool.self, Int32.self) { $0 ? 1 : 0 }
        case (.bool, .bool): convert(Bool.self, Bool.self) { $0 }
        }
        withExtendedLifetime(owner) {}
        return result
    }

    /// Fills `count` elements of a buffer with one value converted to the buffer's type.
    static func fill(_ pointer: UnsafeMutableRawPointer, _ type: ScalarType, _ value: Double, count: Int) {
        switch type {
        case .float32: pointer.assumingMemoryBound(to: Float.self).update(repeating: Float(value), count: count)
        case .float16: pointer.assumingMemoryBound(to: Float16.self).update(repeating: Float16(converting: value), count: count)
        case .int32: pointer.assumingMemoryBound(to: Int32.self).update(repeating: Int32(converting: value), count: count)
        case .bool: pointer.assumingMemoryBound(to: Bool.self).update(repeating: value != 0, count: count)
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

    func concat(axis: Int, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "concat")
        let size = output.scalarType.byteCount
        let outer = output.shape[..<axis].reduce(1, *)
        let inner = output.shape[(axis + 1)...].reduce(1, *)
        let total = output.shape[axis]
        var start = 0
        for input in inputs {
            let extent = input.shape[axis]
            defer { start += extent }
            guard input.layout.elementCount > 0 else { continue }
            let (source, owner) = try contiguous(input)
            let run = extent * inner * size
            for o in 0..<outer {
                (buffer.pointer + (o * total + start) * inner * size).copyMemory(from: source + o * run, byteCount: run)
            }
            withExtendedLifetime(owner) {}
        }
        return result
    }

    func gather(axis: Int, _ input: Value, _ indices: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "gather")
        let size = output.scalarType.byteCount
        let (indexPointer, indexOwner) = try contiguous(indices)
        let chosen = indexPointer.assumingMemoryBound(to: Int32.self)
        let count = indices.layout.elementCount
        let extent = input.shape[axis]
        let outer = input.shape[..<axis].reduce(1, *)
        let inner = input.shape[(axis + 1)...].reduce(1, *)
        guard outer * inner > 0, count > 0 else { return result }
        for j in 0..<count where !(0..<extent).contains(Int(chosen[j])) {
            throw TensorError(.indexOutOfRange, op: "gather", operandShapes: [input.shape, indices.shape], message: "index \(chosen[j]) is out of range for axis \(axis) of size \(extent)")
        }
        let (source, owner) = try contiguous(input)
        let run = inner * size
        Parallel.forEachRange(outer * count, parts: Parallel.workerCount(forElements: outer * count * inner)) { range in
            for line in range {
                let (o, j) = (line / count, line % count)
                (buffer.pointer + line * run).copyMemory(from: source + (o * extent + Int(chosen[j])) * run, byteCount: run)
            }
        }
        withExtendedLifetime((owner, indexOwner)) {}
        return result
    }
}
