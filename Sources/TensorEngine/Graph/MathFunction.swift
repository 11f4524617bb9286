#if canImport(Glibc)
    import Glibc
#endif

/// The mathematical functions elementwise ops are written with: the functions C99's `<math.h>` and
/// OpenCL C share, under the same names, so that every target has each one.
///
/// The list is the whole shared set, not only the functions today's ops use: an op defined with
/// any of them runs on every backend without a change to any backend. Each target maps a function
/// to its own implementation: the naive loops and the host engine's fallback call ``evaluate(_:)``
/// (the C library), the OpenCL kernels call the builtin of the same name, and the host engine
/// vectorises some (`VectorMath`).
package enum MathFunction: Sendable, Hashable, CaseIterable {
    case exp, exp2, expm1, log, log2, log10, log1p
    case sqrt, cbrt
    case sin, cos, tan, asin, acos, atan
    case sinh, cosh, tanh, asinh, acosh, atanh
    case erf, erfc
    /// Rounding to an integral value: toward −∞, toward +∞, to nearest with halves to even, toward
    /// zero.
    case floor, ceil, rint, trunc
    /// Two-argument functions.
    case pow, atan2, fmod, hypot, copysign

    /// The name in C and in OpenCL C.
    var name: String {
        switch self {
        case .exp: "exp"
        case .exp2: "exp2"
        case .expm1: "expm1"
        case .log: "log"
        case .log2: "log2"
        case .log10: "log10"
        case .log1p: "log1p"
        case .sqrt: "sqrt"
        case .cbrt: "cbrt"
        case .sin: "sin"
        case .cos: "cos"
        case .tan: "tan"
        case .asin: "asin"
        case .acos: "acos"
        case .atan: "atan"
        case .sinh: "sinh"
        case .cosh: "cosh"
        case .tanh: "tanh"
        case .asinh: "asinh"
        case .acosh: "acosh"
        case .atanh: "atanh"
        case .erf: "erf"
        case .erfc: "erfc"
        case .floor: "floor"
        case .ceil: "ceil"
        case .rint: "rint"
        case .trunc: "trunc"
        case .pow: "pow"
        case .atan2: "atan2"
        case .fmod: "fmod"
        case .hypot: "hypot"
        case .copysign: "copysign"
        }
    }

    /// The number of arguments.
    var arity: Int {
        switch self {
        case .pow, .atan2, .fmod, .hypot, .copysign: 2
        case .exp, .exp2, .expm1, .log, .log2, .log10, .log1p, .sqrt, .cbrt, .sin, .cos, .tan, .asin, .acos, .atan,
            .sinh, .cosh, .tanh, .asinh, .acosh, .atanh, .erf, .erfc, .floor, .ceil, .rint, .trunc:
            1
        }
    }

    /// The function on `Float`, as the C library computes it (the second argument is ignored by
    /// one-argument functions).
    func evaluate(_ x: Float, _ y: Float = 0) -> Float {
        switch self {
        case .exp: expf(x)
        case .exp2: exp2f(x)
        case .expm1: expm1f(x)
        case .log: logf(x)
        case .log2: log2f(x)
        case .log10: log10f(x)
        case .log1p: log1pf(x)
        case .sqrt: x.squareRoot()
        case .cbrt: cbrtf(x)
        case .sin: sinf(x)
        case .cos: cosf(x)
        case .tan: tanf(x)
        case .asin: asinf(x)
        case .acos: acosf(x)
        case .atan: atanf(x)
        case .sinh: sinhf(x)
        case .cosh: coshf(x)
        case .tanh: tanhf(x)
        case .asinh: asinhf(x)
        case .acosh: acoshf(x)
        case .atanh: atanhf(x)
        case .erf: erff(x)
        case .erfc: erfcf(x)
        case .floor: x.rounded(.down)
        case .ceil: x.rounded(.up)
        case .rint: x.rounded(.toNearestOrEven)
        case .trunc: x.rounded(.towardZero)
        case .pow: powf(x, y)
        case .atan2: atan2f(x, y)
        case .fmod: fmodf(x, y)
        case .hypot: hypotf(x, y)
        case .copysign: copysignf(x, y)
        }
    }

    /// The function on `Double`, as the C library computes it (the second argument is ignored by
    /// one-argument functions).
    func evaluate(_ x: Double, _ y: Double = 0) -> Double {
        switch self {
        case .exp: Glibc.exp(x)
        case .exp2: Glibc.exp2(x)
        case .expm1: Glibc.expm1(x)
        case .log: Glibc.log(x)
        case .log2: Glibc.log2(x)
        case .log10: Glibc.log10(x)
        case .log1p: Glibc.log1p(x)
        case .sqrt: x.squareRoot()
        case .cbrt: Glibc.cbrt(x)
        case .sin: Glibc.sin(x)
        case .cos: Glibc.cos(x)
        case .tan: Glibc.tan(x)
        case .asin: Glibc.asin(x)
        case .acos: Glibc.acos(x)
        case .atan: Glibc.atan(x)
        case .sinh: Glibc.sinh(x)
        case .cosh: Glibc.cosh(x)
        case .tanh: Glibc.tanh(x)
        case .asinh: Glibc.asinh(x)
        case .acosh: Glibc.acosh(x)
        case .atanh: Glibc.atanh(x)
        case .erf: Glibc.erf(x)
        case .erfc: Glibc.erfc(x)
        case .floor: x.rounded(.down)
        case .ceil: x.rounded(.up)
        case .rint: x.rounded(.toNearestOrEven)
        case .trunc: x.rounded(.towardZero)
        case .pow: Glibc.pow(x, y)
        case .atan2: Glibc.atan2(x, y)
        case .fmod: Glibc.fmod(x, y)
        case .hypot: Glibc.hypot(x, y)
        case .copysign: Glibc.copysign(x, y)
        }
    }

    /// Floating-point operations per evaluation, for the cost model (transcendentals count as
    /// several).
    var flops: Double {
        switch self {
        case .floor, .ceil, .rint, .trunc, .copysign: 1
        case .sqrt: 4
        case .exp, .exp2, .expm1, .log, .log2, .log10, .log1p, .cbrt: 10
        case .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh, .tanh, .asinh, .acosh, .atanh, .erf, .erfc,
            .atan2, .fmod, .hypot:
            16
        case .pow: 20
        }
    }

    /// Whether the function is exact: every correct implementation gives the same bits (rounding
    /// to an integral value, sign copies). The others are allowed a few ulp (`Tolerance`).
    var isExact: Bool {
        switch self {
        case .floor, .ceil, .rint, .trunc, .copysign: true
        case .exp, .exp2, .expm1, .log, .log2, .log10, .log1p, .sqrt, .cbrt, .sin, .cos, .tan, .asin, .acos, .atan,
            .sinh, .cosh, .tanh, .asinh, .acosh, .atanh, .erf, .erfc, .pow, .atan2, .fmod, .hypot:
            false
        }
    }

    /// The values the first argument must lie in for a finite result, which is where the parity
    /// suite draws its ordinary samples from (special values are tried everywhere).
    var domain: SampleDomain {
        switch self {
        case .log, .log2, .log10, .sqrt, .pow: .positive
        case .asin, .acos, .atanh, .log1p: .unitInterval
        case .acosh: .atLeastOne
        case .exp, .exp2, .expm1, .cbrt, .sin, .cos, .tan, .atan, .sinh, .cosh, .tanh, .asinh, .erf, .erfc, .floor,
            .ceil, .rint, .trunc, .atan2, .fmod, .hypot, .copysign:
            .all
        }
    }
}

/// Where an op's ordinary parity samples come from.
package enum SampleDomain: Sendable, Hashable {
    /// Normal values (floats), integers in -20...20, or random booleans.
    case all
    /// Values in [0.5, 2.5).
    case positive
    /// Values in (-0.95, 0.95).
    case unitInterval
    /// Values in [1, 3).
    case atLeastOne

    /// A domain inside both (an op whose expression calls several functions samples where all
    /// of them are defined); of two bounded domains, the narrower one.
    func intersection(_ other: SampleDomain) -> SampleDomain {
        switch (self, other) {
        case (.all, _): other
        case (_, .all), (.unitInterval, _), (.atLeastOne, .positive), (.atLeastOne, .atLeastOne): self
        case (.positive, _), (.atLeastOne, .unitInterval): other
        }
    }
}
