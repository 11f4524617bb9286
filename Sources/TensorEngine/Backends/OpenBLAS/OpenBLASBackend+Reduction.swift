extension OpenBLASBackend {
    /// The input as row-major `[outer, extent, inner]` around the reduced axes: a view when the
    /// reduced axes are adjacent and the input is row-major, else a copy with them moved last.
    func grouped(_ input: Value, axes: [Int]) throws(TensorError) -> (pointer: UnsafePointer<Float>, outer: Int, extent: Int, inner: Int, keepAlive: Value) {
        let shape = input.shape
        let extent = axes.reduce(1) { $0 * shape[$1] }
        let adjacent = axes.isEmpty || axes.last.map { $0 - axes[0] + 1 == axes.count } ?? true
        if adjacent, input.layout.isContiguous, let first = axes.first {
            let base = try Self.pointer(input).assumingMemoryBound(to: Float.self) + input.layout.offset
            let outer = shape[..<first].reduce(1, *)
            return (UnsafePointer(base), outer, extent, shape[(first + axes.count)...].reduce(1, *), input)
        }
        let kept = shape.indices.filter { !axes.contains($0) }
        let moved = input.with(input.layout.permuted(kept + axes))
        let (pointer, owner) = try contiguous(moved)
        return (UnsafePointer(pointer.assumingMemoryBound(to: Float.self)), kept.reduce(1) { $0 * shape[$1] }, extent, 1, owner)
    }

    /// Sums, means, products and extremes along the op's axes, or the index of an extreme.
    func reduce(_ op: Op, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        guard case .reduction(let definition) = op.descriptor.semantics else {
            throw TensorError(.backendFailure, op: op.name, message: "not a reduction")
        }
        let monoid = definition.monoid
        switch definition.result {
        case .index: return try indexOfExtreme(op, monoid, input, output)
        case .combined, .mean: break
        }
        let (result, buffer) = try allocate(output, for: op.name)
        guard output.elementCount > 0 else { return result }
        let out = buffer.elements(as: Float.self)
        let (x, outer, extent, inner, owner) = try grouped(input, axes: op.axes)
        let mean = definition.result == .mean
        let scale: Float = mean ? 1 / Float(extent) : 1
        if inner == 1 {
            Parallel.forEachRange(outer, parts: Parallel.workerCount(forElements: outer * extent)) { rows in
                for row in rows {
                    let value = Self.reduceRow(monoid, x + row * extent, extent)
                    out[row] = mean ? (extent == 0 ? .nan : value * scale) : value
                }
            }
        } else {
            // Columns: combine whole rows of `inner` elements, vectorised along the row.
            let identity = Float(monoid.identity)
            Parallel.forEachRange(outer * inner, parts: Parallel.workerCount(forElements: outer * extent * inner), alignment: inner) { range in
                for o in range.lowerBound / inner..<(range.upperBound + inner - 1) / inner {
                    let target = out + o * inner
                    target.update(repeating: identity, count: inner)
                    for r in 0..<extent { Self.combine(monoid, target, x + (o * extent + r) * inner, inner) }
                    if mean { for i in 0..<inner { target[i] = extent == 0 ? .nan : target[i] * scale } }
                }
            }
        }
        withExtendedLifetime(owner) {}
        return result
    }

    /// Reduces one contiguous row with four vector accumulators (32 lanes).
    static func reduceRow(_ monoid: ReductionMonoid, _ x: UnsafePointer<Float>, _ n: Int) -> Float {
        let identity = Float(monoid.identity)
        var accumulators = (FloatVector(repeating: identity), FloatVector(repeating: identity), FloatVector(repeating: identity), FloatVector(repeating: identity))
        var sawNaN = false
        @inline(__always) func step(_ acc: inout FloatVector, _ v: FloatVector) {
            switch monoid {
            case .sum: acc += v
            case .product: acc *= v
            case .maximum: acc = VectorMath.greater(acc, v); sawNaN = sawNaN || any(v .!= v)
            case .minimum: acc = VectorMath.lesser(acc, v); sawNaN = sawNaN || any(v .!= v)
            }
        }
        var i = 0
        while i + 32 <= n {
            step(&accumulators.0, BlockKernels.load(x + i))
            step(&accumulators.1, BlockKernels.load(x + i + 8))
            step(&accumulators.2, BlockKernels.load(x + i + 16))
            step(&accumulators.3, BlockKernels.load(x + i + 24))
            i += 32
        }
        while i + 8 <= n {
            step(&accumulators.0, BlockKernels.load(x + i))
            i += 8
        }
        step(&accumulators.0, accumulators.1)
        step(&accumulators.2, accumulators.3)
        step(&accumulators.0, accumulators.2)
        var total = identity
        for lane in 0..<8 { total = combine(monoid, total, accumulators.0[lane]) }
        while i < n {
            total = combine(monoid, total, x[i])
            sawNaN = sawNaN || x[i].isNaN
            i += 1
        }
        return sawNaN ? .nan : total
    }

    @inline(__always)
    static func combine(_ monoid: ReductionMonoid, _ a: Float, _ b: Float) -> Float {
        switch monoid {
        case .sum: a + b
        case .product: a * b
        case .maximum: a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .minimum: a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        }
    }

    /// `target[i] = combine(target[i], row[i])` for a whole row.
    static func combine(_ monoid: ReductionMonoid, _ target: UnsafeMutablePointer<Float>, _ row: UnsafePointer<Float>, _ n: Int) {
        switch monoid {
        case .sum: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 + $1 }
        case .product: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 * $1 }
        case .maximum: BlockKernels.map(n, UnsafePointer(target), row, target) { VectorMath.propagatingNaN(VectorMath.greater($0, $1), $0, $1) }
        case .minimum: BlockKernels.map(n, UnsafePointer(target), row, target) { VectorMath.propagatingNaN(VectorMath.lesser($0, $1), $0, $1) }
        }
    }

    /// The first index of the extreme along the op's one axis; a NaN wins.
    func indexOfExtreme(_ op: Op, _ monoid: ReductionMonoid, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: op.name)
        let out = buffer.elements(as: Int32.self)
        let (x, outer, extent, inner, owner) = try grouped(input, axes: op.axes)
        let maximum = monoid == .maximum
        Parallel.forEachRange(outer * inner, parts: Parallel.workerCount(forElements: outer * extent * inner)) { range in
            for line in range {
                let (o, i) = (line / inner, line % inner)
                let base = x + o * extent * inner + i
                var best = 0
                var bestValue = base[0]
                var position = 1
                while position < extent, !bestValue.isNaN {
                    let candidate = base[position * inner]
                    if candidate.isNaN || (maximum ? candidate > bestValue : candidate < bestValue) {
                        best = position
                        bestValue = candidate
                    }
                    position += 1
                }
                out[line] = Int32(best)
            }
        }
        withExtendedLifetime(owner) {}
        return result
    }
}
