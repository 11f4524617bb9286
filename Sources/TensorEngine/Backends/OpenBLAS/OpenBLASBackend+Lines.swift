/// Ops that work on whole lines along one axis.
enum LineOp {
    case softmax, logSoftmax
    case layerNorm(Float)
}

extension OpenBLASBackend {
    /// Softmax, log-softmax or layer norm along `axis`: vectorised per row when the axis is the
    /// last of a row-major input; otherwise the axis is moved last by a copy and moved back after.
    func lines(_ op: LineOp, axis: Int, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let rank = input.layout.rank
        let extent = input.shape[axis]
        let rows = extent == 0 ? 0 : input.layout.elementCount / extent
        if axis == rank - 1 {
            let (x, _, _, _, owner) = try grouped(input, axes: [axis])
            let (result, buffer) = try allocate(output, for: "softmax")
            Self.runRows(op, x, buffer.elements(as: Float.self), rows: rows, length: extent)
            withExtendedLifetime(owner) {}
            return result
        }
        // Move the axis last, work on rows, and move it back.
        let order = (0..<rank).filter { $0 != axis } + [axis]
        let movedShape = order.map { input.shape[$0] }
        let moved = input.with(input.layout.permuted(order))
        let (source, sourceOwner) = try contiguous(moved)
        let (rowsValue, rowsBuffer) = try allocate(TensorSignature(shape: movedShape, scalarType: .float32), for: "softmax")
        Self.runRows(op, UnsafePointer(source.assumingMemoryBound(to: Float.self)), rowsBuffer.elements(as: Float.self), rows: rows, length: extent)
        var inverse = [Int](repeating: 0, count: rank)
        for (position, original) in order.enumerated() { inverse[original] = position }
        let (result, buffer) = try allocate(output, for: "softmax")
        StridedCopy.copy(rowsBuffer.pointer, rowsValue.layout.permuted(inverse), to: buffer.pointer, elementSize: 4)
        withExtendedLifetime(sourceOwner) {}
        return result
    }

    static func runRows(_ op: LineOp, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, rows: Int, length: Int) {
        guard length > 0 else { return }
        Parallel.forEachRange(rows, parts: Parallel.workerCount(forElements: rows * length, costPerElement: 4)) { range in
            for row in range {
                let source = x + row * length
                let target = out + row * length
                switch op {
                case .softmax: RowKernels.softmax(source, target, length, logarithmic: false)
                case .logSoftmax: RowKernels.softmax(source, target, length, logarithmic: true)
                case .layerNorm(let epsilon): RowKernels.layerNorm(source, target, length, epsilon: epsilon)
                }
            }
        }
    }
}
