import Foundation

/// Prints a typed elementwise expression as OpenCL C: the OpenCL backend's reading of the op
/// table's semantics.
///
/// Scalar form for `te_elementwise`, eight-wide (`float8`/`int8`) for `te_elementwise8`. Integer
/// arithmetic goes through the wrapping helpers of `elementwise.cl` (`te_iadd`, ...), float
/// minimum and maximum through the NaN-propagating ones; comparisons give 0 or 1 (the vector
/// form negates OpenCL's -1 for true). Math functions are the OpenCL builtins of the same name;
/// in eight-wide code, those not known to be right in vector form on every device run lane by
/// lane (PoCL 3.1's float8 `sin` and `cos` are wrong for small arguments).
enum ExpressionPrinter {
    /// The math functions whose vector forms are used: the ones the parity suite has checked on
    /// PoCL in vector form. Any other runs lane by lane (`TE_LANES8`).
    static let vectorFunctions: Set<MathFunction> = [.exp, .log, .sqrt, .tanh, .erf, .floor, .ceil, .rint, .pow]

    /// The expression's C; `registers[i]` names the value of operand `i`.
    static func print(_ expression: TypedExpression, _ registers: [String], vector: Bool) -> String {
        func p(_ e: TypedExpression) -> String { print(e, registers, vector: vector) }
        switch expression {
        case .operand(let index, _):
            return registers[index]
        case .literal(let value, let domain):
            return literal(value, domain, vector: vector)
        case .negate(let x):
            return x.domain.isFloatingPoint ? "(-\(p(x)))" : "\(x.domain.integerPrefix)neg\(vector ? "8" : "")(\(p(x)))"
        case .absolute(let x):
            if x.domain.isFloatingPoint { return "fabs(\(p(x)))" }
            return vector ? "select(\(p(x)), te_ineg8(\(p(x))), \(p(x)) < 0)" : "\(x.domain.integerPrefix)abs(\(p(x)))"
        case .arithmetic(let op, let a, let b):
            return arithmetic(op, p(a), p(b), domain: a.domain, vector: vector)
        case .compare(let comparison, let a, let b):
            let test = "\(p(a)) \(symbol(comparison)) \(p(b))"
            return vector ? "(-(\(test)))" : "((\(test)) ? 1 : 0)"
        case .select(let condition, let a, let b):
            return vector
                ? "select(\(p(b)), \(p(a)), (\(p(condition))) != 0)" : "((\(p(condition))) != 0 ? \(p(a)) : \(p(b)))"
        case .math(let function, let arguments):
            let list = arguments.map(p).joined(separator: ", ")
            guard vector, !vectorFunctions.contains(function) else { return "\(function.name)(\(list))" }
            return arguments.count > 1
                ? "TE_LANES8_2(\(function.name), \(list))" : "TE_LANES8(\(function.name), \(list))"
        case .converted(let x, let domain):
            let type = domain.clType
            return vector ? "convert_\(type)8(\(p(x)))" : "((\(type))(\(p(x))))"
        case .applied(_, _, let body):
            return p(body)
        }
    }

    private static func arithmetic(
        _ op: ArithmeticOperator, _ a: String, _ b: String, domain: ScalarDomain, vector: Bool
    ) -> String {
        let lanes = vector ? "8" : ""
        if domain.isFloatingPoint {
            let extreme = domain == .double ? "te_d" : "te_"
            switch op {
            case .add: return "(\(a) + \(b))"
            case .subtract: return "(\(a) - \(b))"
            case .multiply: return "(\(a) * \(b))"
            case .divide: return "(\(a) / \(b))"
            case .remainder: return vector ? "TE_LANES8_2(fmod, \(a), \(b))" : "fmod(\(a), \(b))"
            case .minimum: return "\(extreme)min\(lanes)(\(a), \(b))"
            case .maximum: return "\(extreme)max\(lanes)(\(a), \(b))"
            }
        }
        let prefix = domain.integerPrefix
        switch op {
        case .add: return "\(prefix)add\(lanes)(\(a), \(b))"
        case .subtract: return "\(prefix)sub\(lanes)(\(a), \(b))"
        case .multiply: return "\(prefix)mul\(lanes)(\(a), \(b))"
        case .divide: return "\(prefix)div\(lanes)(\(a), \(b))"
        case .remainder: return "\(prefix)rem\(lanes)(\(a), \(b))"
        case .minimum: return vector ? "select(\(a), \(b), \(b) < \(a))" : "\(prefix)min(\(a), \(b))"
        case .maximum: return vector ? "select(\(a), \(b), \(b) >= \(a))" : "\(prefix)max(\(a), \(b))"
        }
    }

    private static func symbol(_ comparison: Comparison) -> String {
        switch comparison {
        case .equal: "=="
        case .notEqual: "!="
        case .less: "<"
        case .lessEqual: "<="
        case .greater: ">"
        case .greaterEqual: ">="
        }
    }

    /// A constant in C: a float with every digit `Float` keeps, a double exact, or an integer
    /// (saturated).
    static func literal(_ value: Double, _ domain: ScalarDomain, vector: Bool) -> String {
        let scalar: String
        switch domain {
        case .float:
            let float = Float(value)
            if float.isNaN {
                scalar = "NAN"
            } else if float.isInfinite {
                scalar = float < 0 ? "(-INFINITY)" : "INFINITY"
            } else {
                // A hexadecimal literal is exact (the float widened to double loses nothing).
                scalar = "(" + String(format: "%a", Double(float)) + "f)"
            }
        case .double:
            scalar = value.isNaN ? "((double)NAN)" : value.isInfinite ? (value < 0 ? "(-(double)INFINITY)" : "((double)INFINITY)")
                : "(" + String(format: "%a", value) + ")"
        case .integer:
            let integer = Int32(converting: value)
            scalar = integer == .min ? "(-2147483647 - 1)" : "(\(integer))"
        case .long:
            let integer = Int64(converting: value)
            scalar = integer == .min ? "(-9223372036854775807L - 1)" : "(\(integer)L)"
        }
        guard vector else { return scalar }
        return "((\(domain.clType)8)\(scalar))"
    }
}

extension ScalarDomain {
    /// The prefix of `elementwise.cl`'s wrapping integer helpers for the domain (`te_iadd`,
    /// `te_ladd`); float domains have none.
    var integerPrefix: String {
        switch self {
        case .long: "te_l"
        case .integer, .float, .double: "te_i"
        }
    }

    /// The OpenCL C type values of the domain are computed in.
    var clType: String {
        switch self {
        case .float: "float"
        case .double: "double"
        case .integer: "int"
        case .long: "long"
        }
    }
}
