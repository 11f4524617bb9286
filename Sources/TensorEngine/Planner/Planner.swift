import Foundation

/// Decides where each pending op runs: the cheapest placement of the whole graph, copies included.
///
/// For every step and every backend the policy allows and that supports the step, the planner
/// computes the cheapest way to have the step's result in that backend's memory: the kernel's
/// estimated time plus, for each operand, the cheapest of producing it somewhere and copying it
/// over. This dynamic programme over the topological order is exact for trees and a close,
/// deterministic approximation for shared subgraphs. Placement then walks back from the targets
/// (which must reach the host), giving each step the backend that minimises its subtree's cost.
package struct Planner {
    let backends: [any Backend]
    let profiles: [BackendID: DeviceProfile]
    let policy: ComputePolicy
    /// The backends the policy allows, in preference order; the planner's tables index them by
    /// position.
    private let allowed: [any Backend]
    /// The profile of each allowed backend, by position.
    private let allowedProfiles: [DeviceProfile?]
    /// Whether every allowed backend plans with a calibrated profile (the naive reference's
    /// default counts: calibrations on first use leave it, as it describes plain loops).
    private let calibrated: Bool

    package init(backends: [any Backend], profiles: [BackendID: DeviceProfile], policy: ComputePolicy) {
        self.backends = backends
        self.profiles = profiles
        self.policy = policy
        allowed = backends.filter { policy.allows($0) }
        allowedProfiles = allowed.map { profiles[$0.id] }
        calibrated = zip(allowed, allowedProfiles).allSatisfy { backend, profile in
            profile?.calibrated ?? false || !Calibration.calibratesOnFirstUse(backend)
        }
    }

    /// A step before placement: the kernel, its node and operands.
    struct Candidate {
        let node: Node
        let kernel: Kernel
        let operands: [Node]
        let absorbed: [Node]
        /// The bound of an activation fused into the absorbed convolution (``EpilogueFusion``).
        var epilogue: OutputClamp? = nil
    }

    /// The planner's decision for one candidate.
    struct Decision: Sendable {
        let backend: BackendID
        let estimatedSeconds: Double
        let cost: Cost
        let supported: [BackendID]
        let reason: PlacementReason
    }

    /// Plans the pending graph behind `targets`, reusing the plan of a graph of the same
    /// structure when the cache has one.
    package func plan(
        targets: [Node], cache: PlanCache?, reusingOtherSizes: Bool = true
    ) throws(TensorError) -> (Plan, cached: Bool) {
        let graph = PendingGraph(targets: targets)
        if let cache, let template = cache.plan(for: graph, policy: policy) {
            return (Plan(nodes: graph.nodes, template: template, targets: targets, policy: policy), true)
        }
        // The same structure at similar sizes: its steps, once checked to run at these sizes.
        if let cache, reusingOtherSizes,
            let template = cache.plansUpToSizes(for: graph, targets: targets, policy: policy)
            .first(where: { fits($0, graph) })
        {
            cache.store(template, for: graph, targets: targets, policy: policy, reusableAtOtherSizes: false)
            return (Plan(nodes: graph.nodes, template: template, targets: targets, policy: policy), true)
        }
        let candidates = FusionPass.candidates(for: graph)
        let decisions = try place(candidates, sources: graph.sources, targets: targets)
        let template = assemble(graph, candidates, decisions, targets: targets)
        cache?.store(template, for: graph, targets: targets, policy: policy)
        return (Plan(nodes: graph.nodes, template: template, targets: targets, policy: policy), false)
    }

    /// Whether a plan made for the same structure at other sizes runs this graph: each fused
    /// region still has one shape, and each step's backend still runs its kernel at the new
    /// sizes. (Its estimates stay those of the sizes it was made for.)
    func fits(_ template: PlanTemplate, _ graph: PendingGraph) -> Bool {
        for step in template.steps {
            guard step.output < graph.nodes.count, let backend = allowed.first(where: { $0.id == step.backend }) else {
                return false
            }
            let node = graph.nodes[step.output]
            var kernel = Kernel.op(node.op)
            if let clamp = step.epilogue {
                guard let convolution = step.absorbed.first.map({ graph.nodes[$0] }),
                    let fused = EpilogueFusion.kernel(convolution: convolution, clamp: clamp)
                else { return false }
                kernel = fused
            } else if let region = step.region {
                let shape = node.signature.shape
                guard step.absorbed.allSatisfy({ graph.nodes[$0].signature.shape == shape }) else { return false }
                kernel = .fused(region)
            }
            let inputs = step.operands.map { graph.nodes[$0].signature }
            guard backend.capability(for: kernel, inputs: inputs, output: node.signature).isSupported else {
                return false
            }
        }
        return true
    }

    package func plan(targets: [Node]) throws(TensorError) -> Plan {
        try plan(targets: targets, cache: nil).0
    }

    /// The dynamic programme: cost tables forward, choices backward. Backends are their
    /// positions in ``allowed`` throughout.
    func place(_ candidates: [Candidate], sources: [Node], targets: [Node]) throws(TensorError) -> [Decision] {
        let allowed = self.allowed
        guard !allowed.isEmpty else {
            throw TensorError(
                .unsupported, op: "plan", message: "no available backend is allowed by the compute policy \(policy)")
        }
        let positions = allowed.indices
        // arrival[node][backend]: seconds until the node's value is in that backend's memory.
        var arrival = NodeMap<PerBackend<Double>>(capacity: sources.count + candidates.count)
        for source in sources {
            // A source lives where its value is: the host, or a device that kept a state's cache.
            let space = source.storedResult?.memorySpace ?? .host
            var seconds = PerBackend<Double>()
            for b in positions { seconds[b] = transferSeconds(source.signature.byteCount, from: space, to: b) }
            arrival[source.id] = seconds
        }
        // The graph's sources (a model's weights, its inputs) are read afresh by every evaluation:
        // when together they outgrow a device's last-level cache, each step streams the sources
        // it reads from memory (MiniLM-L6's 90 MB of weights), however few bytes the step moves:
        // the share of them the cache does not keep (``MemoryTerms/cachedShare(of:)``).
        let sourceIDs = Set(sources.map(\.id))
        let sourceBytes = sources.reduce(0.0) { $0 + Double($1.signature.byteCount) }
        // Per device, the share of the sources the cache does not keep (all kept while they fit):
        // the same for every step, so worked out once.
        let sourcesFromMemory = allowedProfiles.map { 1 - ($0?.memory?.cachedShare(of: sourceBytes) ?? 1) }
        var options:
            [(supported: [Int], seconds: PerBackend<Double>, total: PerBackend<Double>, cost: Cost, lowered: [Int])] =
                []
        for candidate in candidates {
            let inputs = candidate.operands.map(\.signature)
            let opCost = Self.cost(of: candidate)
            // At most the bytes the op reads (a gather reads a few rows of its table). An operand
            // that views a source reads the source's memory too: all of a weight read transposed,
            // a scalar's few bytes however far it is broadcast.
            let sourceOperandBytes = Swift.min(
                opCost.cost.bytesRead,
                candidate.operands.reduce(0.0) { total, operand in
                    let base = Self.viewChain(of: operand).base
                    guard sourceIDs.contains(base.id) else { return total }
                    return total + Double(Swift.min(operand.signature.byteCount, base.signature.byteCount))
                })
            var cost = opCost.cost
            var seconds = PerBackend<Double>()
            var total = PerBackend<Double>()
            var supported: [Int] = []
            var lowered: [Int] = []
            var reasons: [String] = []
            for b in positions {
                let own: Double
                switch allowed[b].capability(for: candidate.kernel, inputs: inputs, output: candidate.node.signature) {
                case .kernel:
                    own = estimate(
                        opCost, operands: candidate.operands.count, on: b,
                        streamedBytes: sourceOperandBytes * sourcesFromMemory[b])
                case .lowered(let parts):
                    own = parts.reduce(0.0) { total, part in
                        var partCost = part.op.descriptor.cost(part.op, part.inputs, part.output)
                        // A region run instruction by instruction still records one op each.
                        if case .fused = candidate.kernel { partCost.cost.operations = 1 }
                        return total + estimate(partCost, operands: part.inputs.count, on: b)
                    }
                    if supported.isEmpty, case .op = candidate.kernel {
                        cost = parts.reduce(Cost.zero) { $0 + $1.op.descriptor.cost($1.op, $1.inputs, $1.output).cost }
                    }
                    if case .op = candidate.kernel { lowered.append(b) }
                case .unsupported(let reason):
                    reasons.append("\(allowed[b].id): \(reason)")
                    continue
                }
                supported.append(b)
                seconds[b] = own
                total[b] = own + candidate.operands.reduce(0.0) { $0 + (arrival[$1.id]?[b] ?? 0) }
            }
            guard !supported.isEmpty else {
                throw TensorError(
                    .unsupported, op: candidate.node.op.name, operandShapes: inputs.map(\.shape),
                    message: "no backend allowed by policy \(policy) runs it (\(reasons.joined(separator: "; ")))",
                    location: candidate.node.location)
            }
            options.append((supported, seconds, total, cost, lowered))
            var reach = PerBackend<Double>()
            for destination in positions {
                reach[destination] =
                    supported.map { producer in
                        (total[producer] ?? .infinity)
                            + transferSeconds(
                                candidate.node.signature.byteCount, from: allowed[producer].memorySpace, to: destination
                            )
                    }.min() ?? .infinity
            }
            arrival[candidate.node.id] = reach
        }

        // Backward: each candidate goes where its subtree plus the copy to its consumer is cheapest.
        var wanted = NodeMap<Int>(capacity: candidates.count)
        let host = allowed.firstIndex { $0.memorySpace == .host } ?? 0
        for target in targets { wanted[target.id] = host }
        var chosen = [Int](repeating: host, count: candidates.count)
        for index in candidates.indices.reversed() {
            let candidate = candidates[index]
            let option = options[index]
            let destination = wanted[candidate.node.id] ?? option.supported[0]
            let bytes = candidate.node.signature.byteCount
            // Ties go to the consumer's backend, then to the earlier one in preference order, so
            // free steps (views) stay where their value is used and the plan is deterministic.
            let ordered = option.supported.filter { $0 == destination } + option.supported.filter { $0 != destination }
            var best = ordered[0]
            var bestCost = Double.infinity
            for b in ordered {
                let cost =
                    (option.total[b] ?? .infinity)
                    + transferSeconds(bytes, from: allowed[b].memorySpace, to: destination)
                if cost < bestCost - 1e-15 {
                    best = b
                    bestCost = cost
                }
            }
            chosen[index] = best
            for operand in candidate.operands where wanted[operand.id] == nil { wanted[operand.id] = best }
        }
        return candidates.indices.map { index in
            let option = options[index]
            let b = chosen[index]
            return Decision(
                backend: allowed[b].id, estimatedSeconds: option.seconds[b] ?? 0, cost: option.cost,
                supported: option.supported.map { allowed[$0].id },
                reason: reason(for: b, option.supported, option.seconds, lowered: option.lowered))
        }
    }

    /// Builds the plan's steps from decisions, inserting a copy wherever an operand lives elsewhere.
    func assemble(
        _ graph: PendingGraph, _ candidates: [Candidate], _ decisions: [Decision], targets: [Node]
    ) -> PlanTemplate {
        // Every node of a candidate is in the graph.
        let position = { (node: Node) in graph.position(of: node.id) ?? -1 }
        // Where each value lives so far, by position: sources where their values are.
        var location = graph.nodes.map { graph.isSource($0) ? $0.storedResult?.memorySpace ?? .host : nil }
        var steps: [PlanStep] = []
        steps.reserveCapacity(candidates.count)
        for index in candidates.indices {
            let (candidate, decision) = (candidates[index], decisions[index])
            let target = backend(decision.backend)
            let destination = allowed.firstIndex { $0.id == decision.backend } ?? 0
            let operands = candidate.operands.map(position)
            let copies = zip(candidate.operands, operands).compactMap { operand, at -> PlannedCopy? in
                guard at >= 0, let from = location[at], from != target.memorySpace else { return nil }
                let bytes = operand.signature.byteCount
                return PlannedCopy(
                    value: at, from: from, to: target.memorySpace, bytes: bytes,
                    estimatedSeconds: transferSeconds(bytes, from: from, to: destination))
            }
            let output = position(candidate.node)
            if output >= 0 { location[output] = target.memorySpace }
            let recording = decision.cost.operations * (allowedProfiles[destination]?.secondsPerOperation ?? 0)
            let region: FusedRegion? =
                switch candidate.kernel {
                case .op: nil
                case .fused(let fused): fused
                }
            steps.append(
                PlanStep(
                    output: output, region: region, operands: operands, absorbed: candidate.absorbed.map(position),
                    epilogue: candidate.epilogue, backend: decision.backend,
                    estimatedSeconds: decision.estimatedSeconds,
                    recordingSeconds: recording,
                    cost: decision.cost, supported: decision.supported, reason: decision.reason, copies: copies))
        }
        steps = Self.pricingPlacedConcatenations(steps, graph.nodes, targets: targets.map(position), allowed)
        let used = Set(steps.map(\.backend))
        let evaluation = allowed.indices.filter { used.contains(allowed[$0].id) }
            .map { allowedProfiles[$0]?.secondsPerEvaluation ?? 0 }.max() ?? 0
        return PlanTemplate(
            steps: steps, targets: targets.map(position), positions: graph.nodes.count,
            concatenates: steps.contains { ConcatPlacements.isConcatenation($0, graph.nodes) }, calibrated: calibrated,
            evaluationSeconds: evaluation)
    }

    /// The steps with each concatenation whose operands the executor writes in place
    /// (``ConcatPlacements``) priced for the copies it still makes: its bookkeeping, and its
    /// copying time by the share of elements it copies.
    private static func pricingPlacedConcatenations(
        _ steps: [PlanStep], _ nodes: [Node], targets: [Int], _ allowed: [any Backend]
    ) -> [PlanStep] {
        var reads = [Int](repeating: 0, count: nodes.count)
        for step in steps { for operand in step.operands where reads.indices.contains(operand) { reads[operand] += 1 } }
        for position in targets where reads.indices.contains(position) { reads[position] += 1 }
        let placements = ConcatPlacements(
            steps: steps, nodes: nodes, targets: targets,
            isHost: { id in allowed.contains { $0.id == id && $0.memorySpace == .host } }, reads: { reads[$0] })
        guard !placements.isEmpty else { return steps }
        return steps.indices.map { index in
            let step = steps[index]
            let share = placements.copiedShare(ofStep: index, steps, nodes)
            guard share < 1 else { return step }
            let copying = max(0, step.estimatedSeconds - step.recordingSeconds) * share
            return PlanStep(
                output: step.output, region: step.region, operands: step.operands, absorbed: step.absorbed,
                epilogue: step.epilogue, backend: step.backend, estimatedSeconds: step.recordingSeconds + copying,
                recordingSeconds: step.recordingSeconds, cost: step.cost, supported: step.supported,
                reason: step.reason, copies: step.copies)
        }
    }

    private func backend(_ id: BackendID) -> any Backend {
        backends.first { $0.id == id } ?? backends[0]
    }

    /// Seconds to copy bytes from a memory space into an allowed backend's; whichever side is
    /// the device sets the speed, and host backends share memory for free.
    func transferSeconds(_ bytes: Int, from: MemorySpace, to destination: Int) -> Double {
        let target = allowed[destination]
        guard from != target.memorySpace else { return 0 }
        let device = from == .host ? target : (allowed.first { $0.memorySpace == from } ?? target)
        return profiles[device.id]?.transferSeconds(bytes: Double(bytes)) ?? 0
    }

    /// Seconds of a priced cost on an allowed backend's device (0 without a profile), at least
    /// the time to stream `streamedBytes` of its operands from memory.
    func estimate(_ cost: OpCost, operands: Int, on backend: Int, streamedBytes: Double = 0) -> Double {
        allowedProfiles[backend]?.seconds(
            for: cost.cost, costClass: cost.costClass, operands: operands, streamedBytes: streamedBytes) ?? 0
    }

    /// The cost of a step from the op table: the op's cost rule, or for a fused region one pass
    /// over its external bytes (intermediates never touch memory). Either way, one operation per
    /// recorded op the step runs.
    static func cost(of candidate: Candidate) -> OpCost {
        switch candidate.kernel {
        case .op(let op):
            let operands = candidate.operands.map { CostOperand(signature: $0.signature, layout: layout(of: $0)) }
            var opCost = op.descriptor.cost(op, operands, candidate.node.signature)
            opCost.cost.operations = 1
            return opCost
        case .fused(let region):
            let read = candidate.operands.reduce(0.0) { $0 + Double($1.signature.byteCount) }
            let cost = Cost(
                flops: region.flopsPerElement * Double(candidate.node.signature.elementCount), bytesRead: read,
                bytesWritten: Double(candidate.node.signature.byteCount), launches: 1,
                operations: Double(region.instructions.count))
            return OpCost(cost: cost, costClass: .elementwise)
        }
    }

    /// The chain of pending views over `node`, outermost first, and the node whose memory they
    /// read: the first that is not a pending view (`node` itself when it is not one).
    static func viewChain(of node: Node) -> (base: Node, views: [Op]) {
        var views: [Op] = []
        var base = node
        while base.op.kind.isView, base.storedResult == nil, let input = base.inputs.first {
            views.append(base.op)
            base = input
        }
        return (base, views)
    }

    /// The layout a node's value will have, from its stored value or the first computed node
    /// behind its chain of views, through those views; `nil` where a reshape would need a copy.
    static func layout(of node: Node) -> Layout? {
        let (base, views) = viewChain(of: node)
        var layout = base.storedResult?.layout ?? Layout(contiguous: base.signature.shape)
        for view in views.reversed() {
            guard let viewed = layout.viewed(by: view) else { return nil }
            layout = viewed
        }
        return layout
    }

    private func reason(
        for chosen: Int, _ supported: [Int], _ seconds: PerBackend<Double>, lowered: [Int]
    ) -> PlacementReason {
        let decomposed = lowered.map { allowed[$0].id }
        if case .only = policy {
            return PlacementReason(chosen: allowed[chosen].id, policy: policy, alone: [], lowered: decomposed)
        }
        return PlacementReason(
            chosen: allowed[chosen].id, policy: nil, alone: supported.map { (allowed[$0].id, seconds[$0] ?? 0) },
            lowered: decomposed)
    }
}

/// Why the planner put a step where it did: kept as data while planning and written out as text
/// only when a plan is shown (formatting it for every node cost more than placing the node).
///
/// A struct, not an enum with an array payload: cached plans keep their reasons for the life of
/// the process, and LeakSanitizer does not see an array reference stored in a multi-payload
/// enum (its spare pointer bits carry the case tag), so it reported every cached plan as leaked.
struct PlacementReason: Sendable, CustomStringConvertible {
    /// The backend chosen.
    let chosen: BackendID
    /// The single-backend policy that decided, if one did.
    let policy: ComputePolicy?
    /// Each backend, of those the policy allows, that runs the step, with the step's own estimate
    /// there (copies not counted).
    let alone: [(BackendID, Double)]
    /// The backends that run the step as its op's decomposition (no kernel of their own).
    var lowered: [BackendID] = []

    var description: String {
        let decomposed =
            lowered.isEmpty ? "" : "; as its decomposition on " + lowered.map(\.description).joined(separator: ", ")
        if let policy { return "policy \(policy)" + decomposed }
        if alone.count == 1 { return "only \(chosen) supports it" + decomposed }
        return "cheapest with copies; alone: " + alone.map { "\($0.0) \(formatSeconds($0.1))" }.joined(separator: ", ")
            + decomposed
    }
}

/// `12.3 µs`, `4.56 ms`, `1.23 s`.
func formatSeconds(_ seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: return String(format: "%.0f ns", seconds * 1e9)
    case ..<1e-3: return String(format: "%.1f µs", seconds * 1e6)
    case ..<1: return String(format: "%.2f ms", seconds * 1e3)
    default: return String(format: "%.2f s", seconds)
    }
}
