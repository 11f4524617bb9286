/// Eight-lane `Float` vectors: one AVX2 register on x86-64 (built with `-target-cpu haswell`),
/// two NEON registers on arm64.
typealias FloatVector = SIMD8<Float>

/// Vectorised elementary functions for the CPU kernels.
///
/// Each agrees with the C library's function to within the op table's parity tolerance (a few
/// ulp); ops without a vector form here (sin, cos, log, pow) call the scalar specification in
/// `ScalarSemantics.swift` per element, so they match the reference exactly.
enum VectorMath {
    /// `eˣ` by range reduction to `r ∈ [-ln2/2, ln2/2]`, a degree-6 polynomial, and scaling by 2ⁿ.
    @inline(__always)
    static func exp(_ x: FloatVector) -> FloatVector {
        let clamped = x.clamped(lowerBound: FloatVector(repeating: -87.33), upperBound: FloatVector(repeating: 88.72))
        let n = (clamped * 1.442_695_04 + 0.5).rounded(.down)
        var r = clamped - n * 0.693_359_375
        r = r + n * 2.121_944_40e-4
        var p = FloatVector(repeating: 1.987_569_150_0e-4)
        p = p * r + 1.398_199_950_7e-3
        p = p * r + 8.333_451_907_3e-3
        p = p * r + 4.166_579_589_4e-2
        p = p * r + 1.666_666_545_9e-1
        p = p * r + 5.000_000_120_1e-1
        p = p * (r * r) + r + 1
        // 2ⁿ as 2ⁿ⁻¹·2, so that n = 128 (x near ln(FLT_MAX)) stays finite.
        let exponent = (SIMD8<Int32>(n) &+ 126) &<< 23
        var result = p * unsafeBitCast(exponent, to: FloatVector.self) * 2
        result.replace(with: 0, where: x .< -87.33)
        result.replace(with: .infinity, where: x .> 88.72)
        result.replace(with: x, where: x .!= x)
        return result
    }

    /// `tanh(x)`: an odd polynomial near zero, `1 - 2/(e²ˣ + 1)` elsewhere.
    @inline(__always)
    static func tanh(_ x: FloatVector) -> FloatVector {
        let magnitude = abs(x)
        let z = x * x
        var small = FloatVector(repeating: -5.704_988_727_45e-3)
        small = small * z + 2.063_908_879_54e-2
        small = small * z - 5.373_971_555_31e-2
        small = small * z + 1.333_144_220_36e-1
        small = small * z - 3.333_328_194_22e-1
        small = small * z * x + x
        var large = 1 - 2 / (exp(2 * magnitude) + 1)
        large.replace(with: -large, where: x .< 0)
        var result = large
        result.replace(with: small, where: magnitude .< 0.625)
        result.replace(with: x, where: x .!= x)
        return result
    }

    /// The logistic function `1 / (1 + e⁻ˣ)`.
    @inline(__always)
    static func sigmoid(_ x: FloatVector) -> FloatVector {
        1 / (1 + exp(-x))
    }

    /// `erf(x)` from a Chebyshev fit of `erfc` with fractional error below 1.2e-7.
    @inline(__always)
    static func erf(_ x: FloatVector) -> FloatVector {
        let z = abs(x)
        let t = 1 / (1 + 0.5 * z)
        var p = FloatVector(repeating: 0.170_872_77)
        p = p * t - 0.822_152_23
        p = p * t + 1.488_515_87
        p = p * t - 1.135_203_98
        p = p * t + 0.278_868_07
        p = p * t - 0.186_288_06
        p = p * t + 0.096_784_18
        p = p * t + 0.374_091_96
        p = p * t + 1.000_023_68
        p = p * t - 1.265_512_23
        let complement = t * exp(p - z * z)
        var result = 1 - complement
        result.replace(with: -result, where: x .< 0)
        result.replace(with: x, where: x .!= x)
        return result
    }

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
