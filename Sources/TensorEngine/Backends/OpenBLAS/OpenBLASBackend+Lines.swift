/// A kernel over contiguous rows: input, output, how many rows, their length.
typealias RowsKernel = (UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int, Int) -> Void

extension OpenBLASBackend {
    /// A row kernel (softmax, log-softmax, layer norm) along the op's axis: vectorised over rows
    /// when the axis is the last of a row-major input; otherwise the axis is moved last by a copy
    /// and moved back after. Each worker hands its whole range of rows to `row` at once (softmax
    /// interleaves four rows); inlined into each registration, so that `row` is a known function
    /// there, not a closure value.
    @inline(__always)
    func lines(_ op: Op, _ input: Value, _ output: TensorSignature, _ row: RowsKernel) throws(TensorError) -> Value {
        let axis = op.axis
        let rank = input.layout.rank
        let extent = input.shape[axis]
        let rows = extent == 0 ? 0 : input.layout.elementCount / extent
        if axis == rank - 1 {
            let (x, _, _, _, owner) = try grouped(input, axes: [axis])
            let (result, buffer) = try allocate(output, for: op.name)
            Self.runRows(row, x, buffer.elements(as: Float.self), rows: rows, length: extent)
            withExtendedLifetime(owner) {}
            return result
        }
        // Move the axis last, work on rows, and move it back.
        let order = (0..<rank).filter { $0 != axis } + [axis]
        let movedShape = order.map { input.shape[$0] }
        let moved = input.with(input.layout.permuted(order))
        let (source, sourceOwner) = try contiguous(moved)
        let (rowsValue, rowsBuffer) = try allocate(
            TensorSignature(shape: movedShape, scalarType: .float32), for: op.name)
        Self.runRows(
            row, UnsafePointer(source.assumingMemoryBound(to: Float.self)), rowsBuffer.elements(as: Float.self),
            rows: rows, length: extent)
        var inverse = [Int](repeating: 0, count: rank)
        for (position, original) in order.enumerated() { inverse[original] = position }
        let (result, buffer) = try allocate(output, for: op.name)
        StridedCopy.copy(rowsBuffer.pointer, rowsValue.layout.permuted(inverse), to: buffer.pointer, elementSize: 4)
        withExtendedLifetime(sourceOwner) {}
        return result
    }

    @inline(__always)
    static func runRows(
        _ row: RowsKernel, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows: Int, length: Int
    ) {
        guard length > 0 else { return }
        let parts = Parallel.workerCount(forElements: rows * length, costPerElement: 4)
        Parallel.forEachRange(rows, parts: parts) { range in
            row(x + range.lowerBound * length, out + range.lowerBound * length, range.count, length)
        }
    }
}
