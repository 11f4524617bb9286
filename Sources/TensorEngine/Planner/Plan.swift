/// One step of a plan: a kernel that produces one node's value on one backend.
///
/// Nodes are named by their position in the plan's ``Plan/nodes`` (the walk's numbering,
/// ``PendingGraph``), never held: a step depends only on the graph's structure, so the steps of
/// a cached plan serve every graph of that structure unchanged.
package struct PlanStep: Sendable {
    /// The position of the node whose value the step produces.
    let output: Int
    /// The fused region ending at the output node, or `nil` when the step runs the node's own op.
    /// Kept as an optional rather than as a ``Kernel``: cached steps live as long as the process,
    /// and LeakSanitizer does not see references inside multi-payload enums (their spare bits
    /// hide the pointer).
    let region: FusedRegion?
    /// The positions of the nodes whose values the kernel reads, in order.
    let operands: [Int]
    /// The positions of the nodes a fused region absorbed (their values are never materialized).
    let absorbed: [Int]
    /// The bound of an activation fused into a convolution (``EpilogueFusion``), the output node
    /// being the activation and the first absorbed node the convolution; `nil` otherwise.
    let epilogue: OutputClamp?
    /// Where the step runs.
    package let backend: BackendID
    /// The planner's estimate of the kernel's time, in seconds.
    let estimatedSeconds: Double
    /// The part of ``estimatedSeconds`` that is the engine's bookkeeping per recorded operation
    /// (recording, walking and planning the graph), which a prepared model's prediction does not
    /// pay: it runs a kept plan again.
    let recordingSeconds: Double
    /// The cost of the kernel, from the op table.
    let cost: Cost
    /// The backends that could run the kernel under the policy.
    let supported: [BackendID]
    /// Why the step runs where it does.
    let reason: PlacementReason
    /// Operands copied into this backend's memory space before the step, with their estimated time.
    let copies: [PlannedCopy]
}

/// A copy of a value between memory spaces that the plan inserts before a step.
package struct PlannedCopy: Sendable, Hashable {
    /// The position of the node whose value is copied.
    let value: Int
    let from: MemorySpace
    let to: MemorySpace
    let bytes: Int
    let estimatedSeconds: Double
}

/// What a plan keeps of its graph's structure: everything but the nodes themselves, which is
/// what the plan cache stores.
package struct PlanTemplate: Sendable {
    let steps: [PlanStep]
    /// The targets' positions, in order.
    let targets: [Int]
    /// Whether every profile used came from a calibration.
    let calibrated: Bool
    /// The engine's fixed seconds for evaluating the plan (the largest of its devices'
    /// ``DeviceProfile/secondsPerEvaluation``), beside its steps and copies.
    let evaluationSeconds: Double
    /// The executor's slots for the positions the steps and targets use.
    let slots: SlotLayout
    /// Whether a step runs a concatenation (whose operands the executor may write in place,
    /// ``ConcatPlacements``).
    let concatenates: Bool

    init(
        steps: [PlanStep], targets: [Int], positions: Int, concatenates: Bool, calibrated: Bool,
        evaluationSeconds: Double
    ) {
        self.steps = steps
        self.targets = targets
        self.concatenates = concatenates
        self.calibrated = calibrated
        self.evaluationSeconds = evaluationSeconds
        slots = SlotLayout(steps: steps, targets: targets, positions: positions)
    }
}

/// The plan the executor runs: steps in execution order over the graph's nodes, and the nodes to
/// materialize.
package struct Plan: Sendable {
    /// The graph's nodes by position (``PendingGraph/nodes``); the positions not produced by a
    /// step are the sources, whose values exist before the plan runs.
    let nodes: [Node]
    let template: PlanTemplate
    /// The nodes asked for, in order (at ``PlanTemplate/targets``).
    let targets: [Node]
    let policy: ComputePolicy

    package var steps: [PlanStep] { template.steps }

    /// Whether every profile used came from a calibration.
    var calibrated: Bool { template.calibrated }

    /// The node a step produces.
    func node(of step: PlanStep) -> Node { nodes[step.output] }

    /// What a step runs: its fused region, its absorbed convolution with the activation's bound,
    /// or its node's op.
    package func kernel(of step: PlanStep) -> Kernel {
        kernel(region: step.region, epilogue: step.epilogue, absorbed: step.absorbed.first, output: step.output)
    }

    /// What the step at `index` runs, its fields read in place (a copy of a step, as an argument,
    /// retains each of its arrays).
    func kernel(ofStep index: Int) -> Kernel {
        let steps = template.steps
        return kernel(
            region: steps[index].region, epilogue: steps[index].epilogue, absorbed: steps[index].absorbed.first,
            output: steps[index].output)
    }

    private func kernel(region: FusedRegion?, epilogue: OutputClamp?, absorbed: Int?, output: Int) -> Kernel {
        if let region { return .fused(region) }
        if let clamp = epilogue, let position = absorbed,
            let fused = EpilogueFusion.kernel(convolution: nodes[position], clamp: clamp)
        {
            return fused
        }
        return .op(nodes[output].op)
    }

    /// The positions of the nodes whose values exist before the plan runs, in order.
    var sourcePositions: [Int] {
        var computed = [Bool](repeating: false, count: nodes.count)
        for step in steps {
            computed[step.output] = true
            for position in step.absorbed { computed[position] = true }
        }
        return nodes.indices.filter { !computed[$0] }
    }
}
