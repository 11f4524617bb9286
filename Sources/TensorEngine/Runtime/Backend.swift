/// Whether a backend can run a step, how, and if not, why.
package enum Capability: Sendable {
    /// A registered kernel runs it.
    case kernel
    /// It runs as other steps this backend runs: a composite op's decomposition (the parts, for
    /// costing), or a fused region's instructions one by one.
    case lowered([LoweredPart])
    case unsupported(reason: String)

    var isSupported: Bool {
        switch self {
        case .kernel, .lowered: true
        case .unsupported: false
        }
    }
}

/// One op of a composite op's decomposition, with what its cost rule needs.
package struct LoweredPart: Sendable {
    let op: Op
    let inputs: [CostOperand]
    let output: TensorSignature
}

/// One step a backend runs: a primitive op, or a fused region of elementwise ops.
package enum Kernel: Sendable, Hashable {
    case op(Op)
    case fused(FusedRegion)
}

/// A compute backend: an identity, the kernels it registers, its memory and its device's default
/// profile. The engine keeps backends in a registry (`Engine`); adding one is a type that
/// conforms here and a line that registers it (docs/ARCHITECTURE.md, "How to add a backend").
///
/// A backend trusts its inputs: the front end has validated shapes and types, and the planner has
/// asked ``capability(for:inputs:output:)`` first. Outputs are fresh row-major buffers, except for
/// view ops, which return a new layout over the operand's buffer. What a backend runs, and why it
/// does not run the rest, is read from its ``kernels``; views, composite ops without a kernel and
/// fused regions without a fused kernel are run here, the same way for every backend.
package protocol Backend: AnyObject, Sendable {
    /// Which backend this is.
    var id: BackendID { get }
    /// The device it runs on, in words (`host CPU`, `pthread-haswell-AMD EPYC`, ...).
    var deviceName: String { get }
    /// Where its buffers live.
    var memorySpace: MemorySpace { get }
    /// The kernels the backend type registers.
    static var kernels: KernelRegistry<Self> { get }
    /// The device's figures before a calibration measures them (`tensorplan calibrate`).
    var defaultProfile: DeviceProfile { get }
    /// Bytes of the device's last-level cache: work whose operands and result fit in it runs at
    /// the rates a calibration measures in cache, larger work at the memory's
    /// (``DeviceProfile/memory``); `nil` when the device does not say.
    var cacheBytes: Int? { get }

    /// Copies a host value into this backend's memory space (the identity for host backends).
    func upload(_ value: Value) throws(TensorError) -> Value

    /// Copies a value of this backend's memory space to the host, keeping its layout.
    func download(_ value: Value) throws(TensorError) -> Value

    /// Waits until all submitted work has finished.
    func synchronize() throws(TensorError)

    /// Whether the backend runs the kernel for these operand and result signatures, and how. The
    /// extension below implements it for every backend; it is a requirement so that a call
    /// through `any Backend` reaches code specialised for the backend's type, not generic code
    /// that looks up type metadata on every call.
    func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability

    /// Runs a kernel on values in this backend's memory space and returns the result (implemented
    /// below, a requirement for the same reason as ``capability(for:inputs:output:)``).
    func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value

    /// Runs a kernel as ``execute(_:inputs:output:)``, writing its result at `placement` where the
    /// kernel can (see ``OutputPlacement``); the extension below ignores the placement.
    func execute(
        _ kernel: Kernel, inputs: [Value], output: TensorSignature, into placement: OutputPlacement
    ) throws(TensorError) -> Value
}

extension Backend {
    /// Whether the backend runs the kernel for these operand and result signatures, and how.
    package func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability {
        let query = KernelQuery(kernel: kernel, inputs: inputs, output: output)
        switch kernel {
        case .fused(let region):
            switch Self.kernels.fusedKernel(self, query) {
            case .success: return .kernel
            case .failure(.conditions(let reason)):
                // Without a fused kernel for it, the region may still run instruction by instruction.
                let instructions = instructionsCapability(region, shape: output.shape)
                return instructions.isSupported ? instructions : .unsupported(reason: reason)
            case .failure(.notRegistered): return instructionsCapability(region, shape: output.shape)
            }
        case .op(let op):
            switch op.descriptor.semantics {
            case .source: return .unsupported(reason: "constants are not executed")
            case .view: return .kernel
            case .elementwise, .reduction, .primitive:
                switch Self.kernels.kernel(for: op, self, query) {
                case .success: return .kernel
                case .failure(.conditions(let reason)): return .unsupported(reason: reason)
                case .failure(.notRegistered): return .unsupported(reason: "\(id) registers no kernel for \(op.name)")
                }
            case .composite(let decomposition):
                if case .success = Self.kernels.kernel(for: op, self, query) { return .kernel }
                // An empty result needs no decomposition (see `execute`).
                if output.elementCount == 0 { return .kernel }
                return decompositionCapability(op, decomposition, inputs: inputs)
            }
        }
    }

    /// Runs a kernel on values in this backend's memory space and returns the result.
    /// Runs the kernel into a buffer of its own: the placement is a request, which this default
    /// declines.
    package func execute(
        _ kernel: Kernel, inputs: [Value], output: TensorSignature, into placement: OutputPlacement
    ) throws(TensorError) -> Value {
        try execute(kernel, inputs: inputs, output: output)
    }

    package func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value {
        let query = KernelQuery(kernel: kernel, values: inputs, output: output)
        switch kernel {
        case .fused(let region):
            if case .success(let run) = Self.kernels.fusedKernel(self, query) {
                return try run(self, region, inputs, output)
            }
            return try executeInstructions(region, inputs, output)
        case .op(let op):
            switch op.descriptor.semantics {
            case .source:
                throw TensorError(
                    .backendFailure, op: op.name, message: "constants carry their data and are never executed")
            case .view(let layout):
                guard let input = inputs.first, let viewed = layout(op, input.layout) else {
                    throw TensorError(
                        .backendFailure, op: op.name,
                        message: "a reshape of a strided view reached the backend without a copy")
                }
                return input.with(viewed)
            case .elementwise, .reduction, .primitive:
                switch Self.kernels.kernel(for: op, self, query) {
                case .success(let run): return try run(self, op, inputs, output)
                case .failure(.conditions(let reason)):
                    throw TensorError(.unsupported, op: op.name, message: "\(id) does not run it: \(reason)")
                case .failure(.notRegistered):
                    throw TensorError(.unsupported, op: op.name, message: "\(id) registers no kernel for \(op.name)")
                }
            case .composite(let decomposition):
                if case .success(let run) = Self.kernels.kernel(for: op, self, query) {
                    return try run(self, op, inputs, output)
                }
                // An empty result is made directly: the decomposition's intermediates need not be
                // empty (a reduction over the empty axis of [2⁶², 0] is [2⁶², 1]) and may be
                // larger than memory, which no kernel's empty result is.
                if output.elementCount == 0 {
                    let empty = try HostBuffer(byteCount: 0, op: op.name)
                    let value = Value(buffer: empty, layout: Layout(contiguous: output.shape), scalarType: output.scalarType)
                    return memorySpace == .host ? value : try upload(value)
                }
                return try executeDecomposition(op, decomposition, inputs)
            }
        }
    }

    /// A region no fused kernel runs goes instruction by instruction, each result a full
    /// temporary: the reference meaning of fusion.
    private func executeInstructions(
        _ region: FusedRegion, _ inputs: [Value], _ output: TensorSignature
    ) throws(TensorError) -> Value {
        var registers = inputs
        for (index, instruction) in region.instructions.enumerated() {
            let signature = TensorSignature(shape: output.shape, scalarType: region.instructionTypes[index])
            registers.append(
                try execute(.op(instruction.op), inputs: instruction.operands.map { registers[$0] }, output: signature))
        }
        guard let last = registers.last, !region.instructions.isEmpty else {
            throw TensorError(.backendFailure, op: "fused", message: "an empty fused region")
        }
        return last
    }

    /// A region without a fused kernel runs as its instructions, each a pass over memory with its
    /// own launch: the planner costs it as those parts, not as one pass.
    private func instructionsCapability(_ region: FusedRegion, shape: [Int]) -> Capability {
        var parts: [LoweredPart] = []
        parts.reserveCapacity(region.instructions.count)
        let layout = Layout(contiguous: shape)
        for (index, instruction) in region.instructions.enumerated() {
            let inputs = instruction.operands.map {
                TensorSignature(shape: shape, scalarType: region.type(ofRegister: $0))
            }
            let output = TensorSignature(shape: shape, scalarType: region.instructionTypes[index])
            if case .unsupported(let reason) = capability(for: .op(instruction.op), inputs: inputs, output: output) {
                return .unsupported(reason: "\(instruction.op.name) in the region: \(reason)")
            }
            parts.append(
                LoweredPart(
                    op: instruction.op, inputs: inputs.map { CostOperand(signature: $0, layout: layout) },
                    output: output))
        }
        return .lowered(parts)
    }
}

extension Value {
    var signature: TensorSignature { TensorSignature(shape: shape, scalarType: scalarType) }
}
