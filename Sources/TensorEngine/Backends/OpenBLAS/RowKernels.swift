import CIntrinsics

/// Softmax, log-softmax and layer norm of one contiguous row, as plain vector loops.
///
/// A row is short enough to stay in L1, so the cost is instructions, not memory: each kernel makes
/// as few passes as its numerics allow (softmax: max, then `exp` and its sum together, then the
/// scale; log-softmax never stores the exponentials; layer norm: mean, centred variance, then the
/// normalised output) and writes the loops out rather than passing closures to a generic `map`:
/// a closure as large as ``VectorMath/exp(_:)`` is not inlined there, and is then called once per
/// vector with its constants reloaded on every call.
enum RowKernels {
    /// ``softmax(_:_:_:logarithmic:)`` of `rows` contiguous rows of n; with AVX-512, softmax takes
    /// four rows at a time, interleaved, and rows of 1024 and more one at a time, its passes over
    /// consecutive rows pipelined (``softmaxRows(_:ldx:_:ldo:rows:_:scale:mask:causalVisible:)``).
    static func softmax(rows: Int, _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ n: Int,
                        logarithmic: Bool) {
        if CPUFlags.usesAVX512, !logarithmic {
            softmaxRows(x, ldx: n, out, ldo: n, rows: rows, n, scale: 1, mask: nil, causalVisible: nil)
            return
        }
        for row in 0..<rows { softmax(x + row * n, out + row * n, n, logarithmic: logarithmic) }
    }

    /// The softmax of `rows` rows of n > 0, `x` rows `ldx` apart into `out` rows `ldo` apart (the
    /// same pointer for in place), of the scores `x·scale + mask` (`mask`: rows `stride` apart,
    /// keys contiguous); with `causalVisible` = v, row r weighs only its first v + r keys (none
    /// when that is 0 or less: its weights are NaN). Attention's weights, and softmax's rows.
    /// Four rows at a time with AVX-512 (`te_softmax_rows_avx512`; from 1024 keys on, one at a time),
    /// else row by row.
    static func softmaxRows(_ x: UnsafePointer<Float>, ldx: Int, _ out: UnsafeMutablePointer<Float>, ldo: Int,
                            rows: Int, _ n: Int, scale: Float, mask: (pointer: UnsafePointer<Float>, stride: Int)?,
                            causalVisible: Int?) {
        if CPUFlags.usesAVX512 {
            te_softmax_rows_avx512(x, ldx, out, ldo, rows, n, scale, mask?.pointer, mask?.stride ?? 0,
                                   causalVisible == nil ? 0 : 1, causalVisible ?? 0)
            return
        }
        for row in 0..<rows {
            let (source, line) = (x + row * ldx, out + row * ldo)
            if let mask {
                let maskRow = mask.pointer + row * mask.stride
                for j in 0..<n { line[j] = source[j] * scale + maskRow[j] }
            } else {
                for j in 0..<n { line[j] = source[j] * scale }
            }
            if let causalVisible {
                let visible = Swift.min(n, Swift.max(0, causalVisible + row))
                if visible < n { (line + visible).update(repeating: -.infinity, count: n - visible) }
            }
            softmax(line, line, n, logarithmic: false)
        }
    }

    /// `out = exp(x - max) / Σ exp(x - max)`, or `(x - max) - log Σ exp(x - max)` when
    /// `logarithmic` (the shift is subtracted first: folding `max + log Σ` into one shift rounds
    /// the logarithm away when |max| is large, e.g. spacing 1 at 8.9e6).
    static func softmax(_ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ n: Int, logarithmic: Bool) {
        if CPUFlags.usesAVX512 {
            // The same arithmetic 16 lanes at a time (Sources/CIntrinsics/rows.h).
            if logarithmic {
                te_log_softmax_row_avx512(x, out, n)
            } else {
                softmaxRows(x, ldx: n, out, ldo: n, rows: 1, n, scale: 1, mask: nil, causalVisible: nil)
            }
            return
        }
        let maximum = OpenBLASBackend.reduceRow(.maximum, x, n)
        let shift = FloatVector(repeating: maximum)
        // One exponential per iteration: unrolled further, the optimiser stops inlining `exp`.
        var sum = FloatVector(repeating: 0)
        var i = 0
        while i + 8 <= n {
            let e = VectorMath.expOfNonPositive(BlockKernels.load(x + i) - shift)
            if !logarithmic { BlockKernels.store(e, out + i) }
            sum += e
            i += 8
        }
        if i < n {
            // The tail through the same vector formula; padding lanes hold -inf, whose exp is 0.
            let e = VectorMath.expOfNonPositive(BlockKernels.loadTail(x + i, n - i, padding: -.infinity) - shift)
            if !logarithmic { BlockKernels.storeTail(e, out + i, n - i) }
            sum += e
        }
        let total = sum.sum()
        if logarithmic {
            let logTotal = FloatVector(repeating: MathFunction.log.evaluate(total))
            var j = 0
            while j + 8 <= n {
                BlockKernels.store((BlockKernels.load(x + j) - shift) - logTotal, out + j)
                j += 8
            }
            while j < n {
                out[j] = (x[j] - maximum) - logTotal[0]
                j += 1
            }
        } else {
            scale(out, n, by: 1 / total)
        }
    }

    /// `out = (x - mean) / sqrt(variance + epsilon)`, the variance taken about the mean (two
    /// passes over the row, not `E[x²] - mean²`, which cancels catastrophically); then
    /// `· scale + bias`, element by element along the row, when `affine` holds them.
    static func layerNorm(
        _ x: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ n: Int, epsilon: Float,
        affine: LayerNormAffine?
    ) {
        if CPUFlags.usesAVX512 {
            // The same passes 16 lanes at a time, four running sums each (Sources/CIntrinsics/rows.h).
            te_layer_norm_row_avx512(x, out, n, epsilon, affine?.scale, affine?.bias)
            return
        }
        let mean = OpenBLASBackend.reduceRow(.sum, x, n) / Float(n)
        let center = FloatVector(repeating: mean)
        var sum0 = FloatVector(repeating: 0)
        var sum1 = FloatVector(repeating: 0)
        var i = 0
        while i + 16 <= n {
            let d0 = BlockKernels.load(x + i) - center
            let d1 = BlockKernels.load(x + i + 8) - center
            sum0 = sum0.addingProduct(d0, d0)
            sum1 = sum1.addingProduct(d1, d1)
            i += 16
        }
        while i + 8 <= n {
            let d = BlockKernels.load(x + i) - center
            sum0 = sum0.addingProduct(d, d)
            i += 8
        }
        if i < n {
            // Padding lanes hold the mean: they add nothing.
            let d = BlockKernels.loadTail(x + i, n - i, padding: mean) - center
            sum0 = sum0.addingProduct(d, d)
        }
        let variance = (sum0 + sum1).sum() / Float(n)
        let factor = 1 / (variance + epsilon).squareRoot()
        let scale = FloatVector(repeating: factor)
        var j = 0
        if let affine {
            let (gamma, beta) = (affine.scale, affine.bias)
            while j + 8 <= n {
                let normalized = (BlockKernels.load(x + j) - center) * scale
                let scaled = BlockKernels.load(beta + j).addingProduct(normalized, BlockKernels.load(gamma + j))
                BlockKernels.store(scaled, out + j)
                j += 8
            }
            while j < n {
                out[j] = beta[j].addingProduct((x[j] - mean) * factor, gamma[j])
                j += 1
            }
            return
        }
        while j + 8 <= n {
            BlockKernels.store((BlockKernels.load(x + j) - center) * scale, out + j)
            j += 8
        }
        while j < n {
            out[j] = (x[j] - mean) * factor
            j += 1
        }
    }

    /// `row *= factor`, in place.
    @inline(__always)
    static func scale(_ row: UnsafeMutablePointer<Float>, _ n: Int, by factor: Float) {
        let vector = FloatVector(repeating: factor)
        var i = 0
        while i + 8 <= n {
            BlockKernels.store(BlockKernels.load(row + i) * vector, row + i)
            i += 8
        }
        while i < n {
            row[i] *= factor
            i += 1
        }
    }
}

/// A layer norm's scale and bias, each as long as the rows, applied as the rows are written.
struct LayerNormAffine: @unchecked Sendable {
    let scale: UnsafePointer<Float>
    let bias: UnsafePointer<Float>
}
