import Foundation
import Synchronization

/// The OpenCL backend: kernels from `kernels/` on one OpenCL device (a GPU when there is one, else
/// whatever the ICD loader offers, such as PoCL's CPU device).
///
/// Creating it finds and opens the device; with no OpenCL library (see ``OpenCLLibrary``), platform
/// or device it throws, and the engine lists `opencl` as unavailable with that reason. It registers a
/// kernel for every primitive and elementwise op of the table, for every scalar type, and fused
/// kernels for softmax, log-softmax and layer norm; view ops share the protocol's implementation.
package final class OpenCLBackend: Backend {
    package let runtime: OpenCLRuntime
    package let matmulTuning: MatmulTuning
    /// Generated elementwise kernels by region structure, operand access and rank.
    private let elementwiseKernels = Guarded<[ElementwiseKernelSlot: CLKernel]>([:])

    package let id: BackendID
    package var deviceName: String { runtime.device.name }
    package var memorySpace: MemorySpace { runtime.memorySpace }

    /// Figures by device type until a calibration measures them.
    package var defaultProfile: DeviceProfile {
        if runtime.device.type == .cpu {
            // PoCL on 2 shared EPYC cores (docs/OPENCL.md): matmul ~20 GFLOP/s at 512-2048 under
            // load (70-85 when quieter; about half of OpenBLAS in the same run), plain streams
            // ~5 GB/s, transcendental-heavy chains ~1 GFLOP/s, 20-120 µs launches, zero-copy
            // uploads and ~1-2 GB/s downloads into fresh host memory.
            return .headline(backend: id, deviceName: deviceName, threads: 1, matmul: (8, nil, 20), matrixVector: 1, stream: 4,
                             reduction: 3, arithmetic: 1, launch: 5e-5, transfer: 2, operation: 3e-6, evaluation: 3e-6)
        }
        // An uncalibrated GPU: figures well below any discrete GPU's, above any CPU device's.
        return .headline(backend: id, deviceName: deviceName, threads: 1, matmul: (50, nil, 500), matrixVector: 10, stream: 100,
                         reduction: 50, arithmetic: 200, launch: 1e-5, transfer: 8, operation: 3e-6, evaluation: 3e-6)
    }

    /// The device's global memory cache (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`), where it reports one.
    package var cacheBytes: Int? { runtime.device.globalMemoryCacheBytes > 0 ? runtime.device.globalMemoryCacheBytes : nil }

    /// Opens the device chosen by `selection` among `devices` (the ICD loader's list by default),
    /// through the entry points of `library` (the process's by default).
    convenience init(
        selection: OpenCLDeviceSelection = OpenCLDevices.selection, devices: [OpenCLDeviceInfo]? = nil,
        library: Result<OpenCLAPI, TensorError> = OpenCLLibrary.shared
    ) throws(TensorError) {
        let candidates: [OpenCLDeviceInfo]
        if let devices { candidates = devices } else { candidates = try OpenCLDiscovery.devices(api: try library.get()) }
        let device = try OpenCLDiscovery.choose(selection, from: candidates).get()
        self.init(runtime: try OpenCLRuntime.shared(for: device, api: try library.get()))
    }

    /// The backends of the OpenCL devices in use: the chosen device as `opencl`, and with
    /// `TENSORENGINE_OPENCL_DEVICES=all` every other device too, as `opencl:N` (N its discovery
    /// index), each a backend of its own the planner chooses between.
    static func chosen(library: Result<OpenCLAPI, TensorError>) throws(TensorError) -> [OpenCLBackend] {
        let api = try library.get()
        let devices = try OpenCLDiscovery.devices(api: api)
        let primary = try OpenCLDiscovery.choose(OpenCLDevices.selection, from: devices).get()
        var backends = [OpenCLBackend(runtime: try OpenCLRuntime.shared(for: primary, api: api))]
        guard ProcessInfo.processInfo.environment["TENSORENGINE_OPENCL_DEVICES"] == "all" else { return backends }
        for device in devices where device.index != primary.index {
            // A device that does not open is left out; the chosen one is enough to run.
            guard let runtime = try? OpenCLRuntime.shared(for: device, api: api) else { continue }
            backends.append(OpenCLBackend(runtime: runtime, id: .opencl(device: device.index)))
        }
        return backends
    }

    /// A backend on a given runtime (tests give it a private runtime to inject faults into), with
    /// the device's matrix-product blocking unless `matmulTuning` is given (tests run the GPU
    /// kernel on a CPU device this way).
    init(runtime: OpenCLRuntime, id: BackendID = .opencl, matmulTuning: MatmulTuning? = nil) {
        self.runtime = runtime
        self.id = id
        self.matmulTuning = matmulTuning ?? MatmulTuning.forDevice(runtime.device)
    }

    /// The largest work-group the row kernels use: a power of two within the device's limit.
    var rowGroupSize: Int {
        let preferred = runtime.device.type == .cpu ? 64 : 256
        var size = 1
        while size * 2 <= min(preferred, runtime.device.maxWorkGroupSize) { size *= 2 }
        return size
    }

    package static let kernels: KernelRegistry<OpenCLBackend> = {
        var registry = KernelRegistry<OpenCLBackend>()
        registry.require(KernelCondition { backend, query in backend.limitsFail(query) })
        registry.registerFused(when: .elementwiseTypes) { backend, region, inputs, output throws(TensorError) in try backend.elementwise(region, inputs, output) }
        registry.register(OpKind.elementwise, when: .elementwiseTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.elementwise(FusedRegion(single: op, inputTypes: inputs.map(\.scalarType), outputType: output.scalarType), inputs, output)
        }
        registry.register(OpKind.reductions, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in try backend.reduce(op, inputs[0], output) }
        registry.register(.cumulativeSum, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.lineOp(.cumulativeSumRows, family: .scan, op, inputs[0], output)
        }
        registry.register(.cumulativeProduct, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.lineOp(.cumulativeProductRows, family: .scan, op, inputs[0], output)
        }
        registry.register(.softmax, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.lineOp(.softmaxRows, family: .softmax, op, inputs[0], output)
        }
        registry.register(.logSoftmax, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.lineOp(.logSoftmaxRows, family: .softmax, op, inputs[0], output)
        }
        registry.register(.layerNorm, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.lineOp(
                .layerNormRows, family: .norm, op, inputs[0], output,
                affine: inputs.count == 3 ? (inputs[1], inputs[2]) : nil)
        }
        registry.register(.topK, when: .narrowTypes) { backend, op, inputs, output throws(TensorError) in
            try backend.topK(k: op.k, part: op.topKOutput, inputs[0], output)
        }
        registry.register(.matmul, when: .narrowTypes) { backend, _, inputs, output throws(TensorError) in try backend.matmul(inputs[0], inputs[1], output) }
        registry.register(.convolution, when: KernelCondition.narrowTypes.and(.fewSpatialAxes)) { backend, op, inputs, output throws(TensorError) in
            try backend.convolution(op.convolutionGeometry, inputs, output)
        }
        registry.register([.maxPool, .averagePool], when: KernelCondition.narrowTypes.and(.fewSpatialAxes)) { backend, op, inputs, output throws(TensorError) in
            try backend.pooling(op.kind, op.poolingGeometry, inputs[0], output)
        }
        registry.register(.contiguous) { backend, op, inputs, output throws(TensorError) in
            let (result, buffer) = try backend.allocate(output, op: op.name)
            try backend.copy(inputs[0], into: buffer, layout: result.layout)
            return result
        }
        registry.register(.pad) { backend, op, inputs, output throws(TensorError) in
            try backend.pad(op.padding, fill: op.fill, inputs[0], output)
        }
        registry.register(.concat) { backend, op, inputs, output throws(TensorError) in try backend.concat(axis: op.axis, inputs, output) }
        registry.register(.append) { backend, op, inputs, output throws(TensorError) in try backend.append(axis: op.axis, inputs, output) }
        registry.register(.gather) { backend, op, inputs, output throws(TensorError) in
            try backend.gather(axis: op.axis, inputs[0], inputs[1], output)
        }
        registry.register(.scatter) { backend, op, inputs, output throws(TensorError) in
            try backend.scatter(axis: op.axis, inputs[0], inputs[1], inputs[2], output)
        }
        return registry
    }()

    /// Why the device cannot run a kernel over these signatures (`nil` when it can): every
    /// kernel addresses at most ``KernelLayout/maxRank`` axes with 32-bit indices, and a result
    /// must fit one allocation.

    private func limitsFail(_ query: KernelQuery) -> String? {
        let signatures = query.inputs + [query.output]
        if signatures.contains(where: { $0.shape.count > KernelLayout.maxRank }) {
            return "rank above \(KernelLayout.maxRank): kernels address at most \(KernelLayout.maxRank) axes"
        }
        if signatures.contains(where: { $0.elementCount >= Int(Int32.max) }) {
            return "2^31 or more elements: kernels index with 32-bit integers"
        }
        if query.output.byteCount > runtime.device.maxAllocationBytes {
            return "the result (\(query.output.byteCount) bytes) exceeds the largest allocation of \(runtime.device.name)"
        }
        return nil
    }

    package func upload(_ value: Value) throws(TensorError) -> Value {
        guard let host = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "upload", message: "a \(value.memorySpace) buffer cannot be uploaded to \(memorySpace)")
        }
        return Value(buffer: try runtime.upload(host, op: "upload"), layout: value.layout, scalarType: value.scalarType)
    }

    package func download(_ value: Value) throws(TensorError) -> Value {
        let buffer = try deviceBuffer(value, op: "download")
        return Value(buffer: try runtime.download(buffer, op: "download"), layout: value.layout, scalarType: value.scalarType)
    }

    package func synchronize() throws(TensorError) { try runtime.finish() }

    // MARK: Helpers shared by the op files

    /// The device buffer of an operand; it must be in this backend's memory space.
    package func deviceBuffer(_ value: Value, op: String) throws(TensorError) -> OpenCLBuffer {
        guard let buffer = value.buffer as? OpenCLBuffer, buffer.memorySpace == memorySpace else {
            throw TensorError(.backendFailure, op: op, message: "a \(value.memorySpace) buffer reached the opencl backend on \(memorySpace)")
        }
        guard buffer.byteCount / max(1, value.scalarType.byteCount) < Int(Int32.max) else {
            throw TensorError(.unsupported, op: op, message: "an operand buffer of 2^31 or more elements cannot be indexed by the kernels")
        }
        return buffer
    }

    /// A fresh row-major result on the device.
    func allocate(_ signature: TensorSignature, op: String) throws(TensorError) -> (Value, OpenCLBuffer) {
        let buffer = try runtime.allocate(signature.byteCount, op: op)
        return (Value(buffer: buffer, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType), buffer)
    }

    /// Runs one elementwise op or fused region with one generated kernel.
    func elementwise(_ region: FusedRegion, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let name = region.instructions.count == 1 ? region.name : "fused"
        let (result, out) = try allocate(output, op: name)
        let count = output.elementCount
        guard count > 0 else { return result }
        var buffers: [OpenCLBuffer] = []
        for input in inputs { buffers.append(try deviceBuffer(input, op: name)) }
        let layout = KernelLayout(shape: output.shape, layouts: [result.layout] + inputs.map(\.layout))
        var rowLengths = [Int](repeating: 0, count: inputs.count)
        var access: [OperandAccess] = inputs.indices.map { operand in
            let strides = layout.strides[operand + 1]
            if strides == .zero { return .uniform }
            if strides == layout.strides[0] { return .contiguous }
            if let length = Self.rowLength(strides, output: layout.strides[0], shape: layout.shape) {
                rowLengths[operand] = length
                return .row
            }
            return .strided
        }
        // Row access only pays when no operand needs coordinates anyway.
        if access.contains(.strided) { access = access.map { $0 == .row ? .strided : $0 } }
        let strided = access.contains(.strided)
        let rowsFitVectors = inputs.indices.allSatisfy { access[$0] != .row || rowLengths[$0] % 8 == 0 }
        // The eight-wide kernel holds 32-bit lanes; 64-bit values go one per work-item.
        let narrow = (region.inputTypes + region.instructionTypes).allSatisfy { $0.byteCount <= 4 }
        let vectorWidth = !strided && rowsFitVectors && narrow && runtime.device.type == .cpu ? 8 : 1
        let key = ElementwiseKernelKey(region: region, access: access, rank: strided ? layout.rank : 0, vectorWidth: vectorWidth)
        var operands: [KernelArgument] = []
        for operand in inputs.indices {
            operands.append(.buffer(buffers[operand]))
            if access[operand] == .strided { operands.append(.int8(layout.strides[operand + 1])) }
            operands.append(.int(layout.offsets[operand + 1]))
            if access[operand] == .row { operands.append(.int(Int32(rowLengths[operand]))) }
        }
        // Whole groups of eight through the vector kernel, the rest through the scalar one.
        let vectors = vectorWidth == 8 ? count / 8 : 0
        if vectors > 0 {
            let kernel = try elementwiseKernel(key, name: .elementwise8)
            try runtime.launch1D(kernel, [.buffer(out), .int(Int32(vectors))] + operands, count: vectors)
        }
        let start = vectors * 8
        guard start < count else { return result }
        let kernel = try elementwiseKernel(key, name: .elementwise)
        var arguments: [KernelArgument] = [.buffer(out), .int(Int32(count)), .int(Int32(start))]
        if strided { arguments.append(.int8(layout.shape)) }
        try runtime.launch1D(kernel, arguments + operands, count: count - start)
        return result
    }

    /// The length of the repeated row when an operand (merged strides) is a row-major block
    /// repeated along leading axes (stride 0 there, the output's strides on the trailing axes),
    /// as a bias `[n]` broadcast against `[m, n]` is; else `nil`.
    static func rowLength(_ strides: SIMD8<Int32>, output: SIMD8<Int32>, shape: SIMD8<Int32>) -> Int? {
        var axis = 7
        var length = 1
        while axis >= 0, strides[axis] == output[axis], strides[axis] != 0 || shape[axis] == 1 {
            length *= Int(shape[axis])
            axis -= 1
        }
        guard length > 1, axis >= 0 else { return nil }
        for leading in 0...axis where strides[leading] != 0 { return nil }
        return length
    }

    private func elementwiseKernel(_ key: ElementwiseKernelKey, name: KernelName) throws(TensorError) -> CLKernel {
        if let kernel = elementwiseKernels.withLock({ $0[ElementwiseKernelSlot(key: key, name: name)] }) { return kernel }
        let source = try KernelFamily.elementwise.source + "\n" + ElementwiseCodegen.source(for: key)
        let kernel = try runtime.kernel(name, source: source, options: BuildOptions(["TE_RANK": "\(key.rank)"]))
        elementwiseKernels.withLock { $0[ElementwiseKernelSlot(key: key, name: name)] = kernel }
        return kernel
    }
}

/// A generated kernel: the program's key and which of its kernels.
struct ElementwiseKernelSlot: Hashable {
    let key: ElementwiseKernelKey
    let name: KernelName
}

extension KernelCondition where B == OpenCLBackend {
    /// The kernels written for 32-bit types and narrower (reductions, rows, products, windows).
    static var narrowTypes: KernelCondition {
        KernelCondition { _, query in
            query.allTypes(in: [.float32, .float16, .int32, .bool])
                ? nil : "int64 and float64 run elementwise and in data movement only"
        }
    }

    /// Generated elementwise kernels: every type, float64 where the device has `cl_khr_fp64`.
    static var elementwiseTypes: KernelCondition {
        KernelCondition { backend, query in
            backend.runtime.device.hasFP64 || query.allTypes(in: [.float32, .float16, .int32, .bool, .int64])
                ? nil : "\(backend.runtime.device.name) has no cl_khr_fp64 for float64"
        }
    }
}
