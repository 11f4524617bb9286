/// The plan for evaluating some tensors: where each operation runs, what it is expected to cost,
/// and why. Like Core ML's `MLComputePlan`, it is built without running anything; unlike a report
/// beside the real decision, it is what the executor runs (``evaluate()``).
///
/// ```swift
/// let plan = try ComputePlan(for: [logits], policy: .all)
/// print(plan.text())          // aligned table: op, shape, device, estimate, share, reason
/// try await plan.evaluate()   // runs exactly these steps
/// ```
public struct ComputePlan: Sendable {
    /// Where an operation may run and where it will.
    public struct DeviceUsage: Sendable, Hashable, Codable {
        /// The backend the planner chose.
        public let preferred: BackendID
        /// Every backend allowed by the policy that can run the operation.
        public let supported: [BackendID]
    }

    /// An operation's estimated cost.
    public struct EstimatedCost: Sendable, Hashable, Codable {
        /// Estimated seconds of the operation on its preferred backend (copies excluded).
        public let seconds: Double
        /// The operation's share of the plan's total estimate, in [0, 1]; the weights sum to 1.
        public let weight: Double
    }

    /// A copy between memory spaces inserted before an operation.
    public struct Copy: Sendable, Hashable, Codable {
        /// The operand copied (`%3` for operation 3, `input0` for the first constant).
        public let value: String
        /// Memory space copied from (`host`, `opencl:0`).
        public let from: String
        /// Memory space copied to.
        public let to: String
        /// Bytes copied.
        public let bytes: Int
        /// Estimated seconds of the copy.
        public let estimatedSeconds: Double
    }

    /// One step of the plan.
    public struct Operation: Sendable, Hashable {
        /// The position in execution order; other operations refer to it as `%index`.
        public let index: Int
        /// The op's name (`matmul`, `softmax`, `fused(multiply+add+relu)`).
        public let op: String
        /// The primitive ops a fused region evaluates in one pass (empty for a single op).
        public let fusedOps: [String]
        /// The result's shape.
        public let shape: [Int]
        /// The result's scalar type.
        public let scalarType: ScalarType
        /// The operands: `%i` for earlier operations, `input<n>` for constants and earlier results.
        public let inputs: [String]
        /// Where it may run and where it runs.
        public let deviceUsage: DeviceUsage
        /// What it is expected to cost.
        public let estimatedCost: EstimatedCost
        /// FLOPs and bytes from the op table's cost formula.
        public let cost: Cost
        /// Why it runs where it does.
        public let reason: String
        /// Copies inserted before it.
        public let copies: [Copy]
        /// Seconds it took when the plan was run in measure mode; `nil` otherwise.
        public internal(set) var measuredSeconds: Double?
    }

    /// The operations in execution order.
    public internal(set) var operations: [Operation]
    /// The compute policy the plan obeys.
    public let policy: ComputePolicy
    /// The plan's estimated time: operations, copies and the engine's fixed cost of an
    /// evaluation (which no operation's weight includes).
    public let totalEstimatedSeconds: Double
    /// Bytes copied between memory spaces.
    public let transferBytes: Int
    /// The most bytes of intermediates the plan keeps alive at once (by the executor's release rule).
    public let estimatedPeakBytes: Int
    /// How often consecutive operations change backend.
    public let deviceSwitches: Int
    /// Whether every device profile used came from a calibration (else documented defaults); the
    /// naive reference's default counts as calibrated.
    public let calibrated: Bool
    /// Whether the plan came from the plan cache.
    public let cached: Bool
    /// The program the plan is of: a model's operations for a model's plan
    /// (``load(contentsOf:configuration:inputShapes:)``), the engine's operations otherwise.
    public internal(set) var modelStructure: ModelStructure = .unsupported
    /// Each program operation's device usage, by ``ModelStructure/Operation/identifier``.
    var usageByOperation: [Int: DeviceUsage] = [:]
    /// Each program operation's estimated cost, by ``ModelStructure/Operation/identifier``.
    var costByOperation: [Int: EstimatedCost] = [:]

    let plan: Plan

    /// The graph node each operation computes, in operation order (what a model's plan maps
    /// back to the model's own nodes).
    var operationNodes: [ObjectIdentifier] { plan.steps.map { ObjectIdentifier(plan.node(of: $0)) } }

    /// Plans the evaluation of `tensors` without running it.
    ///
    /// - Parameter policy: by default the task-local policy, else `TENSORENGINE_POLICY`, else `.all`.
    /// - Throws: the error a tensor carries, or ``TensorError/Kind/unsupported`` when no allowed
    ///   backend runs some op.
    public init(for tensors: [Tensor], policy: ComputePolicy? = nil) throws(TensorError) {
        try self.init(for: tensors, policy: policy, prepared: false)
    }

    /// Plans the evaluation of `tensors`; `prepared` estimates runs of the plan kept and run
    /// again (a model's prediction), which do not pay for recording and planning the graph.
    package init(for tensors: [Tensor], policy: ComputePolicy?, prepared: Bool) throws(TensorError) {
        if let failed = tensors.first(where: { $0.error != nil })?.error { throw failed }
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        let (plan, cached) = try Engine.shared.plan(tensors.compactMap(\.node), policy: chosen, reusingOtherSizes: false)
        self.init(plan, cached: cached, prepared: prepared)
    }

    init(_ plan: Plan, cached: Bool, prepared: Bool = false) {
        self.plan = plan
        self.policy = plan.policy
        self.calibrated = plan.calibrated
        self.cached = cached
        var names = [String](repeating: "?", count: plan.nodes.count)
        for (index, position) in plan.sourcePositions.enumerated() { names[position] = "input\(index)" }
        for (index, step) in plan.steps.enumerated() { names[step.output] = "%\(index)" }
        // A prepared run's step: its kernel, not the recording of its operations.
        let stepSeconds = { (step: PlanStep) in step.estimatedSeconds - (prepared ? step.recordingSeconds : 0) }
        let copySeconds = plan.steps.reduce(0.0) { $0 + $1.copies.reduce(0) { $0 + $1.estimatedSeconds } }
        let total = plan.steps.reduce(0.0) { $0 + stepSeconds($1) } + copySeconds
        self.totalEstimatedSeconds = total + plan.template.evaluationSeconds
        self.transferBytes = plan.steps.reduce(0) { $0 + $1.copies.reduce(0) { $0 + $1.bytes } }
        self.deviceSwitches = zip(plan.steps, plan.steps.dropFirst()).filter { $0.backend != $1.backend }.count
        self.estimatedPeakBytes = Self.peakBytes(plan)
        self.operations = plan.steps.enumerated().map { index, step in
            let seconds = stepSeconds(step) + step.copies.reduce(0) { $0 + $1.estimatedSeconds }
            let node = plan.node(of: step)
            let (name, fused): (String, [String]) = switch plan.kernel(of: step) {
            case .op(let op) where step.epilogue != nil: ("fused(\(op.name)+\(node.op.name))", [op.name, node.op.name])
            case .op(let op): (op.name, [])
            case .fused(let region): ("fused(\(region.name))", region.name.split(separator: "+").map(String.init))
            }
            return Operation(
                index: index, op: name, fusedOps: fused, shape: node.signature.shape, scalarType: node.signature.scalarType,
                inputs: step.operands.map { names[$0] },
                deviceUsage: DeviceUsage(preferred: step.backend, supported: step.supported),
                estimatedCost: EstimatedCost(
                    seconds: stepSeconds(step), weight: total > 0 ? seconds / total : 1 / Double(max(plan.steps.count, 1))),
                cost: step.cost, reason: step.reason.description,
                copies: step.copies.map { Copy(value: names[$0.value], from: $0.from.description, to: $0.to.description, bytes: $0.bytes, estimatedSeconds: $0.estimatedSeconds) },
                measuredSeconds: nil)
        }
        describeEngineProgram()
    }

    /// The peak of live intermediate bytes when each value is released after its last reader.
    private static func peakBytes(_ plan: Plan) -> Int {
        var remaining = [Int](repeating: 0, count: plan.nodes.count)
        for step in plan.steps { for operand in step.operands { remaining[operand] += 1 } }
        for position in plan.template.targets { remaining[position] += 1 }
        var live = 0
        var peak = 0
        var sizes = [Int](repeating: 0, count: plan.nodes.count)
        for step in plan.steps {
            let isView = if case .op(let op) = plan.kernel(of: step) { op.kind.isView } else { false }
            let bytes = isView ? 0 : plan.node(of: step).signature.byteCount
            sizes[step.output] = bytes
            live += bytes
            peak = max(peak, live)
            for operand in step.operands {
                remaining[operand] -= 1
                if remaining[operand] == 0 { live -= sizes[operand] }
            }
        }
        return peak
    }

    /// Runs exactly this plan and keeps the results on the tensors it was made for.
    @discardableResult
    public func evaluate() async throws(TensorError) -> EvaluationStatistics {
        try MemoryLimit.check(plan)
        let (results, statistics) = try Executor(backends: Engine.shared.backends).run(plan)
        for (node, value) in zip(plan.targets, results) { node.store(value) }
        return statistics
    }

    /// Runs the plan with a synchronisation after every step and returns the plan with each
    /// operation's measured time beside its estimate (measure mode). Results are kept too.
    public func measured() async throws(TensorError) -> ComputePlan {
        try await measured(runs: 1, warmUp: false)
    }

    /// Runs the plan `runs` times in measure mode, after one run that is not counted when `warmUp`
    /// (the first run of a model packs its weights and touches its memory for the first time), and
    /// returns the plan with each operation's median measured time beside its estimate.
    ///
    /// - Parameters:
    ///   - runs: the measured runs, at least 1.
    ///   - warmUp: whether one uncounted run comes first.
    public func measured(runs: Int, warmUp: Bool = true) async throws(TensorError) -> ComputePlan {
        guard runs >= 1 else { throw TensorError(.invalidArgument, op: "measure", message: "measured runs must be at least 1, got \(runs)") }
        try MemoryLimit.check(plan)
        let executor = Executor(backends: Engine.shared.backends)
        if warmUp { _ = try executor.run(plan, measure: true) }
        var samples = [[Double]](repeating: [], count: operations.count)
        for _ in 0..<runs {
            let (results, _, timings) = try executor.run(plan, measure: true)
            for (node, value) in zip(plan.targets, results) { node.store(value) }
            for index in samples.indices where index < timings.count { samples[index].append(timings[index]) }
        }
        var copy = self
        for index in copy.operations.indices where !samples[index].isEmpty {
            let sorted = samples[index].sorted()
            copy.operations[index].measuredSeconds = sorted[sorted.count / 2]
        }
        return copy
    }
}
