/// The op table: one entry per primitive operation, with the facts every part of the engine reads.
///
/// The planner reads ``category`` and the cost formula (``Op/cost(inputs:output:)``), the parity
/// suite reads ``allCases``, ``parityTolerance`` and the sample cases, `tensorbench` and the plan
/// dumps read ``name``. Switches over it are exhaustive, so a new op breaks the build wherever it
/// must be handled.
enum OpKind: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case constant
    case unary(UnaryOp)
    case binary(BinaryOp)
    case select, cast
    case reduce(ReductionOp)
    case argReduce(ArgReductionOp)
    case cumulativeSum, topK, matmul, softmax, logSoftmax, layerNorm
    case reshape, permute, broadcast, slice, contiguous, pad, concat, gather

    /// Every op, parameterised families expanded.
    static let allCases: [OpKind] =
        [.constant] + UnaryOp.allCases.map(OpKind.unary) + BinaryOp.allCases.map(OpKind.binary)
        + [.select, .cast] + ReductionOp.allCases.map(OpKind.reduce)
        + ArgReductionOp.allCases.map(OpKind.argReduce)
        + [.cumulativeSum, .topK, .matmul, .softmax, .logSoftmax, .layerNorm]
        + [.reshape, .permute, .broadcast, .slice, .contiguous, .pad, .concat, .gather]

    /// The broad family of an op, which decides how it is costed, fused and placed.
    enum Category: String, Sendable, Hashable {
        /// User data; no computation.
        case source
        /// One output element from the same-position elements of the operands.
        case elementwise
        /// Combines elements along axes (`sum`, `argmax`, ...).
        case reduction
        /// Works on whole lines along an axis (`softmax`, `layerNorm`, `cumulativeSum`, `topK`).
        case lineWise
        /// Matrix products.
        case matmul
        /// A new view of the same memory: free, no kernel.
        case view
        /// Moves data into a new buffer (copies, padding, concatenation, gathers).
        case dataMovement
    }

    /// The op's name in errors, plans and dumps.
    var name: String {
        switch self {
        case .constant: "constant"
        case .unary(let op): op.rawValue
        case .binary(let op): op.rawValue
        case .select: "select"
        case .cast: "cast"
        case .reduce(let op): op.rawValue
        case .argReduce(let op): op.rawValue
        case .cumulativeSum: "cumulativeSum"
        case .topK: "topK"
        case .matmul: "matmul"
        case .softmax: "softmax"
        case .logSoftmax: "logSoftmax"
        case .layerNorm: "layerNorm"
        case .reshape: "reshape"
        case .permute: "permute"
        case .broadcast: "broadcast"
        case .slice: "slice"
        case .contiguous: "contiguous"
        case .pad: "pad"
        case .concat: "concat"
        case .gather: "gather"
        }
    }

    var description: String { name }

    /// The op's family.
    var category: Category {
        switch self {
        case .constant: .source
        case .unary, .binary, .select, .cast: .elementwise
        case .reduce, .argReduce: .reduction
        case .cumulativeSum, .topK, .softmax, .logSoftmax, .layerNorm: .lineWise
        case .matmul: .matmul
        case .reshape, .permute, .broadcast, .slice: .view
        case .contiguous, .pad, .concat, .gather: .dataMovement
        }
    }

    /// Whether the op can join a fused elementwise region.
    var isElementwise: Bool { category == .elementwise }

    /// Whether the op only re-describes its operand's memory.
    var isView: Bool { category == .view }

    /// How far a backend's result may stray from the naive reference.
    ///
    /// `reductionLength` is the number of terms summed into one output (K for matmul, the reduced
    /// extent for sums); accumulated rounding error grows with it, so the bound does too.
    func parityTolerance(reductionLength: Int) -> Tolerance {
        let growth = Float(max(1, reductionLength)).squareRoot()
        switch self {
        case .constant, .reshape, .permute, .broadcast, .slice, .contiguous, .pad, .concat, .gather,
            .cast, .select, .argReduce, .topK:
            return .exact
        case .unary(let op):
            switch op {
            case .negate, .abs, .sign, .square, .relu, .floor, .ceil, .round, .logicalNot: return .exact
            case .exp, .log, .squareRoot, .rsqrt, .reciprocal, .sin, .cos, .tanh, .sigmoid, .erf:
                return Tolerance(absolute: 1e-6, relative: 4e-6)
            }
        case .binary(let op):
            switch op {
            case .pow: return Tolerance(absolute: 1e-6, relative: 8e-6)
            case .divide: return Tolerance(absolute: 0, relative: 2e-7)
            case .add, .subtract, .multiply, .minimum, .maximum, .equal, .notEqual, .less, .lessEqual,
                .greater, .greaterEqual, .logicalAnd, .logicalOr:
                return .exact
            }
        case .reduce, .cumulativeSum, .matmul:
            return Tolerance(absolute: 2e-6 * growth, relative: 2e-6 * growth)
        case .softmax, .logSoftmax, .layerNorm:
            return Tolerance(absolute: 2e-6 * growth, relative: 1e-5)
        }
    }
}

/// A closeness bound for comparing a backend's result with the reference:
/// `|actual - expected| <= absolute + relative * |expected|`.
struct Tolerance: Sendable, Hashable, CustomStringConvertible {
    var absolute: Float
    var relative: Float

    /// Bitwise-equal results (NaN matches NaN).
    static let exact = Tolerance(absolute: 0, relative: 0)

    func accepts(_ actual: Float, _ expected: Float) -> Bool {
        if actual.isNaN || expected.isNaN { return actual.isNaN && expected.isNaN }
        if actual == expected { return true }
        if actual.isInfinite || expected.isInfinite { return false }
        return Swift.abs(actual - expected) <= absolute + relative * Swift.abs(expected)
    }

    var description: String { "abs \(absolute) + rel \(relative)" }
}
