import Dispatch

/// Memory figures of one evaluation.
public struct EvaluationStatistics: Sendable, Hashable, Codable {
    /// The most bytes of intermediate buffers alive at once.
    public var peakLiveBytes: Int
    /// The bytes of all intermediate buffers created (what no reuse would have needed).
    public var totalIntermediateBytes: Int
    /// The number of kernels run.
    public var steps: Int
    /// The number of copies between memory spaces.
    public var copies: Int
}

/// Runs a plan: each step on its backend, copies where the plan put them, buffers released after
/// their last use. It never chooses anything: the plan is obeyed as written.
package struct Executor {
    let backends: [any Backend]

    private func backend(_ id: BackendID) -> (any Backend)? { backends.first { $0.id == id } }

    /// Runs the plan and returns the targets' values on the host, row-major, except those marked
    /// in `inPlace` (by target), which stay where the steps left them, in their own layout: a
    /// state's cache kept on its device, in its growable buffer.
    ///
    /// `bindings` give sources other values than their nodes hold, by position: a prepared
    /// model's plan run again on new inputs, without a copy of its nodes per call.
    func run(
        _ plan: Plan, bindings: [(position: Int, value: Value)] = [], inPlace: [Bool] = []
    ) throws(TensorError) -> (results: [Value], statistics: EvaluationStatistics) {
        let (results, statistics, _) = try run(plan, measure: false, bindings: bindings, inPlace: inPlace)
        return (results, statistics)
    }

    /// Runs the plan; in measure mode, synchronises after each step and returns its seconds.
    func run(
        _ plan: Plan, measure: Bool, bindings: [(position: Int, value: Value)] = [], inPlace: [Bool] = []
    ) throws(TensorError) -> (results: [Value], statistics: EvaluationStatistics, stepSeconds: [Double]) {
        let (values, statistics, stepSeconds) = try runSteps(plan, measure: measure, bindings: bindings)
        var results: [Value] = []
        results.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            results.append(index < inPlace.count && inPlace[index] ? value : try hostResult(value))
        }
        return (results, statistics, stepSeconds)
    }

    /// Runs the plan and returns the targets' values where the steps left them (a backend's
    /// memory space, any layout): a composite op's decomposition run inside a backend.
    func runInPlace(_ plan: Plan) throws(TensorError) -> [Value] {
        try runSteps(plan, measure: false).values
    }

    private func runSteps(
        _ plan: Plan, measure: Bool, bindings: [(position: Int, value: Value)] = []
    ) throws(TensorError) -> (values: [Value], statistics: EvaluationStatistics, stepSeconds: [Double]) {
        var stepSeconds: [Double] = []
        let nodes = plan.nodes
        let steps = plan.template.steps
        let layout = plan.template.slots
        var ledger = RunLedger(reads: layout.reads)
        // A binding of a position no step reads and no target is has no slot: nothing needs it.
        for binding in bindings {
            if let slot = layout.slot(of: binding.position) { ledger.bind(binding.value, at: slot) }
        }
        let placements = plan.template.concatenates ? ConcatPlacements(
            plan, isHost: { id in backends.contains { $0.id == id && $0.memorySpace == .host } },
            reads: { layout.slot(of: $0).map { layout.reads[$0] } ?? 0 }) : nil
        // By the concatenation's position: the buffer its placed operands are written into.
        var placedBuffers: [Int: HostBuffer] = [:]

        // The previous step's backend, looked up again only when a step's differs.
        var previous: (id: BackendID, backend: any Backend)?
        for index in steps.indices {
            // The step's fields read one by one: a copy of the step retains each of its arrays.
            let output = steps[index].output
            let node = nodes[output]
            let backendID = steps[index].backend
            let backend: any Backend
            if let previous, previous.id == backendID {
                backend = previous.backend
            } else {
                guard let found = self.backend(backendID) else {
                    throw TensorError(
                        .backendFailure, op: node.op.name, message: "backend \(backendID) is not available")
                }
                backend = found
                previous = (backendID, found)
            }
            let operands = steps[index].operands
            // Every position a step reads or writes has a slot (``SlotLayout``).
            guard let outputSlot = layout.slot(of: output) else {
                throw TensorError(
                    .backendFailure, op: node.op.name, message: "the plan has no slot for a step's result")
            }
            var inputs: [Value] = []
            inputs.reserveCapacity(operands.count)
            for operand in operands {
                let held = layout.slot(of: operand).flatMap { ledger.value(at: $0) }
                guard var value = held ?? nodes[operand].storedResult else {
                    throw TensorError(
                        .backendFailure, op: node.op.name,
                        message: "operand \(nodes[operand].op.name) has no value: the plan is out of order")
                }
                if value.memorySpace != backend.memorySpace {
                    value = try move(value, to: backend)
                    ledger.countCopy()
                }
                inputs.append(value)
            }
            if measure { try backend.synchronize() }
            let started = measure ? DispatchTime.now().uptimeNanoseconds : 0
            var placement: OutputPlacement?
            let target = placements?[index]
            if let target {
                let buffer: HostBuffer
                if let made = placedBuffers[target.concat] {
                    buffer = made
                } else {
                    buffer = try HostBuffer(byteCount: nodes[target.concat].signature.byteCount, op: "concat")
                    placedBuffers[target.concat] = buffer
                }
                placement = OutputPlacement(buffer: buffer, elementOffset: target.elementOffset)
            }
            let kernel = plan.kernel(ofStep: index)
            let result =
                if let placement {
                    try backend.execute(kernel, inputs: inputs, output: node.signature, into: placement)
                } else {
                    try backend.execute(kernel, inputs: inputs, output: node.signature)
                }
            if measure {
                try backend.synchronize()
                stepSeconds.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
            }
            var origin = RunLedger.Origin.fresh
            if let index = inputs.firstIndex(where: { $0.buffer === result.buffer }) {
                // A view of an operand. One moved between memory spaces is a copy the statistics
                // do not count (the value held is not the moved one).
                let shared = layout.slot(of: operands[index])
                if let shared, let held = ledger.value(at: shared), held.buffer === result.buffer {
                    origin = .sharing(operand: shared)
                } else {
                    origin = .uncounted
                }
            } else if let placement, let target, result.buffer === placement.buffer,
                let concatenation = layout.slot(of: target.concat)
            {
                origin = .placed(concatenation: concatenation)
            }
            ledger.store(result, at: outputSlot, origin: origin)
            for operand in operands { if let slot = layout.slot(of: operand) { ledger.release(slot) } }
        }

        var values: [Value] = []
        values.reserveCapacity(plan.targets.count)
        for (target, position) in zip(plan.targets, plan.template.targets) {
            guard let value = layout.slot(of: position).flatMap({ ledger.value(at: $0) }) ?? target.storedResult else {
                throw TensorError(
                    .backendFailure, op: target.op.name, message: "the plan did not produce a requested value")
            }
            values.append(value)
        }
        return (values, ledger.statistics, stepSeconds)
    }

    /// Moves a value to another backend's memory space through the host.
    private func move(_ value: Value, to backend: any Backend) throws(TensorError) -> Value {
        var host = value
        if value.memorySpace != .host {
            guard let owner = backends.first(where: { $0.memorySpace == value.memorySpace }) else {
                throw TensorError(.backendFailure, op: "copy", message: "no backend owns \(value.memorySpace)")
            }
            host = try owner.download(value)
        }
        return backend.memorySpace == .host ? host : try backend.upload(host)
    }

    /// A host, row-major copy of a value, suitable to keep on its node.
    private func hostResult(_ value: Value) throws(TensorError) -> Value {
        var host = value
        if value.memorySpace != .host {
            guard let owner = backends.first(where: { $0.memorySpace == value.memorySpace }) else {
                throw TensorError(.backendFailure, op: "download", message: "no backend owns \(value.memorySpace)")
            }
            host = try owner.download(value)
        }
        let signature = TensorSignature(shape: host.shape, scalarType: host.scalarType)
        let compact = host.layout.isContiguous && host.layout.offset == 0 && host.buffer.byteCount == signature.byteCount
        guard !compact, let source = host.buffer as? HostBuffer else { return host }
        let copy = try HostBuffer(byteCount: signature.byteCount, op: "result")
        StridedCopy.copy(source.pointer, host.layout, to: copy.pointer, elementSize: signature.scalarType.byteCount)
        return Value(buffer: copy, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType)
    }
}
