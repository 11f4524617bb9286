extension OpenBLASBackend {
    /// The input as row-major `[outer, extent, inner]` around the reduced axes: a view when the
    /// reduced axes are adjacent and the input is row-major, else a copy with them moved last.
    func grouped(_ input: Value, axes: [Int]) throws(TensorError) -> (
        pointer: UnsafePointer<Float>, outer: Int, extent: Int, inner: Int, keepAlive: Value
    ) {
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
        return (
            UnsafePointer(pointer.assumingMemoryBound(to: Float.self)), kept.reduce(1) { $0 * shape[$1] }, extent, 1,
            owner
        )
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
        let workers = Parallel.workerCount(forElements: outer * extent)
        if inner == 1, outer < workers {
            // Fewer rows than workers (a whole tensor reduced to one value): the rows in pieces.
            Self.reduceLongRows(monoid, x, rows: outer, extent: extent, parts: workers) { row, value in
                out[row] = mean ? (extent == 0 ? .nan : value * scale) : value
            }
        } else if inner == 1 {
            Parallel.forEachRange(outer, parts: workers) { rows in
                for row in rows {
                    let value = Self.reduceRow(monoid, x + row * extent, extent)
                    out[row] = mean ? (extent == 0 ? .nan : value * scale) : value
                }
            }
        } else {
            // Columns: combine whole rows of `inner` elements, vectorised along the row.
            let identity = Float(monoid.identity)
            Parallel.forEachRange(
                outer * inner, parts: Parallel.workerCount(forElements: outer * extent * inner), alignment: inner
            ) { range in
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

    /// Reduces `rows` contiguous rows of `extent` elements, each cut into `parts` pieces (whole
    /// blocks of 32) reduced by the workers side by side, then the pieces' values combined in
    /// order by the monoid's own `combine` (so the result does not depend on which worker ran
    /// first; a NaN wins in the extremes); `store` gets each row's value. One worker per row would read a 64 MiB tensor
    /// reduced to its mean at one core's memory rate, half the machine's.
    static func reduceLongRows(
        _ monoid: ReductionMonoid, _ x: UnsafePointer<Float>, rows: Int, extent: Int, parts: Int,
        store: (Int, Float) -> Void
    ) {
        let pieceLength = ((extent + parts - 1) / parts + 31) / 32 * 32
        let identity = Float(monoid.identity)
        var partials = [Float](repeating: identity, count: rows * parts)
        partials.withUnsafeMutableBufferPointer { buffer in
            guard let values = buffer.baseAddress else { return }
            Parallel.forEachRange(rows * parts, parts: parts) { items in
                for item in items {
                    let (row, piece) = item.quotientAndRemainder(dividingBy: parts)
                    let start = Swift.min(extent, piece * pieceLength)
                    let count = Swift.min(extent, start + pieceLength) - start
                    if count > 0 { values[item] = reduceRow(monoid, x + row * extent + start, count) }
                }
            }
        }
        for row in 0..<rows {
            let pieces = partials[row * parts..<(row + 1) * parts]
            store(row, Float(pieces.reduce(monoid.identity) { monoid.combine($0, Double($1)) }))
        }
    }

    /// Reduces one contiguous row with four vector accumulators (32 lanes); a NaN wins in the
    /// extremes. The monoid is chosen once per row, so each loop is specialised to its operation.
    static func reduceRow(_ monoid: ReductionMonoid, _ x: UnsafePointer<Float>, _ n: Int) -> Float {
        switch monoid {
        case .sum: reduceRow(RowSum.self, x, n)
        case .product: reduceRow(RowProduct.self, x, n)
        case .maximum: reduceRow(RowMaximum.self, x, n)
        case .minimum: reduceRow(RowMinimum.self, x, n)
        }
    }

    /// The row loop for one operation: no switch per block, NaNs tracked without a branch.
    @inline(__always)
    static func reduceRow<R: RowReduction>(_: R.Type, _ x: UnsafePointer<Float>, _ n: Int) -> Float {
        let start = FloatVector(repeating: R.identity)
        var accumulators = (start, start, start, start)
        var nan: UInt8 = 0  // not a Bool: `||` would branch on every block
        var i = 0
        while i + 32 <= n {
            let v = (
                BlockKernels.load(x + i), BlockKernels.load(x + i + 8), BlockKernels.load(x + i + 16),
                BlockKernels.load(x + i + 24)
            )
            accumulators = (
                R.combine(accumulators.0, v.0), R.combine(accumulators.1, v.1), R.combine(accumulators.2, v.2),
                R.combine(accumulators.3, v.3)
            )
            if R.isExtreme { nan |= any((v.0 .!= v.0) .| (v.1 .!= v.1) .| (v.2 .!= v.2) .| (v.3 .!= v.3)) ? 1 : 0 }
            i += 32
        }
        while i + 8 <= n {
            let v = BlockKernels.load(x + i)
            accumulators.0 = R.combine(accumulators.0, v)
            if R.isExtreme { nan |= any(v .!= v) ? 1 : 0 }
            i += 8
        }
        let eight = R.combine(R.combine(accumulators.0, accumulators.1), R.combine(accumulators.2, accumulators.3))
        // Halves folded in a register (8 → 4), then four lanes as scalars. The generic swizzle
        // subscript (`vector[SIMD8(...)]`) is a call with a loop over lanes, twice per row.
        let four = R.combine(eight, FloatVector(lowHalf: eight.highHalf, highHalf: eight.lowHalf))
        var total = R.combine(R.combine(four[0], four[1]), R.combine(four[2], four[3]))
        while i < n {
            total = R.combine(total, x[i])
            if R.isExtreme { nan |= x[i].isNaN ? 1 : 0 }
            i += 1
        }
        return nan != 0 ? .nan : total
    }

    /// `target[i] = combine(target[i], row[i])` for a whole row.
    static func combine(
        _ monoid: ReductionMonoid, _ target: UnsafeMutablePointer<Float>, _ row: UnsafePointer<Float>, _ n: Int
    ) {
        switch monoid {
        case .sum: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 + $1 }
        case .product: BlockKernels.map(n, UnsafePointer(target), row, target) { $0 * $1 }
        case .maximum:
            BlockKernels.map(n, UnsafePointer(target), row, target) {
                VectorMath.propagatingNaN(VectorMath.greater($0, $1), $0, $1)
            }
        case .minimum:
            BlockKernels.map(n, UnsafePointer(target), row, target) {
                VectorMath.propagatingNaN(VectorMath.lesser($0, $1), $0, $1)
            }
        }
    }

    /// The first index of the extreme along the op's one axis; a NaN wins.
    func indexOfExtreme(
        _ op: Op, _ monoid: ReductionMonoid, _ input: Value, _ output: TensorSignature
    ) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: op.name)
        let out = buffer.elements(as: Int32.self)
        let (x, outer, extent, inner, owner) = try grouped(input, axes: op.axes)
        let maximum = monoid == .maximum
        let parts = Parallel.workerCount(forElements: outer * extent * inner)
        Parallel.forEachRange(outer * inner, parts: parts) { range in
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

/// One reduction's operation on vectors and on scalars, for ``OpenBLASBackend/reduceRow(_:_:_:)``.
protocol RowReduction {
    static var identity: Float { get }
    /// Whether NaNs must be tracked apart (the extremes' `combine` passes over them).
    static var isExtreme: Bool { get }
    static func combine(_ a: FloatVector, _ b: FloatVector) -> FloatVector
    static func combine(_ a: Float, _ b: Float) -> Float
}

enum RowSum: RowReduction {
    static var identity: Float { 0 }
    static var isExtreme: Bool { false }
    @inline(__always) static func combine(_ a: FloatVector, _ b: FloatVector) -> FloatVector { a + b }
    @inline(__always) static func combine(_ a: Float, _ b: Float) -> Float { a + b }
}

enum RowProduct: RowReduction {
    static var identity: Float { 1 }
    static var isExtreme: Bool { false }
    @inline(__always) static func combine(_ a: FloatVector, _ b: FloatVector) -> FloatVector { a * b }
    @inline(__always) static func combine(_ a: Float, _ b: Float) -> Float { a * b }
}

enum RowMaximum: RowReduction {
    static var identity: Float { -.infinity }
    static var isExtreme: Bool { true }
    @inline(__always) static func combine(_ a: FloatVector, _ b: FloatVector) -> FloatVector {
        a.replacing(with: b, where: b .> a)
    }
    @inline(__always) static func combine(_ a: Float, _ b: Float) -> Float { b > a ? b : a }
}

enum RowMinimum: RowReduction {
    static var identity: Float { .infinity }
    static var isExtreme: Bool { true }
    @inline(__always) static func combine(_ a: FloatVector, _ b: FloatVector) -> FloatVector {
        a.replacing(with: b, where: b .< a)
    }
    @inline(__always) static func combine(_ a: Float, _ b: Float) -> Float { b < a ? b : a }
}
