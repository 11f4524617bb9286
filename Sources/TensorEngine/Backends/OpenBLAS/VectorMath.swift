import CIntrinsics

/// Eight-lane `Float` vectors: one AVX2 register on x86-64 (built with `-target-cpu haswell`),
/// two NEON registers on arm64.
typealias FloatVector = SIMD8<Float>

/// Vectorised elementary functions for the CPU kernels.
///
/// Each agrees with the C library's function to within the op table's parity tolerance (a few
/// ulp); math functions without a vector form here (sin, cos, log, pow, ...) are computed per
/// element by `MathFunction.evaluate`, the C library, so they match the reference exactly.
enum VectorMath {
    /// `eˣ` by range reduction to `r ∈ [-ln2/2, ln2/2]`, a degree-6 polynomial, and scaling by 2ⁿ:
    /// within 2 ulp of the C library, subnormal results included (`VectorMathTests`).
    @inline(__always)
    static func exp(_ x: FloatVector) -> FloatVector {
        var result = exponential(lesser(greater(x, FloatVector(repeating: -104)), FloatVector(repeating: 88.72)))
        result.replace(with: .infinity, where: x .> 88.72)
        return result
    }

    /// `eˣ` for `x ≤ 0` (or NaN), as softmax needs after subtracting the row's maximum: ``exp(_:)``
    /// without the overflow clamp and test, and 0 below ``flushBound`` instead of a subnormal.
    @inline(__always)
    static func expOfNonPositive(_ x: FloatVector) -> FloatVector {
        let bound = FloatVector(repeating: flushBound)
        return exponential(greater(x, bound)).replacing(with: 0, where: x .< bound)
    }

    /// Below this, ``expOfNonPositive(_:)`` is 0: eˣ is then within 5% of the smallest normal float,
    /// or subnormal. A softmax's weights are relative to its largest, whose exponential is 1, so no
    /// result notices; but an instruction that makes or reads a subnormal stalls an Intel core for
    /// about a hundred cycles (a row of 12 scores with 4 padding lanes took 300 cycles).
    static let flushBound: Float = -87.3

    /// `eˣ` for `x` in [-104, 88.72] or NaN. Below -104, eˣ rounds to 0, so callers clamp there
    /// (e⁻¹⁰⁴ is under half the least subnormal). NaN needs no case of its own: the clamps keep it
    /// (every comparison with NaN is false) and it stays NaN through the arithmetic.
    @inline(__always)
    private static func exponential(_ clamped: FloatVector) -> FloatVector {
        let n = fma(clamped, FloatVector(repeating: 1.442_695_04), 0.5).rounded(.down)
        // r = x - n·ln2 in two steps (ln2 = 0.693359375 - 2.12194440e-4), each one fused.
        var r = fma(n, FloatVector(repeating: -0.693_359_375), clamped)
        r = fma(n, FloatVector(repeating: 2.121_944_40e-4), r)
        var p = FloatVector(repeating: 1.987_569_150_0e-4)
        p = fma(p, r, 1.398_199_950_7e-3)
        p = fma(p, r, 8.333_451_907_3e-3)
        p = fma(p, r, 4.166_579_589_4e-2)
        p = fma(p, r, 1.666_666_545_9e-1)
        p = fma(p, r, 5.000_000_120_1e-1)
        p = (r + 1).addingProduct(p, r * r)
        // 2ⁿ for n in [-150, 128] as two normal powers of two, 2^⌊n/2⌋·2^(n-⌊n/2⌋), so that the
        // result rounds once, into a subnormal where it must, and n = 128 stays finite. The
        // integer n is read from the bits of n + 1.5·2²³ (the generic SIMD float-to-int conversion
        // is scalar code).
        let integer = unsafeBitCast(n + 12_582_912, to: SIMD8<Int32>.self) &- 0x4B40_0000
        let half = integer &>> 1
        let first = unsafeBitCast((half &+ 127) &<< 23, to: FloatVector.self)
        let second = unsafeBitCast((integer &- half &+ 127) &<< 23, to: FloatVector.self)
        return p * first * second
    }

    /// `c + p·x` as one fused multiply-add per lane (`vfmadd` with AVX2/FMA).
    @inline(__always)
    static func fma(_ p: FloatVector, _ x: FloatVector, _ c: Float) -> FloatVector {
        FloatVector(repeating: c).addingProduct(p, x)
    }

    @inline(__always)
    static func fma(_ p: FloatVector, _ x: FloatVector, _ c: FloatVector) -> FloatVector {
        c.addingProduct(p, x)
    }

    /// `tanh(x)` by a [13/6] rational minimax fit on [-7.9, 7.9] (saturated outside): within
    /// 4e-7 relative of the C library, subnormals included (`VectorMathTests`).
    @inline(__always)
    static func tanh(_ x: FloatVector) -> FloatVector {
        let bound: Float = 7.905_311_107_635_498
        let t = lesser(greater(x, FloatVector(repeating: -bound)), FloatVector(repeating: bound))
        let t2 = t * t
        var p = FloatVector(repeating: -2.760_768_477_423_55e-16)
        p = fma(p, t2, 2.000_187_904_824_77e-13)
        p = fma(p, t2, -8.604_671_522_137_35e-11)
        p = fma(p, t2, 5.122_297_090_371_14e-08)
        p = fma(p, t2, 1.485_722_357_179_79e-05)
        p = fma(p, t2, 6.372_619_288_754_36e-04)
        p = fma(p, t2, 4.893_524_558_917_86e-03)
        var q = FloatVector(repeating: 1.198_258_394_667_02e-06)
        q = fma(q, t2, 1.185_347_056_866_54e-04)
        q = fma(q, t2, 2.268_434_632_439_00e-03)
        q = fma(q, t2, 4.893_525_185_543_85e-03)
        // t times p/q (near 1 for small t), not p·t then the quotient: one rounding of t, so tiny
        // and subnormal t come out as t (sign and -0 kept). NaN needs no case of its own: the
        // clamp keeps it and the arithmetic propagates it.
        var result = t * (p * reciprocal(q))
        result.replace(with: 1, where: x .>= bound)
        result.replace(with: -1, where: x .<= -bound)
        return result
    }

    /// The logistic function `1 / (1 + e⁻ˣ)`.
    @inline(__always)
    static func sigmoid(_ x: FloatVector) -> FloatVector {
        1 / (1 + exp(-x))
    }

    /// `erf(x)` by a [13/8] rational minimax fit on [-4, 4] (±1 beyond): within 4e-7 relative of
    /// the C library, subnormals included (`VectorMathTests`).
    @inline(__always)
    static func erf(_ x: FloatVector) -> FloatVector {
        let t = lesser(greater(x, FloatVector(repeating: -4)), FloatVector(repeating: 4))
        let t2 = t * t
        var p = FloatVector(repeating: -2.726_142_258_013_06e-10)
        p = fma(p, t2, 2.770_681_424_959_02e-08)
        p = fma(p, t2, -2.101_024_020_825_08e-06)
        p = fma(p, t2, -5.692_506_394_623_46e-05)
        p = fma(p, t2, -7.349_906_303_268_55e-04)
        p = fma(p, t2, -2.954_599_808_540_25e-03)
        p = fma(p, t2, -1.609_603_332_624_15e-02)
        var q = FloatVector(repeating: -1.456_607_184_649_96e-05)
        q = fma(q, t2, -2.133_740_552_789_05e-04)
        q = fma(q, t2, -1.682_826_974_382_03e-03)
        q = fma(q, t2, -7.373_329_167_204_68e-03)
        q = fma(q, t2, -1.426_473_905_141_89e-02)
        var result = t * (p * reciprocal(q))
        // Where erf rounds to ±1 in Float (|x| ≥ 3.9192059, the least such float), the fit is
        // replaced by it: near the end of its interval the fit is a few ulp short of 1.
        result.replace(with: 1, where: x .>= 3.919_205_9)
        result.replace(with: -1, where: x .<= -3.919_205_9)
        result.replace(with: x, where: x .!= x)
        return result
    }

    /// `1 / x` for finite, non-zero `x` (the denominators of the rational fits, bounded away from
    /// zero): the CPU's 12-bit estimate refined by one Newton step, `r + r·(1 - x·r)`, to within
    /// 2 ulp (on AMD's and Intel's estimates alike). A fraction of a division's cost, which
    /// dominates `tanh` and `erf` otherwise; a second step made the fused `tanh` chain 1.7× slower.
    @inline(__always)
    static func reciprocal(_ x: FloatVector) -> FloatVector {
        let estimate = te_reciprocal_estimate8(x)
        return estimate.addingProduct(estimate, fma(-x, estimate, 1))
    }

    /// The lane-wise smaller value (`b` where `b < a`). The standard library's `pointwiseMin`
    /// handles NaN lane by lane in scalar code and is several times slower.
    @inline(__always)
    static func lesser(_ a: FloatVector, _ b: FloatVector) -> FloatVector { a.replacing(with: b, where: b .< a) }

    /// The lane-wise larger value (`b` where `b > a`).
    @inline(__always)
    static func greater(_ a: FloatVector, _ b: FloatVector) -> FloatVector { a.replacing(with: b, where: b .> a) }

    @inline(__always)
    static func abs(_ x: FloatVector) -> FloatVector {
        unsafeBitCast(unsafeBitCast(x, to: SIMD8<UInt32>.self) & 0x7FFF_FFFF, to: FloatVector.self)
    }

    /// The lanes of `a`, replaced by NaN where either operand is NaN (NumPy's propagation).
    @inline(__always)
    static func propagatingNaN(_ result: FloatVector, _ a: FloatVector, _ b: FloatVector) -> FloatVector {
        var r = result
        r.replace(with: a, where: a .!= a)
        r.replace(with: b, where: b .!= b)
        return r
    }

    /// 1 where the mask is set, else 0.
    @inline(__always)
    static func indicator(_ mask: SIMDMask<SIMD8<Int32>>) -> FloatVector {
        FloatVector(repeating: 0).replacing(with: 1, where: mask)
    }
}
