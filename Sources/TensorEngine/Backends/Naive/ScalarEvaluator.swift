/// The naive backend's reading of an elementwise expression: the expression turned once into
/// nested closures, then called per element. The specification's own words, as code: every node
/// computes exactly what `ScalarExpression` says, in its domain's type (`Float`, `Double`, `Int32`
/// or `Int64`).
enum ScalarEvaluator {
    /// One element's operands, each in the domain its type is read into (a float32 operand in
    /// `floats[i]`, an int64 one in `longs[i]`, ...).
    struct Registers {
        let floats: UnsafeMutablePointer<Float>
        let doubles: UnsafeMutablePointer<Double>
        let integers: UnsafeMutablePointer<Int32>
        let longs: UnsafeMutablePointer<Int64>
    }

    /// A compiled expression: a function of the registers in the expression's domain.
    enum Compiled {
        case float((Registers) -> Float)
        case double((Registers) -> Double)
        case integer((Registers) -> Int32)
        case long((Registers) -> Int64)
    }

    static func compile(_ expression: TypedExpression) -> Compiled {
        switch expression.domain {
        case .float: .float(floating(expression))
        case .double: .double(floating(expression))
        case .integer: .integer(integral(expression))
        case .long: .long(integral(expression))
        }
    }

    /// The expression's value in the floating-point type `F`, converted when the expression is of
    /// another domain.
    private static func floating<F: EvaluatedFloat>(_ expression: TypedExpression) -> (Registers) -> F {
        guard expression.domain == F.domain else { return converted(expression) }
        switch expression {
        case .operand(let index, _):
            return { F.register(index, $0) }
        case .literal(let value, _):
            let constant = F(value)
            return { _ in constant }
        case .negate(let x):
            let x: (Registers) -> F = floating(x)
            return { -x($0) }
        case .absolute(let x):
            let x: (Registers) -> F = floating(x)
            return { Swift.abs(x($0)) }
        case .arithmetic(let op, let a, let b):
            let (a, b): ((Registers) -> F, (Registers) -> F) = (floating(a), floating(b))
            switch op {
            case .add: return { a($0) + b($0) }
            case .subtract: return { a($0) - b($0) }
            case .multiply: return { a($0) * b($0) }
            case .divide: return { a($0) / b($0) }
            case .remainder: return { F.evaluate(.fmod, a($0), b($0)) }
            case .minimum:
                return { registers in
                    let (x, y) = (a(registers), b(registers))
                    return x.isNaN || y.isNaN ? .nan : Swift.min(x, y)
                }
            case .maximum:
                return { registers in
                    let (x, y) = (a(registers), b(registers))
                    return x.isNaN || y.isNaN ? .nan : Swift.max(x, y)
                }
            }
        case .select(let condition, let a, let b):
            let test = truth(condition)
            let (a, b): ((Registers) -> F, (Registers) -> F) = (floating(a), floating(b))
            return { test($0) ? a($0) : b($0) }
        case .math(let function, let arguments):
            let x: (Registers) -> F = floating(arguments[0])
            guard arguments.count > 1 else { return { F.evaluate(function, x($0), 0) } }
            let y: (Registers) -> F = floating(arguments[1])
            return { F.evaluate(function, x($0), y($0)) }
        case .converted(let x, _):
            return converted(x)
        case .applied(_, _, let body):
            return floating(body)
        case .compare:
            // Comparisons are of the integer domain; the guard above converted them.
            return converted(expression)
        }
    }

    /// The expression's value in the integer type `I`; integer arithmetic wraps, `x / 0` and
    /// `x % 0` are 0.
    private static func integral<I: EvaluatedInteger>(_ expression: TypedExpression) -> (Registers) -> I {
        guard expression.domain == I.domain else { return converted(expression) }
        switch expression {
        case .operand(let index, _):
            return { I.register(index, $0) }
        case .literal(let value, _):
            let constant = I.converting(value)
            return { _ in constant }
        case .negate(let x):
            let x: (Registers) -> I = integral(x)
            return { 0 &- x($0) }
        case .absolute(let x):
            let x: (Registers) -> I = integral(x)
            return { registers in
                let value = x(registers)
                return value < 0 ? 0 &- value : value
            }
        case .arithmetic(let op, let a, let b):
            let (a, b): ((Registers) -> I, (Registers) -> I) = (integral(a), integral(b))
            switch op {
            case .add: return { a($0) &+ b($0) }
            case .subtract: return { a($0) &- b($0) }
            case .multiply: return { a($0) &* b($0) }
            case .divide:
                return { registers in
                    let (x, y) = (a(registers), b(registers))
                    return y == 0 ? 0 : x.dividedReportingOverflow(by: y).partialValue
                }
            case .remainder:
                return { registers in
                    let (x, y) = (a(registers), b(registers))
                    return y == 0 ? 0 : x.remainderReportingOverflow(dividingBy: y).partialValue
                }
            case .minimum: return { Swift.min(a($0), b($0)) }
            case .maximum: return { Swift.max(a($0), b($0)) }
            }
        case .compare(let comparison, let a, let b):
            let holds = compare(comparison, a, b)
            return { holds($0) ? 1 : 0 }
        case .select(let condition, let a, let b):
            let test = truth(condition)
            let (a, b): ((Registers) -> I, (Registers) -> I) = (integral(a), integral(b))
            return { test($0) ? a($0) : b($0) }
        case .applied(_, _, let body):
            return integral(body)
        case .converted(let x, _):
            return converted(x)
        case .math:
            // Float expressions reach an integer place only through a store, which typing never
            // makes inside an expression; convert as a store would.
            let value: (Registers) -> Double = floating(expression)
            return { I.converting(value($0)) }
        }
    }

    /// A comparison of two values of one domain.
    private static func compare(
        _ comparison: Comparison, _ a: TypedExpression, _ b: TypedExpression
    ) -> (Registers) -> Bool {
        switch a.domain {
        case .float:
            let (a, b): ((Registers) -> Float, (Registers) -> Float) = (floating(a), floating(b))
            return { comparison.holds(a($0), b($0)) }
        case .double:
            let (a, b): ((Registers) -> Double, (Registers) -> Double) = (floating(a), floating(b))
            return { comparison.holds(a($0), b($0)) }
        case .integer:
            let (a, b): ((Registers) -> Int32, (Registers) -> Int32) = (integral(a), integral(b))
            return { comparison.holds(a($0), b($0)) }
        case .long:
            let (a, b): ((Registers) -> Int64, (Registers) -> Int64) = (integral(a), integral(b))
            return { comparison.holds(a($0), b($0)) }
        }
    }

    /// An expression of one domain as a value of another: up the domain order as a `.converted`
    /// node says, down as a store into the type would.
    private static func converted<T: EvaluatedScalar>(_ expression: TypedExpression) -> (Registers) -> T {
        switch expression.domain {
        case .float:
            let value: (Registers) -> Float = floating(expression)
            return { T(evaluated: value($0)) }
        case .double:
            let value: (Registers) -> Double = floating(expression)
            return { T(evaluated: value($0)) }
        case .integer:
            let value: (Registers) -> Int32 = integral(expression)
            return { T(evaluated: value($0)) }
        case .long:
            let value: (Registers) -> Int64 = integral(expression)
            return { T(evaluated: value($0)) }
        }
    }

    /// Whether a condition is non-zero (NaN counts as non-zero).
    private static func truth(_ expression: TypedExpression) -> (Registers) -> Bool {
        switch expression.domain {
        case .float:
            let value: (Registers) -> Float = floating(expression)
            return { value($0) != 0 }
        case .double:
            let value: (Registers) -> Double = floating(expression)
            return { value($0) != 0 }
        case .integer:
            let value: (Registers) -> Int32 = integral(expression)
            return { value($0) != 0 }
        case .long:
            let value: (Registers) -> Int64 = integral(expression)
            return { value($0) != 0 }
        }
    }
}

/// A type one of the evaluator's domains computes in.
protocol EvaluatedScalar {
    /// The domain computed in this type.
    static var domain: ScalarDomain { get }
    /// The operand at `index` in this domain's registers.
    static func register(_ index: Int, _ registers: ScalarEvaluator.Registers) -> Self
    /// A value of another domain converted as a store would (integers from floats truncated and
    /// saturated, integers wrapped to a narrower one).
    init(evaluated value: Float)
    init(evaluated value: Double)
    init(evaluated value: Int32)
    init(evaluated value: Int64)
}

/// `Float` and `Double`.
protocol EvaluatedFloat: EvaluatedScalar, BinaryFloatingPoint {
    init(_ value: Double)
    static func evaluate(_ function: MathFunction, _ x: Self, _ y: Self) -> Self
}

/// `Int32` and `Int64`.
protocol EvaluatedInteger: EvaluatedScalar, FixedWidthInteger, SignedInteger {
    static func converting(_ value: Double) -> Self
}

extension Float: EvaluatedFloat {
    static var domain: ScalarDomain { .float }
    static func register(_ index: Int, _ registers: ScalarEvaluator.Registers) -> Float { registers.floats[index] }
    init(evaluated value: Float) { self = value }
    init(evaluated value: Double) { self = Float(value) }
    init(evaluated value: Int32) { self = Float(value) }
    init(evaluated value: Int64) { self = Float(value) }
    static func evaluate(_ function: MathFunction, _ x: Float, _ y: Float) -> Float { function.evaluate(x, y) }
}

extension Double: EvaluatedFloat {
    static var domain: ScalarDomain { .double }
    static func register(_ index: Int, _ registers: ScalarEvaluator.Registers) -> Double { registers.doubles[index] }
    init(evaluated value: Float) { self = Double(value) }
    init(evaluated value: Double) { self = value }
    init(evaluated value: Int32) { self = Double(value) }
    init(evaluated value: Int64) { self = Double(value) }
    static func evaluate(_ function: MathFunction, _ x: Double, _ y: Double) -> Double { function.evaluate(x, y) }
}

extension Int32: EvaluatedInteger {
    static var domain: ScalarDomain { .integer }
    static func register(_ index: Int, _ registers: ScalarEvaluator.Registers) -> Int32 { registers.integers[index] }
    init(evaluated value: Float) { self = Int32(converting: Double(value)) }
    init(evaluated value: Double) { self = Int32(converting: value) }
    init(evaluated value: Int32) { self = value }
    init(evaluated value: Int64) { self = Int32(truncatingIfNeeded: value) }
    static func converting(_ value: Double) -> Int32 { Int32(converting: value) }
}

extension Int64: EvaluatedInteger {
    static var domain: ScalarDomain { .long }
    static func register(_ index: Int, _ registers: ScalarEvaluator.Registers) -> Int64 { registers.longs[index] }
    init(evaluated value: Float) { self = Int64(converting: Double(value)) }
    init(evaluated value: Double) { self = Int64(converting: value) }
    init(evaluated value: Int32) { self = Int64(value) }
    init(evaluated value: Int64) { self = value }
    static func converting(_ value: Double) -> Int64 { Int64(converting: value) }
}
