#if canImport(Glibc)
import Glibc
#endif

// The meaning of each elementwise op on one scalar: the specification every backend follows.
// Floating-point ops compute in `Float` (Float16 widens to `Float` and rounds back); integer ops
// wrap on overflow; NaN propagates through min/max as NumPy's `minimum`/`maximum` do.

extension UnaryOp {
    func apply(_ x: Float) -> Float {
        switch self {
        case .negate: -x
        case .abs: Swift.abs(x)
        case .sign: x.isNaN ? x : (x > 0 ? 1 : (x < 0 ? -1 : 0))
        case .exp: expf(x)
        case .log: logf(x)
        case .squareRoot: x.squareRoot()
        case .rsqrt: 1 / x.squareRoot()
        case .square: x * x
        case .reciprocal: 1 / x
        case .sin: sinf(x)
        case .cos: cosf(x)
        case .tanh: tanhf(x)
        case .floor: x.rounded(.down)
        case .ceil: x.rounded(.up)
        case .round: x.rounded(.toNearestOrEven)
        case .sigmoid: x >= 0 ? 1 / (1 + expf(-x)) : expf(x) / (1 + expf(x))
        case .relu: x.isNaN ? x : Swift.max(x, 0)
        case .erf: erff(x)
        case .logicalNot: x == 0 ? 1 : 0
        }
    }

    func apply(_ x: Int32) -> Int32 {
        switch self {
        case .negate: 0 &- x
        case .abs: x < 0 ? 0 &- x : x
        case .sign: x > 0 ? 1 : (x < 0 ? -1 : 0)
        case .square: x &* x
        case .relu: Swift.max(x, 0)
        case .logicalNot: x == 0 ? 1 : 0
        case .exp, .log, .squareRoot, .rsqrt, .reciprocal, .sin, .cos, .tanh, .floor, .ceil, .round, .sigmoid, .erf:
            Int32(converting: Double(apply(Float(x))))
        }
    }
}

extension BinaryOp {
    func apply(_ a: Float, _ b: Float) -> Float {
        switch self {
        case .add: a + b
        case .subtract: a - b
        case .multiply: a * b
        case .divide: a / b
        case .pow: powf(a, b)
        case .minimum: a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        case .maximum: a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .equal: a == b ? 1 : 0
        case .notEqual: a != b ? 1 : 0
        case .less: a < b ? 1 : 0
        case .lessEqual: a <= b ? 1 : 0
        case .greater: a > b ? 1 : 0
        case .greaterEqual: a >= b ? 1 : 0
        case .logicalAnd: a != 0 && b != 0 ? 1 : 0
        case .logicalOr: a != 0 || b != 0 ? 1 : 0
        }
    }

    func apply(_ a: Int32, _ b: Int32) -> Int32 {
        switch self {
        case .add: a &+ b
        case .subtract: a &- b
        case .multiply: a &* b
        case .divide: b == 0 ? 0 : a.dividedReportingOverflow(by: b).partialValue
        case .pow: Int32(converting: Double(powf(Float(a), Float(b))))
        case .minimum: Swift.min(a, b)
        case .maximum: Swift.max(a, b)
        case .equal: a == b ? 1 : 0
        case .notEqual: a != b ? 1 : 0
        case .less: a < b ? 1 : 0
        case .lessEqual: a <= b ? 1 : 0
        case .greater: a > b ? 1 : 0
        case .greaterEqual: a >= b ? 1 : 0
        case .logicalAnd: a != 0 && b != 0 ? 1 : 0
        case .logicalOr: a != 0 || b != 0 ? 1 : 0
        }
    }
}
