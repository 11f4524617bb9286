/// Every kind of op the engine knows: the rows of the op table (`OpTable.swift`).
///
/// The enum has no payloads, so the compiler lists every case (``allCases``) and every switch over
/// it is exhaustive: the parity suite, the kernel registries and the table itself see a new op by
/// construction. What a kind computes beyond its operands (axes, shapes, a target type) is in the
/// ``Op``'s attributes.
enum OpKind: Int, Sendable, Hashable, CaseIterable {
    // Sources
    case constant
    // Elementwise, one operand
    case negate, abs, sign, exp, log, squareRoot, rsqrt, square, reciprocal
    case sin, cos, tanh, floor, ceil, round, sigmoid, relu, erf, gelu, silu, logicalNot
    // Elementwise, two operands
    case add, subtract, multiply, divide, pow, minimum, maximum
    case equal, notEqual, less, lessEqual, greater, greaterEqual, logicalAnd, logicalOr
    // Elementwise, other
    case select, cast
    // Reductions
    case sum, mean, max, min, product, argmax, argmin, variance
    // Along lines
    case cumulativeSum, topK, softmax, logSoftmax, layerNorm
    // Matrix products
    case matmul
    // Views
    case reshape, permute, broadcast, slice
    // Data movement
    case contiguous, pad, concat, gather

    /// The kind's row of the table, made once for all kinds.
    var descriptor: OpDescriptor { Self.table[rawValue] }

    private static let table: [OpDescriptor] = allCases.map { $0.row }

    /// The op's name in errors, plans and dumps: the case's name (which is also what
    /// `String(describing:)` gives, the enum having no description of its own).
    var name: String { descriptor.name }

    /// Whether the op can join a fused elementwise region.
    var isElementwise: Bool { descriptor.category == .elementwise }

    /// Whether the op only re-describes its operand's memory.
    var isView: Bool { descriptor.category == .view }

    /// Whether the op is defined by a decomposition into other ops.
    var isComposite: Bool {
        if case .composite = descriptor.semantics { return true }
        return false
    }

    /// The tolerance of the op without attributes, for outputs of `reductionLength` terms.
    func parityTolerance(reductionLength: Int) -> Tolerance {
        descriptor.tolerance.tolerance(for: Op(self), reductionLength: reductionLength)
    }

    /// The kinds whose semantics is a reduction (sums, extremes, their indices), in table order.
    static let reductions: [OpKind] = allCases.filter { kind in
        if case .reduction = kind.descriptor.semantics { return true }
        return false
    }

    /// The elementwise kinds, in table order.
    static let elementwise: [OpKind] = kinds(in: .elementwise)

    /// The kinds of a category, in table order.
    static func kinds(in category: OpCategory) -> [OpKind] { allCases.filter { $0.descriptor.category == category } }
}

/// The broad family of an op, which decides how it is fused, placed and sampled.
enum OpCategory: String, Sendable, Hashable, CaseIterable {
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
