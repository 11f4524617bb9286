/// The MIL operations the engine runs, by operation type, gathered from the families' tables
/// (`MILOperators+Elementwise.swift`, `+Tensor.swift`, `+Network.swift`, `+Constexpr.swift`).
///
/// Each lowering composes op-table ops through the public ``Tensor`` API, so every backend runs
/// it, the planner costs it and the parity suite already covers what it computes.
enum MILOperators {
    /// Every implemented operation type.
    static let table: [String: MILOperator] = {
        var table: [String: MILOperator] = [:]
        for family in [
            elementwise, activations, tensorOperations, indexing, network, recurrent, reductions, constexpr,
            stateOperations, controlFlow,
        ] {
            table.merge(family) { first, _ in first }
        }
        return table
    }()

    /// The operator for an operation type (`ios18.` prefixes dropped), or `nil`.
    static func lookup(_ type: String) -> MILOperator? { table[type] }

    /// An operation of one tensor parameter `x` and one result.
    static func unary(_ compute: @escaping @Sendable (Tensor, MILOperationContext) throws(ModelError) -> Tensor)
        -> MILOperator
    {
        MILOperator { context throws(ModelError) in
            [try context.output(try compute(try context.tensor("x"), context))]
        }
    }

    /// An operation of tensors `x` and `y` (broadcast) and one result.
    static func binary(_ compute: @escaping @Sendable (Tensor, Tensor) -> Tensor) -> MILOperator {
        MILOperator { context throws(ModelError) in
            [try context.output(compute(try context.tensor("x"), try context.tensor("y")))]
        }
    }

    /// An axis in `-rank..<rank`, made non-negative (a rank-0 tensor has none).
    static func axis(_ axis: Int, rank: Int, _ context: MILOperationContext) throws(ModelError) -> Int {
        guard axis >= -rank, axis < rank else {
            throw context.error("axis \(axis) is out of range for rank \(rank)")
        }
        return axis < 0 ? axis + rank : axis
    }

    /// The number of elements of `shape`, checked: no negative size, no overflow.
    static func elementCount(_ shape: [Int], _ context: MILOperationContext) throws(ModelError) -> Int {
        var count = 1
        for size in shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard size >= 0, !overflow else { throw context.error("the shape \(shape) has no valid element count") }
            count = product
        }
        return count
    }

    /// Axes in `-rank..<rank`, made non-negative.
    static func axes(_ axes: [Int], rank: Int, _ context: MILOperationContext) throws(ModelError) -> [Int] {
        try axes.map { value throws(ModelError) in try axis(value, rank: rank, context) }
    }
}
