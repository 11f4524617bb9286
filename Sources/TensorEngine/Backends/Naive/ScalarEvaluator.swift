/// The naive backend's reading of an elementwise expression: the expression turned once into
/// nested closures, then called per element. The specification's own words, as code: every node
/// computes exactly what `ScalarExpression` says, in `Float` or `Int32`.
enum ScalarEvaluator {
    /// One element's operands, each in the domain its type is read into (a float operand in
    /// `floats[i]`, an integer one in `integers[i]`).
    struct Registers {
        let floats: UnsafeMutablePointer<Float>
        let integers: UnsafeMutablePointer<Int32>
    }

    /// A compiled expression: a function of the registers in the expression's domain.
    enum Compiled {
        case float((Registers) -> Float)
        case integer((Registers) -> Int32)
    }

    static func compile(_ expression: TypedExpression) -> Compiled {
        switch expression.domain {
        case .float: .float(float(expression))
        case .integer: .integer(integer(expression))
        }
    }

    /// The expression's value as a `Float` (an integer expression converted).
    private static func float(_ expression: TypedExpression) -> (Registers) -> Float {
        guard expression.domain == .float else {
            let value = integer(expression)
            return { Float(value($0)) }
        }
        switch expression {
        case .operand(let index, _):
            return { $0.floats[index] }
        case .literal(let value, _):
            let constant = Float(value)
            return { _ in constant }
        case .negate(let x):
            let x = float(x)
            return { -x($0) }
        case .absolute(let x):
            let x = float(x)
            return { Swift.abs(x($0)) }
        case .arithmetic(let op, let a, let b):
            let (a, b) = (float(a), float(b))
            switch op {
            case .add: return { a($0) + b($0) }
            case .subtract: return { a($0) - b($0) }
            case .multiply: return { a($0) * b($0) }
            case .divide: return { a($0) / b($0) }
            case .remainder: return { MathFunction.fmod.evaluate(a($0), b($0)) }
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
            let (a, b) = (float(a), float(b))
            return { test($0) ? a($0) : b($0) }
        case .math(let function, let arguments):
            let x = float(arguments[0])
            guard arguments.count > 1 else { return { function.evaluate(x($0)) } }
            let y = float(arguments[1])
            return { function.evaluate(x($0), y($0)) }
        case .toFloat(let x):
            let x = integer(x)
            return { Float(x($0)) }
        case .applied(_, _, let body):
            return float(body)
        case .compare:
            // Comparisons are integers; the guard above converted them.
            let value = integer(expression)
            return { Float(value($0)) }
        }
    }

    /// The expression's value as an `Int32`; integer arithmetic wraps.
    private static func integer(_ expression: TypedExpression) -> (Registers) -> Int32 {
        switch expression {
        case .operand(let index, _):
            return { $0.integers[index] }
        case .literal(let value, _):
            let constant = Int32(converting: value)
            return { _ in constant }
        case .negate(let x):
            let x = integer(x)
            return { 0 &- x($0) }
        case .absolute(let x):
            let x = integer(x)
            return { registers in
                let value = x(registers)
                return value < 0 ? 0 &- value : value
            }
        case .arithmetic(let op, let a, let b):
            let (a, b) = (integer(a), integer(b))
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
            if a.domain == .float {
                let (a, b) = (float(a), float(b))
                return { comparison.holds(a($0), b($0)) ? 1 : 0 }
            }
            let (a, b) = (integer(a), integer(b))
            return { comparison.holds(a($0), b($0)) ? 1 : 0 }
        case .select(let condition, let a, let b):
            let test = truth(condition)
            let (a, b) = (integer(a), integer(b))
            return { test($0) ? a($0) : b($0) }
        case .applied(_, _, let body):
            return integer(body)
        case .math, .toFloat:
            // Float expressions reach here only through a float-to-integer place, which typing
            // never makes; convert as a store into Int32 would.
            let value = float(expression)
            return { Int32(converting: Double(value($0))) }
        }
    }

    /// Whether a condition is non-zero (NaN counts as non-zero).
    private static func truth(_ expression: TypedExpression) -> (Registers) -> Bool {
        switch expression.domain {
        case .float:
            let value = float(expression)
            return { value($0) != 0 }
        case .integer:
            let value = integer(expression)
            return { value($0) != 0 }
        }
    }
}
