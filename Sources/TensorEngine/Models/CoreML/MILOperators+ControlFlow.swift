/// MIL's control flow (`while_loop`, `cond`), run while the graph is built: conditions are read
/// on the host and the chosen blocks lowered like any other operations, so a loop becomes its
/// unrolled steps. A condition computed from constants only (a loop counter) leaves the graph
/// valid for any data; one computed from the inputs makes the graph hold for those inputs only.
extension MILOperators {
    /// The most iterations a `while_loop` may unroll to, and the most operations the unrolled
    /// body may add in all: past either, the loop is a typed error, not a graph that exhausts memory.
    static let iterationLimit = 4096
    static let unrolledOperationLimit = 500_000

    static let controlFlow: [String: MILOperator] = [
        // blocks[0]: the condition on the loop variables; blocks[1]: the body, giving new ones.
        "while_loop": MILOperator { context throws(ModelError) in
            let blocks = context.operation.blocks
            guard blocks.count == 2 else {
                throw context.error("a while_loop has \(blocks.count) blocks, not 2", .invalidModel)
            }
            var variables = try context.values("loop_vars")
            var iterations = 0
            while true {
                let condition = try context.runBlock(blocks[0], variables)
                guard condition.count == 1 else { throw context.error("the loop condition gives no single value") }
                guard try context.condition(condition[0], "loop condition") else { break }
                guard iterations < iterationLimit, (iterations + 1) * blocks[1].operations.count <= unrolledOperationLimit
                else {
                    throw context.error(
                        "the loop runs past \(iterations) iterations of \(blocks[1].operations.count) operations, "
                            + "more than the engine unrolls")
                }
                let next = try context.runBlock(blocks[1], variables)
                guard next.count == variables.count else {
                    throw context.error("the loop body gives \(next.count) values for \(variables.count) variables")
                }
                variables = next
                iterations += 1
            }
            return variables
        },
        // blocks[0] runs when `pred` holds, blocks[1] otherwise.
        "cond": MILOperator { context throws(ModelError) in
            let blocks = context.operation.blocks
            guard blocks.count == 2 else { throw context.error("a cond has \(blocks.count) blocks, not 2", .invalidModel) }
            let taken = try context.condition(try context.value("pred"), "branch condition") ? blocks[0] : blocks[1]
            return try context.runBlock(taken, [])
        },
    ]
}
