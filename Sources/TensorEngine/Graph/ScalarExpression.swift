/// The meaning of an elementwise op on one element: an expression over the op's operands.
///
/// This is the only definition of an elementwise op's semantics. Each target turns it into its
/// own code: the naive backend evaluates it element by element (`ScalarEvaluator`), the host
/// engine lowers it to vector loops over strips, and the OpenCL backend prints it as C. A target
/// implements the node kinds below once; a new op written with them needs nothing from any
/// target.
///
/// Values live in one of four domains (``ScalarDomain``): `Float` (float32 and float16 operands,
/// math functions), `Double` (float64), `Int32` (int32 and bool operands, comparisons) or `Int64`
/// (int64). ``typed(operands:)`` decides each node's domain and makes conversions explicit.
package indirect enum ScalarExpression: Sendable, Hashable {
    /// The op's operand at this position.
    case operand(Int)
    /// A constant, in the domain of what it is combined with.
    case literal(Double)
    case negate(ScalarExpression)
    case absolute(ScalarExpression)
    case arithmetic(ArithmeticOperator, ScalarExpression, ScalarExpression)
    /// 1 where the comparison holds, else 0 (false for any comparison with NaN but `notEqual`).
    case compare(Comparison, ScalarExpression, ScalarExpression)
    /// The second operand where the first is non-zero, else the third.
    case select(ScalarExpression, ScalarExpression, ScalarExpression)
    case math(MathFunction, [ScalarExpression])
    /// Another elementwise op applied to expressions: its own expression, unless a target has a
    /// faster form of that op (`silu` applies `sigmoid`).
    case apply(Op, [ScalarExpression])
}

/// Two-operand arithmetic. Integers wrap on overflow; integer division truncates toward zero and
/// `x / 0` is 0 (`Int32.min / -1` is `Int32.min`); `minimum` and `maximum` of floats are NaN when
/// either operand is (NumPy's `minimum`/`maximum`). `remainder` truncates as Swift's `%` and C's
/// `fmod` do (the result has the dividend's sign); an integer remainder by 0 is 0 (NumPy's
/// `fmod`), a float one NaN.
package enum ArithmeticOperator: Sendable, Hashable, CaseIterable {
    case add, subtract, multiply, divide, remainder, minimum, maximum
}

/// Comparisons of two values of one domain.
package enum Comparison: Sendable, Hashable, CaseIterable {
    case equal, notEqual, less, lessEqual, greater, greaterEqual

    func holds<T: Comparable>(_ a: T, _ b: T) -> Bool {
        switch self {
        case .equal: a == b
        case .notEqual: a != b
        case .less: a < b
        case .lessEqual: a <= b
        case .greater: a > b
        case .greaterEqual: a >= b
        }
    }
}

/// Where a value inside an elementwise expression is computed.
///
/// Where two domains meet, the value moves up the order `integer < long < float < double`: an
/// integer meets a float in the float, and anything meets a float64 in `Double`.
package enum ScalarDomain: Sendable, Hashable {
    /// `Float`: float32 and float16 values (float16 is widened), math functions on them.
    case float
    /// `Double`: float64 values, math functions on them.
    case double
    /// `Int32`: int32 and bool values (bools are 0 or 1), comparison results.
    case integer
    /// `Int64`: int64 values.
    case long

    /// The domain an operand of this scalar type is read into.
    init(_ type: ScalarType) {
        switch type {
        case .float32, .float16: self = .float
        case .float64: self = .double
        case .int32, .bool: self = .integer
        case .int64: self = .long
        }
    }

    /// Whether values of the domain are floating point.
    var isFloatingPoint: Bool {
        switch self {
        case .float, .double: true
        case .integer, .long: false
        }
    }

    /// The position in the order values move up in when domains meet.
    private var rank: Int {
        switch self {
        case .integer: 0
        case .long: 1
        case .float: 2
        case .double: 3
        }
    }

    /// The domain two values meet in.
    static func meeting(_ a: ScalarDomain, _ b: ScalarDomain) -> ScalarDomain { a.rank >= b.rank ? a : b }
}

/// An expression whose every node has a domain, conversions up the domain order explicit and
/// `apply` nodes carrying the applied op's expression: what targets consume.
package indirect enum TypedExpression: Sendable, Hashable {
    case operand(Int, ScalarDomain)
    case literal(Double, ScalarDomain)
    case negate(TypedExpression)
    case absolute(TypedExpression)
    case arithmetic(ArithmeticOperator, TypedExpression, TypedExpression)
    /// An integer 0 or 1; both operands are of one domain.
    case compare(Comparison, TypedExpression, TypedExpression)
    /// Branches of one domain; the condition of either.
    case select(TypedExpression, TypedExpression, TypedExpression)
    /// Arguments of one floating-point domain, a result of that domain.
    case math(MathFunction, [TypedExpression])
    /// A value converted up to a wider domain (an integer to a float, an `Int32` to an `Int64`,
    /// a `Float` to a `Double`).
    case converted(TypedExpression, to: ScalarDomain)
    /// `op` on `arguments`; `body` is its expression with the arguments in place of its operands.
    case applied(Op, arguments: [TypedExpression], body: TypedExpression)

    var domain: ScalarDomain {
        switch self {
        case .operand(_, let domain), .literal(_, let domain): domain
        case .negate(let x), .absolute(let x): x.domain
        case .arithmetic(_, let a, _): a.domain
        case .compare: .integer
        case .select(_, let a, _): a.domain
        case .math(_, let arguments): arguments.first?.domain ?? .float
        case .converted(_, let domain): domain
        case .applied(_, _, let body): body.domain
        }
    }
}

extension ScalarExpression {
    /// The expression with domains resolved for operands of the given types: literals take the
    /// domain of what they meet, mixed operands meet in the wider domain (``ScalarDomain``).
    func typed(operands: [ScalarType]) -> TypedExpression {
        typed(operands.map(ScalarDomain.init), expected: nil)
    }

    private func typed(_ operands: [ScalarDomain], expected: ScalarDomain?) -> TypedExpression {
        switch self {
        case .operand(let index):
            return .operand(index, index < operands.count ? operands[index] : .float)
        case .literal(let value):
            return .literal(value, expected ?? .float)
        case .negate(let x):
            return .negate(x.typed(operands, expected: x.natural(operands) ?? expected))
        case .absolute(let x):
            return .absolute(x.typed(operands, expected: x.natural(operands) ?? expected))
        case .arithmetic(let op, let a, let b):
            let domain = Self.unify(a.natural(operands), b.natural(operands)) ?? expected ?? .float
            return .arithmetic(op, a.typed(operands, in: domain), b.typed(operands, in: domain))
        case .compare(let comparison, let a, let b):
            let domain = Self.unify(a.natural(operands), b.natural(operands)) ?? .float
            return .compare(comparison, a.typed(operands, in: domain), b.typed(operands, in: domain))
        case .select(let condition, let a, let b):
            let domain = Self.unify(a.natural(operands), b.natural(operands)) ?? expected ?? .float
            let test = condition.typed(operands, expected: condition.natural(operands) ?? .integer)
            return .select(test, a.typed(operands, in: domain), b.typed(operands, in: domain))
        case .math(let function, let arguments):
            let domain = Self.mathDomain(arguments, operands)
            return .math(function, arguments.map { $0.typed(operands, in: domain) })
        case .apply(let op, let arguments):
            let typedArguments = arguments.map { $0.typed(operands, expected: $0.natural(operands) ?? expected) }
            let body = op.elementwiseExpression.substituting(arguments).typed(operands, expected: expected)
            return .applied(op, arguments: typedArguments, body: body)
        }
    }

    /// Typed in `domain`, converted up to it when it is of a narrower one.
    private func typed(_ operands: [ScalarDomain], in domain: ScalarDomain) -> TypedExpression {
        let result = typed(operands, expected: domain)
        return ScalarDomain.meeting(result.domain, domain) == result.domain ? result : .converted(result, to: domain)
    }

    /// The floating-point domain a math function of these arguments runs in: `Double` when one is
    /// float64, else `Float`.
    private static func mathDomain(_ arguments: [ScalarExpression], _ operands: [ScalarDomain]) -> ScalarDomain {
        let natural = arguments.compactMap { $0.natural(operands) }
        return natural.contains(.double) ? .double : .float
    }

    /// The domain the expression has on its own, or `nil` when it is made of literals only.
    private func natural(_ operands: [ScalarDomain]) -> ScalarDomain? {
        switch self {
        case .operand(let index): index < operands.count ? operands[index] : .float
        case .literal: nil
        case .negate(let x), .absolute(let x): x.natural(operands)
        case .arithmetic(_, let a, let b): Self.unify(a.natural(operands), b.natural(operands))
        case .compare: .integer
        case .select(_, let a, let b): Self.unify(a.natural(operands), b.natural(operands))
        case .math(_, let arguments): Self.mathDomain(arguments, operands)
        case .apply(let op, let arguments): op.elementwiseExpression.substituting(arguments).natural(operands)
        }
    }

    private static func unify(_ a: ScalarDomain?, _ b: ScalarDomain?) -> ScalarDomain? {
        guard let a, let b else { return a ?? b }
        return ScalarDomain.meeting(a, b)
    }

    /// The expression with `arguments[i]` in place of `.operand(i)`.
    func substituting(_ arguments: [ScalarExpression]) -> ScalarExpression {
        switch self {
        case .operand(let index): index < arguments.count ? arguments[index] : self
        case .literal: self
        case .negate(let x): .negate(x.substituting(arguments))
        case .absolute(let x): .absolute(x.substituting(arguments))
        case .arithmetic(let op, let a, let b): .arithmetic(op, a.substituting(arguments), b.substituting(arguments))
        case .compare(let comparison, let a, let b):
            .compare(comparison, a.substituting(arguments), b.substituting(arguments))
        case .select(let c, let a, let b):
            .select(c.substituting(arguments), a.substituting(arguments), b.substituting(arguments))
        case .math(let function, let inner): .math(function, inner.map { $0.substituting(arguments) })
        case .apply(let op, let inner): .apply(op, inner.map { $0.substituting(arguments) })
        }
    }

    /// The nodes of the expression, each once per occurrence, `apply` nodes through their ops'
    /// expressions: what the cost, tolerance and sample domain are read from.
    func visit(_ body: (ScalarExpression) -> Void) {
        body(self)
        switch self {
        case .operand, .literal: break
        case .negate(let x), .absolute(let x): x.visit(body)
        case .arithmetic(_, let a, let b), .compare(_, let a, let b):
            a.visit(body)
            b.visit(body)
        case .select(let c, let a, let b):
            c.visit(body)
            a.visit(body)
            b.visit(body)
        case .math(_, let arguments):
            for argument in arguments { argument.visit(body) }
        case .apply(let op, let arguments):
            op.elementwiseExpression.substituting(arguments).visit(body)
        }
    }

    /// Floating-point operations per element, for the cost model.
    var flops: Double {
        var total = 0.0
        visit { node in
            switch node {
            case .operand, .literal, .apply: break
            case .negate, .absolute, .compare, .select: total += 1
            case .arithmetic(let op, _, _): total += op == .divide || op == .remainder ? 4 : 1
            case .math(let function, _): total += function.flops
            }
        }
        return total
    }

    /// Whether every target computes the same bits: no math function that is allowed a few ulp,
    /// and no float division (OpenCL allows 2.5 ulp for it).
    var isExact: Bool {
        var exact = true
        visit { node in
            switch node {
            case .math(let function, _): exact = exact && function.isExact
            case .arithmetic(.divide, _, _): exact = false
            case .operand, .literal, .negate, .absolute, .arithmetic, .compare, .select, .apply: break
            }
        }
        return exact
    }

    /// Whether the expression raises to a power (whose results are allowed more ulp).
    var usesPower: Bool {
        var found = false
        visit { node in if case .math(.pow, _) = node { found = true } }
        return found
    }

    /// Whether the expression calls a math function.
    var usesMath: Bool {
        var found = false
        visit { node in if case .math = node { found = true } }
        return found
    }

    /// Where the first operand's ordinary samples come from: inside every math function's domain
    /// that the expression applies to an operand directly.
    package var sampleDomain: SampleDomain {
        var domain = SampleDomain.all
        visit { node in
            if case .math(let function, let arguments) = node, case .operand = arguments.first {
                domain = domain.intersection(function.domain)
            }
        }
        return domain
    }
}
