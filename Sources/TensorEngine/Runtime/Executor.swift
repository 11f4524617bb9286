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
        let steps = plan.steps
        // Per position: the value a step produced (sources keep theirs on the node), how many
        // reads of it are still to come, and the position whose step made its buffer (-1 for a
        // source's, which the statistics do not count). Buffers are tracked by that position,
        // in arrays: a prepared model runs hundreds of steps per call, and hashing each one's
        // buffer cost more than many of its kernels.
        struct Slot {
            var value: Value?
            var remaining = 0
            var maker = -1
        }
        // Slots for the positions the plan reads or writes only, found through `slotOf` (-1 for
        // none): a chain of a thousand scalar steps, fused into 32 steps, has a thousand positions
        // and about a hundred such, and making a slot of values per position was a fifth of
        // running its plan.
        var slotOf = [Int](repeating: -1, count: nodes.count)
        var slotCount = 0
        func claim(_ position: Int) {
            guard slotOf[position] < 0 else { return }
            slotOf[position] = slotCount
            slotCount += 1
        }
        for binding in bindings { claim(binding.position) }
        for position in plan.template.targets { claim(position) }
        for step in steps {
            for operand in step.operands { claim(operand) }
            claim(step.output)
        }
        var slots = [Slot](repeating: Slot(), count: slotCount)
        // By the position that made a buffer: its bytes and how many live values share it.
        var bufferBytes = [Int](repeating: 0, count: nodes.count)
        var bufferReaders = [Int](repeating: 0, count: nodes.count)
        var statistics = EvaluationStatistics(peakLiveBytes: 0, totalIntermediateBytes: 0, steps: 0, copies: 0)
        var liveBytes = 0

        for binding in bindings { slots[slotOf[binding.position]].value = binding.value }
        for position in plan.template.targets { slots[slotOf[position]].remaining += 1 }
        for index in steps.indices { for operand in steps[index].operands { slots[slotOf[operand]].remaining += 1 } }
        let placements = ConcatPlacements(
            plan, isHost: { id in backends.contains { $0.id == id && $0.memorySpace == .host } },
            reads: { slotOf[$0] < 0 ? 0 : slots[slotOf[$0]].remaining })
        // By the concatenation's position: the buffer its placed operands are written into.
        var placedBuffers: [Int: HostBuffer] = [:]

        func release(_ position: Int) {
            let slot = slotOf[position]
            slots[slot].remaining -= 1
            guard slots[slot].remaining == 0, slots[slot].value != nil else { return }
            slots[slot].value = nil
            let maker = slots[slot].maker
            guard maker >= 0 else { return }
            bufferReaders[maker] -= 1
            if bufferReaders[maker] == 0 { liveBytes -= bufferBytes[maker] }
        }

        // The previous step's backend, looked up again only when a step's differs.
        var previous: (id: BackendID, backend: any Backend)?
        for index in steps.indices {
            // One copy of the step for the loop body (each read of `steps[index]` copied it).
            let step = steps[index]
            let output = step.output
            let node = nodes[output]
            let backendID = step.backend
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
            var inputs: [Value] = []
            inputs.reserveCapacity(step.operands.count)
            // The position whose buffer the output shares, if it is an operand's (a view).
            var sharedMaker = -1
            var fresh = true
            for operand in step.operands {
                guard var value = slots[slotOf[operand]].value ?? nodes[operand].storedResult else {
                    throw TensorError(.backendFailure, op: node.op.name, message: "operand \(nodes[operand].op.name) has no value: the plan is out of order")
                }
                if value.memorySpace != backend.memorySpace {
                    value = try move(value, to: backend)
                    statistics.copies += 1
                }
                inputs.append(value)
            }
            if measure { try backend.synchronize() }
            let started = measure ? DispatchTime.now().uptimeNanoseconds : 0
            var placement: OutputPlacement?
            if let target = placements[index] {
                let buffer: HostBuffer
                if let made = placedBuffers[target.concat] {
                    buffer = made
                } else {
                    buffer = try HostBuffer(byteCount: nodes[target.concat].signature.byteCount, op: "concat")
                    placedBuffers[target.concat] = buffer
                }
                placement = OutputPlacement(buffer: buffer, elementOffset: target.elementOffset)
            }
            let kernel = plan.kernel(of: step)
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
            statistics.steps += 1
            for (operand, input) in zip(step.operands, inputs) where input.buffer === result.buffer {
                fresh = false
                // An operand moved between memory spaces is a copy the statistics do not count.
                if let held = slots[slotOf[operand]].value, held.buffer === result.buffer {
                    sharedMaker = slots[slotOf[operand]].maker
                }
                break
            }
            let outputSlot = slotOf[output]
            slots[outputSlot].value = result
            if fresh, let placement, let concat = placements[index]?.concat, result.buffer === placement.buffer {
                // A part of a concatenation's buffer: counted once, under the concatenation.
                if bufferReaders[concat] == 0 {
                    bufferBytes[concat] = placement.buffer.byteCount
                    liveBytes += bufferBytes[concat]
                    statistics.totalIntermediateBytes += bufferBytes[concat]
                    statistics.peakLiveBytes = max(statistics.peakLiveBytes, liveBytes)
                }
                slots[outputSlot].maker = concat
                bufferReaders[concat] += 1
            } else if fresh {
                slots[outputSlot].maker = output
                bufferBytes[output] = result.buffer.byteCount
                bufferReaders[output] = 1
                liveBytes += bufferBytes[output]
                statistics.totalIntermediateBytes += bufferBytes[output]
                statistics.peakLiveBytes = max(statistics.peakLiveBytes, liveBytes)
            } else if sharedMaker >= 0 {
                slots[outputSlot].maker = sharedMaker
                bufferReaders[sharedMaker] += 1
            }
            for operand in step.operands { release(operand) }
        }

        var values: [Value] = []
        values.reserveCapacity(plan.targets.count)
        for (target, position) in zip(plan.targets, plan.template.targets) {
            guard let value = slots[slotOf[position]].value ?? target.storedResult else {
                throw TensorError(.backendFailure, op: target.op.name, message: "the plan did not produce a requested value")
            }
            values.append(value)
        }
        return (values, statistics, stepSeconds)
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
