/// One step of a plan: a kernel that produces one node's value on one backend.
struct PlanStep: Sendable {
    /// The node whose value the step produces.
    let node: Node
    /// What runs: the node's op, or a fused region ending at the node.
    let kernel: Kernel
    /// The nodes whose values the kernel reads, in order.
    let operands: [Node]
    /// The nodes a fused region absorbed (their values are never materialized), in order.
    let absorbed: [Node]
    /// Where the step runs.
    let backend: BackendKind
    /// The planner's estimate of the kernel's time, in seconds.
    let estimatedSeconds: Double
    /// The cost of the kernel, from the op table.
    let cost: Cost
    /// The backends that could run the kernel under the policy.
    let supported: [BackendKind]
    /// Why the step runs where it does.
    let reason: PlacementReason
    /// Operands copied into this backend's memory space before the step, with their estimated time.
    let copies: [PlannedCopy]
}

/// A copy of a value between memory spaces that the plan inserts before a step.
struct PlannedCopy: Sendable, Hashable {
    let nodeID: UInt64
    let from: MemorySpace
    let to: MemorySpace
    let bytes: Int
    let estimatedSeconds: Double
}

/// The plan the executor runs: steps in execution order, and the nodes to materialize.
struct Plan: Sendable {
    let steps: [PlanStep]
    let targets: [Node]
    /// Nodes whose values exist before the plan runs (constants, earlier results).
    let sources: [Node]
    let policy: ComputePolicy
    /// Whether every profile used came from a calibration.
    let calibrated: Bool
}
