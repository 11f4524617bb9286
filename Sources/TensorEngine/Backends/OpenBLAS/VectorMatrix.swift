/// Vector·matrix products `c[n] = a[k] · B[k, n]` with every column summed in the same order:
/// `k` ascending, one multiply and one add per term (no fused multiply-add, which would round
/// differently from the scalar remainder), whichever vector lane or remainder a column falls in.
///
/// OpenBLAS's `sgemv` rounds its last `n mod 8` columns through an edge kernel of another order,
/// so equal columns of B can give results an ulp apart. That is harmless until the results are
/// huge and a softmax follows, as in ONNX's light CNN models (constant weights, logits near
/// 10³¹): there a one-ulp difference moves the probabilities far. The products are memory-bound
/// (each element of B is read once), so this loop matches `sgemv`'s speed.
enum VectorMatrix {
    private typealias Vector = SIMD16<Float>

    /// `c = a · B` for columns `columns` of B, read as `B[p, j]` at `b[p·leading + j]`
    /// (`transposed` false) or `b[j·leading + p]` (`transposed` true); `a`'s elements `incA` apart.
    static func multiply(
        _ a: UnsafePointer<Float>, incA: Int, _ b: UnsafePointer<Float>, transposed: Bool, leading: Int,
        _ c: UnsafeMutablePointer<Float>, columns: Range<Int>, k: Int
    ) {
        if transposed {
            for j in columns { c[j] = dot(a, incA: incA, b + j * leading, k) }
            return
        }
        // Rows of B in order, four at a time: B is read as it lies in memory (a block of columns
        // walked down all the rows reads one run per row, `leading` floats apart, which the
        // prefetchers follow late: 1×768 · 768×3072 took 150-215 µs that way). The running sums
        // live in `c` (one row, in L1) and each column still adds its terms in ascending k.
        let width = Vector.scalarCount
        let (first, end) = (columns.lowerBound, columns.upperBound)
        (c + first).update(repeating: 0, count: end - first)
        var p = 0
        while p + 4 <= k {
            let (a0, a1, a2, a3) = (a[p * incA], a[(p + 1) * incA], a[(p + 2) * incA], a[(p + 3) * incA])
            let rows = (b + p * leading, b + (p + 1) * leading, b + (p + 2) * leading, b + (p + 3) * leading)
            var j = first
            while j + width <= end {
                var total = UnsafeRawPointer(c + j).loadUnaligned(as: Vector.self)
                total += Vector(repeating: a0) * UnsafeRawPointer(rows.0 + j).loadUnaligned(as: Vector.self)
                total += Vector(repeating: a1) * UnsafeRawPointer(rows.1 + j).loadUnaligned(as: Vector.self)
                total += Vector(repeating: a2) * UnsafeRawPointer(rows.2 + j).loadUnaligned(as: Vector.self)
                total += Vector(repeating: a3) * UnsafeRawPointer(rows.3 + j).loadUnaligned(as: Vector.self)
                UnsafeMutableRawPointer(c + j).storeBytes(of: total, as: Vector.self)
                j += width
            }
            while j < end {
                c[j] = (((c[j] + a0 * rows.0[j]) + a1 * rows.1[j]) + a2 * rows.2[j]) + a3 * rows.3[j]
                j += 1
            }
            p += 4
        }
        while p < k {
            let (x, row) = (a[p * incA], b + p * leading)
            var j = first
            while j + width <= end {
                let total = UnsafeRawPointer(c + j).loadUnaligned(as: Vector.self)
                    + Vector(repeating: x) * UnsafeRawPointer(row + j).loadUnaligned(as: Vector.self)
                UnsafeMutableRawPointer(c + j).storeBytes(of: total, as: Vector.self)
                j += width
            }
            while j < end {
                c[j] += x * row[j]
                j += 1
            }
            p += 1
        }
    }

    /// `Σ a[p·incA]·row[p]` in a fixed order: sixteen lanes of running sums, then the lanes added
    /// in order, then the remainder.
    private static func dot(_ a: UnsafePointer<Float>, incA: Int, _ row: UnsafePointer<Float>, _ k: Int) -> Float {
        let width = Vector.scalarCount
        var lanes = Vector(repeating: 0)
        var p = 0
        if incA == 1 {
            while p + width <= k {
                let x = UnsafeRawPointer(a + p).loadUnaligned(as: Vector.self)
                lanes += x * UnsafeRawPointer(row + p).loadUnaligned(as: Vector.self)
                p += width
            }
        }
        var total: Float = 0
        for lane in 0..<width { total += lanes[lane] }
        while p < k {
            total += a[p * incA] * row[p]
            p += 1
        }
        return total
    }
}
