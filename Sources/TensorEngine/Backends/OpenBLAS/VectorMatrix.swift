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
        let width = Vector.scalarCount
        var j = columns.lowerBound
        // Vector blocks of columns: the running sums stay in registers across the rows of B.
        while j + width <= columns.upperBound {
            var total = Vector(repeating: 0)
            for p in 0..<k {
                let row = UnsafeRawPointer(b + p * leading + j)
                total += Vector(repeating: a[p * incA]) * row.loadUnaligned(as: Vector.self)
            }
            UnsafeMutableRawPointer(c + j).storeBytes(of: total, as: Vector.self)
            j += width
        }
        for column in j..<columns.upperBound {
            var total: Float = 0
            for p in 0..<k { total += a[p * incA] * b[p * leading + column] }
            c[column] = total
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
