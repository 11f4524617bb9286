/// What a kernel is asked to run: the op (or fused region) and the operand and result signatures.
package struct KernelQuery: Sendable {
    let kernel: Kernel
    let output: TensorSignature
    /// The operands as the planner knows them (signatures) or as the executor has them (values):
    /// the executor asks for every step it runs, so it does not build signatures it may not need.
    private let operands: Operands

    private enum Operands: Sendable {
        case signatures([TensorSignature])
        case values([Value])
    }

    init(kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) {
        self.kernel = kernel
        self.output = output
        operands = .signatures(inputs)
    }

    init(kernel: Kernel, values: [Value], output: TensorSignature) {
        self.kernel = kernel
        self.output = output
        operands = .values(values)
    }

    /// The operands' signatures.
    var inputs: [TensorSignature] {
        switch operands {
        case .signatures(let signatures): signatures
        case .values(let values): values.map(\.signature)
        }
    }

    /// Every operand and the result have one of these types.
    func allTypes(in set: ScalarTypeSet) -> Bool {
        guard set.contains(output.scalarType) else { return false }
        switch operands {
        case .signatures(let signatures): return signatures.allSatisfy { set.contains($0.scalarType) }
        case .values(let values): return values.allSatisfy { set.contains($0.scalarType) }
        }
    }
}

/// When a registered kernel applies: `nil` when it does, else the reason it does not (what the
/// planner reports for a backend that does not run a step).
package struct KernelCondition<B: Backend>: Sendable {
    let check: @Sendable (B, KernelQuery) -> String?

    static var always: KernelCondition { KernelCondition { _, _ in nil } }

    /// Every operand and the result are float32.
    static var float32: KernelCondition {
        KernelCondition { _, query in
            query.allTypes(in: [.float32]) ? nil : "only float32 is vectorised; other types use the reference loops"
        }
    }

    /// The result has at most ``WindowShape3D/maxSpatialRank`` spatial axes (`[N, C, spatial...]`):
    /// what the CPU and OpenCL window kernels address.
    static var fewSpatialAxes: KernelCondition {
        KernelCondition { _, query in
            query.output.shape.count - 2 <= WindowShape3D.maxSpatialRank
                ? nil : "more than \(WindowShape3D.maxSpatialRank) spatial axes"
        }
    }

    /// Both conditions.
    func and(_ other: KernelCondition) -> KernelCondition {
        KernelCondition { backend, query in check(backend, query) ?? other.check(backend, query) }
    }
}

/// The kernels a backend registers, by op kind: what it supports is what it registered, and the
/// reason it does not run something comes from the conditions of its kernels.
///
/// A kind may have several kernels, tried in the order registered (a faster variant under a
/// precondition first, a general one after, as CLBlast chooses its routines). Composite ops with
/// no kernel run as their decomposition and fused regions with no fused kernel as their
/// instructions (see `Backend.capability(for:inputs:output:)`). Kernels take the backend as an
/// argument, so a registry is a static table, built once per backend type.
package struct KernelRegistry<B: Backend>: Sendable {
    typealias Run = @Sendable (B, Op, [Value], TensorSignature) throws(TensorError) -> Value
    typealias RunRegion = @Sendable (B, FusedRegion, [Value], TensorSignature) throws(TensorError) -> Value

    /// A kernel (an op's or a region's) and when it applies.
    private struct Candidate<Kernel: Sendable>: Sendable {
        let condition: KernelCondition<B>
        let run: Kernel
    }

    private var entries: [[Candidate<Run>]] = Array(repeating: [], count: OpKind.allCases.count)
    private var fused: [Candidate<RunRegion>] = []
    private var requirements: [KernelCondition<B>] = []

    /// A kernel for each of `kinds`, used when `condition` holds.
    mutating func register(_ kinds: [OpKind], when condition: KernelCondition<B> = .always, _ run: @escaping Run) {
        for kind in kinds { entries[kind.rawValue].append(Candidate(condition: condition, run: run)) }
    }

    mutating func register(_ kind: OpKind, when condition: KernelCondition<B> = .always, _ run: @escaping Run) {
        register([kind], when: condition, run)
    }

    /// A kernel for whole fused regions, used when `condition` holds.
    mutating func registerFused(when condition: KernelCondition<B> = .always, _ run: @escaping RunRegion) {
        fused.append(Candidate(condition: condition, run: run))
    }

    /// A condition every kernel of the backend needs (a device's limits).
    mutating func require(_ condition: KernelCondition<B>) {
        requirements.append(condition)
    }

    /// Whether the backend's requirements hold for the query, or why not.
    func requirementsFail(_ backend: B, _ query: KernelQuery) -> String? {
        for requirement in requirements {
            if let reason = requirement.check(backend, query) { return reason }
        }
        return nil
    }

    /// The kernel for an op: the first registered one whose condition holds.
    func kernel(for op: Op, _ backend: B, _ query: KernelQuery) -> Result<Run, KernelMiss> {
        firstApplicable(entries[op.kind.rawValue], backend, query)
    }

    /// The fused-region kernel that applies, if one is registered.
    func fusedKernel(_ backend: B, _ query: KernelQuery) -> Result<RunRegion, KernelMiss> {
        firstApplicable(fused, backend, query)
    }

    /// The first candidate whose condition holds once the backend's requirements do, or every
    /// reason that none applies.
    private func firstApplicable<Kernel>(
        _ candidates: [Candidate<Kernel>], _ backend: B, _ query: KernelQuery
    ) -> Result<Kernel, KernelMiss> {
        guard !candidates.isEmpty else { return .failure(.notRegistered) }
        if let reason = requirementsFail(backend, query) { return .failure(.conditions(reason)) }
        var reasons: [String] = []
        for candidate in candidates {
            guard let reason = candidate.condition.check(backend, query) else { return .success(candidate.run) }
            reasons.append(reason)
        }
        return .failure(.conditions(reasons.joined(separator: "; ")))
    }
}

/// Why a registry has no kernel for a query.
package enum KernelMiss: Error, Sendable {
    /// No kernel is registered for the op (or for fused regions).
    case notRegistered
    /// Kernels are registered, and none applies: the reasons.
    case conditions(String)
}
