/// What the engine reads about an op kind, from its row of the op table (`OpTable.swift`).
extension OpKind {
    /// The kind's row of the table, made once for all kinds.
    package var descriptor: OpDescriptor { Self.table[rawValue] }

    private static let table: [OpDescriptor] = allCases.map { $0.row }

    /// The op's name in errors, plans and dumps: the case's name (which is also what
    /// `String(describing:)` gives, the enum having no description of its own).
    package var name: String { descriptor.name }

    /// Whether the op can join a fused elementwise region.
    var isElementwise: Bool { descriptor.category == .elementwise }

    /// Whether the op only re-describes its operand's memory.
    var isView: Bool { descriptor.category == .view }

    /// Whether the op is defined by a decomposition into other ops.
    var isComposite: Bool {
        if case .composite = descriptor.semantics { return true }
        return false
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
package enum OpCategory: String, Sendable, Hashable, CaseIterable {
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
    /// Windows sliding over the spatial axes of `[N, C, spatial...]`: convolutions and pooling.
    case window
    /// A new view of the same memory: free, no kernel.
    case view
    /// Moves data into a new buffer (copies, padding, concatenation, gathers).
    case dataMovement
}
