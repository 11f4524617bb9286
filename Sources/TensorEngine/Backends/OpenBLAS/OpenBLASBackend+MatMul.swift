import COpenBLAS

extension OpenBLASBackend {
    /// How a matrix operand is handed to BLAS: a base offset, whether it is transposed, and the
    /// leading dimension. Views that BLAS cannot describe are copied once, row-major. Products and
    /// attention's operands are read this way.
    struct MatrixOperand {
        var pointer: UnsafePointer<Float>
        var transposed: Bool
        var leading: Int
    }

    /// Describes the last two axes of `value` for BLAS and lists each batch's base offset.
    /// The value must be readable (see ``contiguousIfNeeded(_:rows:columns:)``).
    func operand(_ value: Value, rows: Int, columns: Int) throws(TensorError) -> (MatrixOperand, batchOffsets: [Int]) {
        (try matrix(value, rows: rows, columns: columns), Self.batchOffsets(of: value))
    }

    /// The offsets of a batch's matrices in `value`'s buffer, in row-major order of its batch axes.
    static func batchOffsets(of value: Value) -> [Int] {
        let rank = value.layout.rank
        // One matrix (the common case, and on every small product's path) has one offset.
        return rank == 2
            ? [value.layout.offset]
            : Layout(
                shape: Array(value.shape.dropLast(2)), strides: Array(value.layout.strides.dropLast(2)),
                offset: value.layout.offset
            ).elementOffsets()
    }

    /// How BLAS reads `value`'s matrices (each `rows × columns`): their buffer, and whether they
    /// are stored transposed, with which leading dimension.
    func matrix(_ value: Value, rows: Int, columns: Int) throws(TensorError) -> MatrixOperand {
        let rank = value.layout.rank
        let rowStride = value.layout.strides[rank - 2]
        let columnStride = value.layout.strides[rank - 1]
        let base = UnsafePointer(try Self.pointer(value).assumingMemoryBound(to: Float.self))
        if columnStride == 1 && (rowStride >= max(columns, 1) || rows == 1) {
            return MatrixOperand(pointer: base, transposed: false, leading: max(rowStride, columns, 1))
        }
        guard rowStride == 1 && (columnStride >= max(rows, 1) || columns == 1) else {
            throw TensorError(
                .backendFailure, op: "matmul",
                message: "an operand with strides \(value.layout.strides) reached BLAS uncopied")
        }
        return MatrixOperand(pointer: base, transposed: true, leading: max(columnStride, rows, 1))
    }

    /// `[..., m, k] · [..., k, n]`: `sgemm` per batch, a vector·matrix loop when m is 1, `sgemv` when n is 1.
    /// With `bias` (`[n]`, a `linear` op's), each piece of the product adds it to the rows it has
    /// just written, then the `residual` (`[m, n]`), then applies the op's `activation`
    /// (``LinearEpilogue``).
    func matmul(
        _ a: Value, _ b: Value, _ output: TensorSignature, bias: Value? = nil, residual: Value? = nil,
        activation: LinearActivation? = nil
    ) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: bias == nil ? "matmul" : "linear")
        let rank = a.layout.rank
        let m = a.shape[rank - 2]
        let k = a.shape[rank - 1]
        let n = b.shape[rank - 1]
        let out = buffer.elements(as: Float.self)
        // An empty batch (not only an empty m or n) leaves nothing to compute.
        guard output.elementCount > 0 else { return result }
        var column: (pointer: UnsafeMutableRawPointer, keepAlive: Value)?
        if let bias { column = try contiguous(bias) }
        let biases = column.map { UnsafePointer($0.pointer.assumingMemoryBound(to: Float.self)) }
        var shortcut: (pointer: UnsafeMutableRawPointer, keepAlive: Value)?
        if let residual { shortcut = try contiguous(residual) }
        defer { withExtendedLifetime(shortcut?.keepAlive) {} }
        let epilogue = LinearEpilogue(
            bias: biases, residual: shortcut.map { UnsafePointer($0.pointer.assumingMemoryBound(to: Float.self)) },
            residualLeading: n, activation: activation)
        defer { withExtendedLifetime(column?.keepAlive) {} }
        guard k > 0 else {
            out.update(repeating: 0, count: output.elementCount)
            for batch in 0..<(output.elementCount / (m * n)) {
                epilogue.apply(to: out + batch * m * n, rows: m, columns: 0..<n, ldc: n)
            }
            return result
        }
        // Contiguous copies must outlive the BLAS calls that read them.
        let left = try contiguousIfNeeded(a, rows: m, columns: k)
        let right = try contiguousIfNeeded(b, rows: k, columns: n)
        let x = try matrix(left, rows: m, columns: k)
        let y = try matrix(right, rows: k, columns: n)
        // One product (every small product's case) needs no arrays of offsets.
        let offsets = rank == 2 ? [] : Array(zip(Self.batchOffsets(of: left), Self.batchOffsets(of: right)))
        let batches = rank == 2 ? 1 : offsets.count
        let first = rank == 2 ? (left.layout.offset, right.layout.offset) : offsets[0]
        if m == 1, n > 1, batches == 1 {
            // One vector·matrix product: its columns split across the cores.
            let incA = x.transposed ? x.leading : 1
            let (a, b) = (x.pointer + first.0, y.pointer + first.1)
            let parts = Parallel.workerCount(forElements: n * k)
            Parallel.forEachRange(n, parts: parts, alignment: MatmulSplit.tile) { range in
                VectorMatrix.multiply(a, incA: incA, b, transposed: y.transposed, leading: y.leading, out, columns: range, k: k)
                epilogue.apply(to: out, rows: 1, columns: range, ldc: n)
            }
            withExtendedLifetime((left, right)) {}
            return result
        }
        let split = MatmulSplit(batches: batches, m: m, n: n, k: k)
        if batches == 1,
            try HostProducts.multiplyFromPackedB(
                transposeA: x.transposed, transposeB: y.transposed, m: m, n: n, k: k, x.pointer + first.0,
                lda: x.leading, y.pointer + first.1, ldb: y.leading, source: right.buffer as? HostBuffer, out,
                ldc: n, accumulate: false, split: split, epilogue: epilogue)
        {
            withExtendedLifetime((left, right)) {}
            return result
        }
        BLASThreads.use(split.libraryThreads)
        Parallel.forEachRange(split.extent, parts: split.parts, alignment: split.alignment) { range in
            switch split.axis {
            case .batch:
                for index in range {
                    let (xOffset, yOffset) = offsets[index]
                    Self.product(x, x.pointer + xOffset, y, y.pointer + yOffset, out + index * m * n, m: m, n: n, k: k, ldc: n)
                    epilogue.apply(to: out + index * m * n, rows: m, columns: 0..<n, ldc: n)
                }
            case .rows:
                // Rows m0..<m1 of A (and of C); B whole.
                let (xOffset, yOffset) = first
                let rowOffset = x.transposed ? range.lowerBound : range.lowerBound * x.leading
                Self.product(x, x.pointer + xOffset + rowOffset, y, y.pointer + yOffset, out + range.lowerBound * n,
                             m: range.count, n: n, k: k, ldc: n)
                epilogue.apply(
                    to: out + range.lowerBound * n, rows: range.count, columns: 0..<n, ldc: n,
                    firstRow: range.lowerBound)
            case .columns:
                // Columns n0..<n1 of B (and of C); A whole.
                let (xOffset, yOffset) = first
                let columnOffset = y.transposed ? range.lowerBound * y.leading : range.lowerBound
                Self.product(x, x.pointer + xOffset, y, y.pointer + yOffset + columnOffset, out + range.lowerBound,
                             m: m, n: range.count, k: k, ldc: n)
                epilogue.apply(to: out, rows: m, columns: range, ldc: n)
            }
        }
        withExtendedLifetime((left, right)) {}
        return result
    }

    /// One product `C[m, n] = A[m, k] · B[k, n]` with C's rows `ldc` apart: a general product
    /// (``HostProducts``), or a vector·matrix loop when m is 1, `sgemv` when n is 1, or `sdot`
    /// when both are.
    private static func product(_ x: MatrixOperand, _ pa: UnsafePointer<Float>, _ y: MatrixOperand, _ pb: UnsafePointer<Float>,
                                _ c: UnsafeMutablePointer<Float>, m: Int, n: Int, k: Int, ldc: Int) {
        if m == 1 && n == 1 {
            let incA = x.transposed ? x.leading : 1
            let incB = y.transposed ? 1 : y.leading
            c[0] = cblas_sdot(Int32(k), pa, Int32(incA), pb, Int32(incB))
        } else if m == 1 {
            // Every column in the same order (see VectorMatrix), not sgemv's edge kernel.
            let incA = x.transposed ? x.leading : 1
            VectorMatrix.multiply(pa, incA: incA, pb, transposed: y.transposed, leading: y.leading, c, columns: 0..<n, k: k)
        } else if n == 1 {
            let incB = y.transposed ? 1 : y.leading
            cblas_sgemv(CblasRowMajor, x.transposed ? CblasTrans : CblasNoTrans, Int32(x.transposed ? k : m), Int32(x.transposed ? m : k),
                        1, pa, Int32(x.leading), pb, Int32(incB), 0, c, Int32(ldc))
        } else {
            HostProducts.multiply(transposeA: x.transposed, transposeB: y.transposed, m: m, n: n, k: k,
                                  pa, lda: x.leading, pb, ldb: y.leading, c, ldc: ldc, accumulate: false)
        }
    }

    /// The value itself when BLAS can read its last two axes (row- or column-major, non-negative
    /// strides, any batch strides), else a row-major copy.
    func contiguousIfNeeded(_ value: Value, rows: Int, columns: Int) throws(TensorError) -> Value {
        let rank = value.layout.rank
        let rowStride = value.layout.strides[rank - 2]
        let columnStride = value.layout.strides[rank - 1]
        let readable = (columnStride == 1 && (rowStride >= max(columns, 1) || rows == 1))
            || (rowStride == 1 && (columnStride >= max(rows, 1) || columns == 1))
        let batchOK = value.layout.strides.dropLast(2).allSatisfy { $0 >= 0 }
        if readable && batchOK { return value }
        let signature = TensorSignature(shape: value.shape, scalarType: .float32)
        let (copy, buffer) = try allocate(signature, for: "matmul operand")
        StridedCopy.copy(try Self.pointer(value), value.layout, to: buffer.pointer, elementSize: 4)
        return copy
    }
}
