/// A row of the op table: everything the engine knows about one kind of op, stated once.
///
/// The front end reads the arity, operand types and shape rule to validate; the planner reads the
/// category and cost rule; the backends read the semantics (and register kernels by kind); the
/// parity suite reads the samples and tolerance; plans and errors read the name. A class: the
/// front end reads a row for every op it records, and a reference is one retain where a struct of
/// closures would be a dozen.
package final class OpDescriptor: Sendable {
    let name: String
    let category: OpCategory
    package let arity: Arity
    package let operandTypes: OperandTypes
    /// The result's signature from the operands' (after the arity and types are checked), or the
    /// rule they break.
    let shape: ShapeRule
    /// The work the op does, and which row of a device profile prices it.
    let cost: CostRule
    package let tolerance: ToleranceRule
    let semantics: OpSemantics
    /// How the parity suite samples the op.
    package let samples: SampleSpec
    /// The layout of a primitive's result when its kernels do not write a fresh row-major buffer,
    /// from the first operand's layout and signature and the result's signature (an append's
    /// prefix of a growable buffer); `nil` for every other op. Nodes are recorded with it, so it
    /// must be what every backend's kernel produces.
    let resultLayout: (@Sendable (Op, Layout, TensorSignature, TensorSignature) -> Layout?)?
    /// For an elementwise op whose operands share one type from a set and whose result takes
    /// their type (`add`, `exp`, ...): that set, so operands of one signature give a result of
    /// the same signature when their type is in it, as the arity, operand types and shape rule
    /// say. The front end's way past the rules for the common case; `nil` for every other op.
    let sameSignatureTypes: ScalarTypeSet?

    init(
        name: String, category: OpCategory, arity: Arity, operandTypes: OperandTypes, shape: @escaping ShapeRule,
        cost: @escaping CostRule, tolerance: ToleranceRule, semantics: OpSemantics, samples: SampleSpec,
        resultLayout: (@Sendable (Op, Layout, TensorSignature, TensorSignature) -> Layout?)? = nil,
        sameSignatureTypes: ScalarTypeSet? = nil
    ) {
        self.name = name
        self.category = category
        self.arity = arity
        self.operandTypes = operandTypes
        self.shape = shape
        self.cost = cost
        self.tolerance = tolerance
        self.semantics = semantics
        self.samples = samples
        self.resultLayout = resultLayout
        self.sameSignatureTypes = sameSignatureTypes
    }
}

/// How many operands an op takes.
package enum Arity: Sendable, Hashable, CustomStringConvertible {
    case exactly(Int)
    case atLeast(Int)

    package var description: String {
        switch self {
        case .exactly(let n): "\(n)"
        case .atLeast(let n): "at least \(n)"
        }
    }

    func accepts(_ count: Int) -> Bool {
        switch self {
        case .exactly(let n): count == n
        case .atLeast(let n): count >= n
        }
    }

    /// The count samples use (the least allowed).
    package var sampleCount: Int {
        switch self {
        case .exactly(let n), .atLeast(let n): n
        }
    }
}

/// Which scalar types an op's operands may have.
package enum OperandTypes: Sendable {
    /// Every operand of one scalar type, from the set.
    case uniform(ScalarTypeSet)
    /// The first operand from the set; the shape rule checks the others (a gather's indices).
    case first(ScalarTypeSet)
    /// A `Bool` mask, then operands of one type from the set (`select`).
    case masked(ScalarTypeSet)

    /// The types the op computes on.
    package var accepted: ScalarTypeSet {
        switch self {
        case .uniform(let set), .first(let set), .masked(let set): set
        }
    }
}

/// How a result's signature follows from the operands': validation of shapes and attributes.
package typealias ShapeRule = @Sendable (Op, [TensorSignature]) throws(RuleViolation) -> TensorSignature

/// The cost of an op from its operands (signatures and, when known, layouts) and result.
package typealias CostRule = @Sendable (Op, [CostOperand], TensorSignature) -> OpCost

/// What an op computes.
package enum OpSemantics: Sendable {
    /// User data, held by its node.
    case source
    /// A new layout over the operand's memory: the function gives it, or `nil` when it would need
    /// a copy (the front end inserts one first).
    case view(@Sendable (Op, Layout) -> Layout?)
    /// Per element, an expression over the operands: every backend runs it from this definition.
    case elementwise(ElementwiseDefinition)
    /// Elements along axes combined into one, or the index of an extreme: every backend
    /// implements the four monoids, the naive loops (in `Double`) are the reference.
    case reduction(ReductionDefinition)
    /// A kernel every backend writes; the naive backend's loops are its reference.
    case primitive
    /// Other ops applied to the operands. A backend runs the decomposition unless it registers a
    /// faster kernel for the op, which the parity suite checks against the decomposition.
    case composite(Decomposition)
}

/// The definition of an elementwise op.
package struct ElementwiseDefinition: Sendable {
    /// The result's scalar type.
    let result: ElementwiseResult
    /// The value of one element: an expression over `.operand(i)`, the op's i-th operand.
    let expression: @Sendable (Op) -> ScalarExpression
}

/// The scalar type of an elementwise op's result.
package enum ElementwiseResult: Sendable, Hashable {
    /// The type of the last operand (arithmetic; `select`, whose first operand is the mask).
    case operandType
    /// `Bool` (comparisons, logical ops).
    case bool
    /// The type in the op's attributes (`cast`).
    case castTarget
}

/// What a reduction computes.
package struct ReductionDefinition: Sendable, Hashable {
    let monoid: ReductionMonoid
    let result: ReductionResult
}

/// How a reduction combines two values; each has an identity, the result of an empty reduction.
package enum ReductionMonoid: Sendable, Hashable {
    case sum, product, maximum, minimum

    var identity: Double {
        switch self {
        case .sum: 0
        case .product: 1
        case .maximum: -.infinity
        case .minimum: .infinity
        }
    }

    /// Combines floats; NaN wins in the extremes.
    func combine(_ a: Double, _ b: Double) -> Double {
        switch self {
        case .sum: a + b
        case .product: a * b
        case .maximum: a.isNaN || b.isNaN ? .nan : Swift.max(a, b)
        case .minimum: a.isNaN || b.isNaN ? .nan : Swift.min(a, b)
        }
    }

    /// Combines integers, wrapping on overflow (an `Int32` result kept in `Int64` wraps when it is
    /// stored: the low 32 bits of a wrapped 64-bit sum or product are the wrapped 32-bit one).
    func combine(_ a: Int64, _ b: Int64) -> Int64 {
        switch self {
        case .sum: a &+ b
        case .product: a &* b
        case .maximum: Swift.max(a, b)
        case .minimum: Swift.min(a, b)
        }
    }

    /// The integer identity for values of `type` (the type's extremes for the extremes).
    func integerIdentity(_ type: ScalarType) -> Int64 {
        let wide = type == .int64
        return switch self {
        case .sum: 0
        case .product: 1
        case .maximum: wide ? .min : Int64(Int32.min)
        case .minimum: wide ? .max : Int64(Int32.max)
        }
    }
}

/// What a reduction gives per output.
package enum ReductionResult: Sendable, Hashable {
    /// The combined value.
    case combined
    /// The combined value over the count (a mean of an empty axis is NaN; of integers, the sum).
    case mean
    /// The position of the first extreme along the one reduced axis (`Int32`); a NaN wins.
    case index
}

/// A composite op as other ops on the same operands, written with the public `Tensor` API.
package struct Decomposition: Sendable {
    let build: @Sendable (Op, [Tensor]) -> Tensor
}

/// How far a backend's result may stray from the naive reference.
package enum ToleranceRule: Sendable, Hashable {
    /// Bitwise-equal results (NaN matches NaN).
    case exact
    /// A bound per element.
    case elementwise(Tolerance)
    /// Sums of many terms: both bounds grow with √K (K terms per output), the absolute one also
    /// with the result's magnitude.
    case accumulating
    /// Normalisations over lines (softmax, layer norm): like ``accumulating`` for the absolute
    /// bound, a fixed relative one.
    case normalizing
    /// An elementwise op's, from what its expression does: exact, or as loose as its loosest
    /// node (a math function, a power, a division).
    case fromExpression

    /// The bound for `op`'s outputs that each combine `reductionLength` terms.
    package func tolerance(for op: Op, reductionLength: Int) -> Tolerance {
        let growth = Float(Swift.max(1, reductionLength)).squareRoot()
        switch self {
        case .exact: return .exact
        case .elementwise(let tolerance): return tolerance
        case .accumulating: return Tolerance(absolute: 2e-6 * growth, relative: 2e-6 * growth)
        case .normalizing: return Tolerance(absolute: 2e-6 * growth, relative: 1e-5)
        case .fromExpression:
            let expression = op.elementwiseExpression
            if expression.usesPower { return .power }
            if expression.isExact { return .exact }
            return expression.usesMath ? .transcendental : .division
        }
    }
}

/// A closeness bound for comparing a backend's result with the reference:
/// `|actual - expected| <= absolute + relative * |expected|`.
package struct Tolerance: Sendable, Hashable, CustomStringConvertible {
    package var absolute: Float
    package var relative: Float

    package init(absolute: Float, relative: Float) {
        self.absolute = absolute
        self.relative = relative
    }

    /// Bitwise-equal results (NaN matches NaN).
    static let exact = Tolerance(absolute: 0, relative: 0)
    /// Math functions, which implementations may compute a few ulp apart.
    static let transcendental = Tolerance(absolute: 1e-6, relative: 4e-6)
    /// Powers, whose error grows with the exponent.
    static let power = Tolerance(absolute: 1e-6, relative: 8e-6)
    /// Division, which OpenCL allows 2.5 ulp.
    static let division = Tolerance(absolute: 0, relative: 2e-7)

    package func accepts(_ actual: Float, _ expected: Float) -> Bool {
        if actual.isNaN || expected.isNaN { return actual.isNaN && expected.isNaN }
        if actual == expected { return true }
        if actual.isInfinite || expected.isInfinite { return false }
        return Swift.abs(actual - expected) <= absolute + relative * Swift.abs(expected)
    }

    package var description: String { "abs \(absolute) + rel \(relative)" }
}

extension ScalarTypeSet {
    /// Every scalar type.
    static let all: ScalarTypeSet = [.float32, .float16, .int32, .bool, .int64, .float64]
    /// The types with arithmetic.
    static let numeric: ScalarTypeSet = [.float32, .float16, .int32, .int64, .float64]
    /// The floating-point types.
    static let floats: ScalarTypeSet = [.float32, .float16, .float64]
    /// The integer types (what indices are).
    static let integers: ScalarTypeSet = [.int32, .int64]
    static let bool: ScalarTypeSet = [.bool]

    /// The members, in `ScalarType.allCases` order.
    package var types: [ScalarType] { ScalarType.allCases.filter(contains) }
}
