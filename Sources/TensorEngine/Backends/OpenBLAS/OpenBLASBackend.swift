import Foundation
import COpenBLAS

/// The fast CPU backend: OpenBLAS for matrix products, vectorised multi-threaded Swift for the rest.
///
/// It shares host memory with the naive backend, so moving a value between the two costs nothing.
/// It registers `Float` compute kernels (softmax, log-softmax and layer norm as row kernels), fused
/// regions of `Float`/`Bool` registers, casts and data movement of every scalar type; it has no
/// kernel for `Float16` and `Int32` arithmetic, `cumulativeSum` or `topK`, and the planner places
/// those on the naive backend (composite ops it has no kernel for, such as `variance`, run as
/// their decompositions here).
package final class OpenBLASBackend: Backend {
    package var id: BackendID { .openblas }
    package let deviceName: String
    package var memorySpace: MemorySpace { .host }

    /// Conservative figures for a 2-core x86-64 server.
    package var defaultProfile: DeviceProfile {
        .headline(backend: id, deviceName: deviceName, threads: Parallel.workers, matmul: (30, nil, 100), matrixVector: 8, stream: 12,
                  reduction: 10, arithmetic: 20, launch: 1e-6, transfer: nil, operation: 1e-6, evaluation: 3e-6)
    }

    /// The host CPU's last-level cache.
    package var cacheBytes: Int? { HostCaches.lastLevelBytes }

    init() {
        OpenBLASCore.selectWidestKernels()
        // One BLAS thread per core; the Swift kernels never run beside a BLAS call in one
        // evaluation, so the two pools do not oversubscribe the cores.
        openblas_set_num_threads(Int32(Parallel.workers))
        let config = OpenBLASCore.configuration
        let note = OpenBLASCore.warning.map { "; \($0)" } ?? ""
        // Part of the name, so that profiles measured with the other kernels are not reused.
        let own = CPUFlags.usesAVX512 ? "; AVX-512 kernels" : ""
        deviceName = "host CPU, \(Parallel.workers) threads (\(config.trimmingCharacters(in: .whitespaces))\(own))\(note)"
    }

    package func upload(_ value: Value) throws(TensorError) -> Value { value }
    package func download(_ value: Value) throws(TensorError) -> Value { value }
    package func synchronize() throws(TensorError) {}

    package static let kernels: KernelRegistry<OpenBLASBackend> = {
        var registry = KernelRegistry<OpenBLASBackend>()
        let hostRegisters = KernelCondition<OpenBLASBackend> { _, query in
            query.allTypes(in: [.float32, .bool]) ? nil : "float16 and int32 arithmetic is not vectorised"
        }
        registry.registerFused(when: KernelCondition { _, query in
            guard case .fused(let region) = query.kernel, !HostProgram.supports(region) else { return nil }
            return "float16 and int32 arithmetic is not vectorised"
        }) { backend, region, inputs, output throws(TensorError) in
            try backend.fused(region, inputs, output)
        }
        // Casts between any types by a plain conversion loop; the rest of the elementwise ops
        // through the engine as one-instruction regions.
        registry.register(.cast) { backend, op, inputs, output throws(TensorError) in try backend.cast(inputs[0], to: op.castType, output) }
        registry.register(OpKind.elementwise, when: hostRegisters) { backend, op, inputs, output throws(TensorError) in
            try backend.fused(FusedRegion(single: op, inputTypes: inputs.map(\.scalarType), outputType: output.scalarType), inputs, output)
        }
        registry.register(OpKind.reductions, when: .float32) { backend, op, inputs, output throws(TensorError) in
            try backend.reduce(op, inputs[0], output)
        }
        registry.register(.softmax, when: .float32) { backend, op, inputs, output throws(TensorError) in
            try backend.lines(op, inputs[0], output) {
                RowKernels.softmax(rows: $2, $0, $1, $3, logarithmic: false)
            }
        }
        registry.register(.logSoftmax, when: .float32) { backend, op, inputs, output throws(TensorError) in
            try backend.lines(op, inputs[0], output) {
                RowKernels.softmax(rows: $2, $0, $1, $3, logarithmic: true)
            }
        }
        registry.register(.layerNorm, when: .float32) { backend, op, inputs, output throws(TensorError) in
            let epsilon = op.epsilon
            var affine: LayerNormAffine?
            var owners: [Value] = []
            if inputs.count == 3 {
                let (scale, bias) = (try backend.contiguous(inputs[1]), try backend.contiguous(inputs[2]))
                owners = [scale.keepAlive, bias.keepAlive]
                affine = LayerNormAffine(
                    scale: UnsafePointer(scale.pointer.assumingMemoryBound(to: Float.self)),
                    bias: UnsafePointer(bias.pointer.assumingMemoryBound(to: Float.self)))
            }
            defer { withExtendedLifetime(owners) {} }
            return try backend.lines(op, inputs[0], output) { x, out, rows, length in
                for row in 0..<rows {
                    RowKernels.layerNorm(x + row * length, out + row * length, length, epsilon: epsilon, affine: affine)
                }
            }
        }
        registry.register(.matmul, when: .float32) { backend, _, inputs, output throws(TensorError) in
            try backend.matmul(inputs[0], inputs[1], output)
        }
        registry.register(.linear, when: .float32) { backend, op, inputs, output throws(TensorError) in
            try backend.matmul(
                inputs[0], inputs[1], output, bias: inputs[2], residual: inputs.count > 3 ? inputs[3] : nil,
                activation: op.linearActivation)
        }
        registry.register(.attention, when: .float32) { backend, op, inputs, output throws(TensorError) in
            try backend.attention(op, inputs, output)
        }
        registry.register(.convolution, when: KernelCondition.float32.and(.fewSpatialAxes)) { backend, op, inputs, output throws(TensorError) in
            try backend.convolution(op.convolutionGeometry, inputs, output)
        }
        registry.register([.maxPool, .averagePool], when: KernelCondition.float32.and(.fewSpatialAxes)) { backend, op, inputs, output throws(TensorError) in
            try backend.pooling(op.kind, op.poolingGeometry, inputs[0], output)
        }
        registry.register(.contiguous) { backend, _, inputs, output throws(TensorError) in
            let (result, buffer) = try backend.allocate(output, for: "contiguous")
            StridedCopy.copy(try OpenBLASBackend.pointer(inputs[0]), inputs[0].layout, to: buffer.pointer, elementSize: output.scalarType.byteCount)
            return result
        }
        registry.register(.pad) { backend, op, inputs, output throws(TensorError) in try backend.pad(op.padding, op.fill, inputs[0], output) }
        registry.register(.concat) { backend, op, inputs, output throws(TensorError) in try backend.concat(axis: op.axis, inputs, output) }
        registry.register(.append) { backend, op, inputs, output throws(TensorError) in try backend.append(axis: op.axis, inputs, output) }
        registry.register(.gather) { backend, op, inputs, output throws(TensorError) in
            try backend.gather(axis: op.axis, inputs[0], inputs[1], output)
        }
        return registry
    }()

    func allocate(_ signature: TensorSignature, for op: String) throws(TensorError) -> (Value, HostBuffer) {
        let buffer = try HostBuffer(byteCount: signature.byteCount, op: op)
        return (Value(buffer: buffer, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType), buffer)
    }

    /// A result's storage: at `placement` when it fits there, else a fresh buffer; and where its
    /// first element goes.
    func allocate(
        _ signature: TensorSignature, for op: String, at placement: OutputPlacement?
    ) throws(TensorError) -> (Value, UnsafeMutableRawPointer) {
        if let placement, let placed = placement.value(signature) { return placed }
        let (value, buffer) = try allocate(signature, for: op)
        return (value, buffer.pointer)
    }

    /// Runs a kernel at a placement where the kernel writes there (convolutions, and the
    /// concatenation that finds them in place), else into a buffer of its own.
    package func execute(
        _ kernel: Kernel, inputs: [Value], output: TensorSignature, into placement: OutputPlacement
    ) throws(TensorError) -> Value {
        let query = KernelQuery(kernel: kernel, values: inputs, output: output)
        guard case .op(let op) = kernel, case .success = Self.kernels.kernel(for: op, self, query) else {
            return try execute(kernel, inputs: inputs, output: output)
        }
        if op.kind == .convolution { return try convolution(op.convolutionGeometry, inputs, output, into: placement) }
        if op.kind == .concat { return try concat(axis: op.axis, inputs, output, into: placement) }
        return try execute(kernel, inputs: inputs, output: output)
    }

    /// A fused region, or one elementwise op, through the vector engine.
    func fused(_ region: FusedRegion, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, buffer) = try allocate(output, for: "fused")
        try ElementwiseEngine(region: region).run(inputs: inputs, output: buffer.pointer, count: output.elementCount)
        return result
    }

    /// The base address of a host value's buffer.
    static func pointer(_ value: Value) throws(TensorError) -> UnsafeMutableRawPointer {
        try hostBuffer(value, op: "openblas").pointer
    }

    /// The host buffer of a value; it must be in host memory.
    static func hostBuffer(_ value: Value, op: String) throws(TensorError) -> HostBuffer {
        guard let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: op, message: "a \(value.memorySpace) buffer reached the openblas backend")
        }
        return buffer
    }

    /// A row-major copy of a value when it is not already row-major (else the value itself).
    func contiguous(_ value: Value) throws(TensorError) -> (pointer: UnsafeMutableRawPointer, keepAlive: Value) {
        let base = try Self.pointer(value)
        if value.layout.isContiguous { return (base + value.layout.offset * value.scalarType.byteCount, value) }
        let signature = TensorSignature(shape: value.shape, scalarType: value.scalarType)
        let (copy, buffer) = try allocate(signature, for: "contiguous")
        StridedCopy.copy(base, value.layout, to: buffer.pointer, elementSize: value.scalarType.byteCount)
        return (buffer.pointer, copy)
    }
}

