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

    func reduce(_ reduction: ReductionOp, axes: [Int], _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: reduction.rawValue)
        guard output.elementCount > 0 else { return result }
        let out = buffer.elements(as: Float.self)
        let (x, outer, extent, inner, owner) = try grouped(input, axes: axes)
        let identity: Float = switch reduction {
        case .sum, .mean: 0
        case .product: 1
        case .max: -.infinity
        case .min: .infinity
        }
        let scale: Float = reduction == .mean ? 1 / Float(extent) : 1
        if inner == 1 {
            Parallel.forEachRange(outer, parts: Parallel.workerCount(forElements: outer * extent)) { rows in
                for row in rows {
                    let value = Self.reduceRow(reduction, x + row * extent, extent, identity)
                    out[row] = reduction == .mean ? (extent == 0 ? .nan : value * scale) : value
                }
            }
        } else {
            // Columns: combine whole rows of `inner` elements, vectorised along the row.
            Parallel.forEachRange(outer * inner, parts: Parallel.workerCount(forElements: outer * extent * inner), alignment: inner) { range in
                for o in range.lowerBound / inner..<(range.upperBound + inner - 1) / inner {
                    let target = out + o * inner
                    target.update(repeating: identity, count: inner)
                    for r in 0..<extent { Self.combine(reduction, target, x + (o * extent + r) * inner, inner) }
                    if reduction == .mean { for i in 0..<inner { target[i] = extent == 0 ? .nan : target[i] * scale } }
                }
            }
        }
        withExtendedLifetime(owner) {}
        return result
    }

    /// Reduces one contiguous row with four vector accumulators (32 lanes).
    static func reduceRow(_ reduction: ReductionOp, _ x: UnsafePointer<Float>, _ n: Int, _ identity: Float) -> Float {
        var accumulators = (FloatVector(repeating: identity), FloatVector(repeating: identity), FloatVector(repeating: identity), FloatVector(repeating: identity))
        var sawNaN = false
        @inline(__always) func step(_ acc: inout FloatVector, _ v: FloatVector) {
            switch reduction {
            case .sum, .mean: acc += v
            case .product: acc *= v
            case .max: acc = VectorMath.greater(acc, v); sawNaN = sawNaN || any(v .!= v)
            case .min: acc = VectorMath.lesser(acc, v); sawNaN = sawNaN || any(v .!= v)
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
        for lane in 0..<8 { total = combine(reduction, total, accumulators.0[lane]) }
        while i < n {
            total = combine(reduction, total, x[i])
            sawNaN = sawNaN || x[i].isNaN
            i += 1
        }
        return sawNaN ? .nan : total
    }

    @inline(__always)
    static func combine(_ reduction: ReductionOp, _ a: Float, _ b: Float) -> Float {
        switch reduction {
        case .sum, .mean: a + b
        case .product: a * b
        case .max: a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .min: a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        }
    }

    /// `target[i] = combine(target[i], row[i])` for a whole row.
    static func combine(_ reduction: ReductionOp, _ target: UnsafeMutablePointer<Float>, _ row: UnsafePointer<Float>, _ n: Int) {
        switch reduction {
        case .sum, .mean: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 + $1 }
        case .product: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 * $1 }
        case .max: BlockKernels.map(n, UnsafePointer(target), row, target) { VectorMath.propagatingNaN(VectorMath.greater($0, $1), $0, $1) }
        case .min: BlockKernels.map(n, UnsafePointer(target), row, target) { VectorMath.propagatingNaN(VectorMath.lesser($0, $1), $0, $1) }
        }
    }

    func argReduce(_ arg: ArgReductionOp, axis: Int, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: arg.rawValue)
        let out = buffer.elements(as: Int32.self)
        let (x, outer, extent, inner, owner) = try grouped(input, axes: [axis])
        Parallel.forEachRange(outer * inner, parts: Parallel.workerCount(forElements: outer * extent * inner)) { range in
            for line in range {
                let (o, i) = (line / inner, line % inner)
                let base = x + o * extent * inner + i
                var best = 0
                var bestValue = base[0]
                var position = 1
                while position < extent, !bestValue.isNaN {
                    let candidate = base[position * inner]
                    if candidate.isNaN || (arg == .argmax ? candidate > bestValue : candidate < bestValue) {
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
