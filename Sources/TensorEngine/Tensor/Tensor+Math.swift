/// Which form of GELU to compute.
public enum GELUApproximation: Sendable, Hashable {
    /// The exact form, `0.5·x·(1 + erf(x/√2))`.
    case none
    /// The tanh approximation, `0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))`.
    case tanh
}

extension Tensor {
    func unary(_ kind: OpKind, _ file: StaticString, _ line: UInt) -> Tensor {
        Tensor.record(Op(kind), [self], at: SourceLocation(file, line))
    }

    /// The absolute value of each element.
    public func abs(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.abs, file, line) }
    /// -1, 0 or 1 by the sign of each element (NaN stays NaN).
    public func sign(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.sign, file, line) }
    /// eˣ of each element.
    public func exp(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.exp, file, line) }
    /// The natural logarithm of each element.
    public func log(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.log, file, line) }
    /// The square root of each element.
    public func squareRoot(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        unary(.squareRoot, file, line)
    }
    /// The reciprocal of the square root of each element.
    public func rsqrt(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.rsqrt, file, line) }
    /// The square of each element.
    public func squared(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.square, file, line) }
    /// `1 / x` of each element.
    public func reciprocal(file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        unary(.reciprocal, file, line)
    }
    /// The sine of each element (radians).
    public func sin(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.sin, file, line) }
    /// The cosine of each element (radians).
    public func cos(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.cos, file, line) }
    /// The hyperbolic tangent of each element.
    public func tanh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.tanh, file, line) }
    /// Each element rounded toward −∞.
    public func floor(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.floor, file, line) }
    /// Each element rounded toward +∞.
    public func ceil(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.ceil, file, line) }
    /// Each element rounded to the nearest integer, halves to even (as NumPy's `round`).
    public func round(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.round, file, line) }
    /// The logistic function `1 / (1 + e⁻ˣ)` of each element.
    public func sigmoid(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.sigmoid, file, line) }
    /// `max(x, 0)` of each element.
    public func relu(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.relu, file, line) }
    /// The error function of each element.
    public func erf(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.erf, file, line) }
    /// The inverse hyperbolic sine of each element: `log(x + √(x² + 1))`.
    public func asinh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.asinh, file, line) }

    /// The tangent of each element (radians).
    public func tan(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.tan, file, line) }
    /// The arcsine of each element, in radians (NaN outside [-1, 1]).
    public func asin(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.asin, file, line) }
    /// The arccosine of each element, in radians (NaN outside [-1, 1]).
    public func acos(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.acos, file, line) }
    /// The arctangent of each element, in radians.
    public func atan(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.atan, file, line) }
    /// The hyperbolic sine of each element.
    public func sinh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.sinh, file, line) }
    /// The hyperbolic cosine of each element.
    public func cosh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.cosh, file, line) }
    /// The inverse hyperbolic cosine of each element (NaN below 1).
    public func acosh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.acosh, file, line) }
    /// The inverse hyperbolic tangent of each element (NaN outside [-1, 1], ±∞ at ±1).
    public func atanh(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.atanh, file, line) }
    /// 2ˣ of each element.
    public func exp2(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.exp2, file, line) }

    /// SiLU (swish): `x · sigmoid(x)`.
    public func silu(file: StaticString = #fileID, line: UInt = #line) -> Tensor { unary(.silu, file, line) }

    /// GELU, exact (`0.5·x·(1 + erf(x/√2))`) by default or with the tanh approximation; one
    /// elementwise op, fused with its neighbours.
    public func gelu(approximation: GELUApproximation = .none, file: StaticString = #fileID, line: UInt = #line)
        -> Tensor
    {
        Tensor.record(.gelu(approximation), [self], at: SourceLocation(file, line))
    }

    /// The tensor converted to the scalar type of `other`.
    public func cast(like other: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        if other.error != nil { return other }
        return Tensor.record(.cast(other.dtype), [self], at: SourceLocation(file, line))
    }

    /// The tensor converted to another scalar type (floats to integers truncate toward zero and
    /// saturate; NaN becomes 0; anything non-zero becomes `true`).
    public func cast<S: TensorScalar>(to scalarType: S.Type, file: StaticString = #fileID, line: UInt = #line) -> Tensor
    {
        Tensor.record(.cast(S.scalarType), [self], at: SourceLocation(file, line))
    }

    /// The tensor cast to an engine scalar type named by its case (itself when it has that type):
    /// the form the importers and the front end use where the type is a value, not a Swift type.
    func converted(to type: ScalarType) -> Tensor { dtype == type ? self : Tensor.record(.cast(type), [self], at: nil) }
}
