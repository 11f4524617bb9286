import Foundation
import COpenBLAS

/// The fast CPU backend: OpenBLAS for matrix products, vectorised multi-threaded Swift for the rest.
///
/// It shares host memory with the naive backend, so moving a value between the two costs nothing.
/// It claims `Float` compute ops, fused regions of `Float`/`Bool` registers, and data movement of
/// every scalar type; `Float16` and `Int32` arithmetic, `cumulativeSum` and `topK` it reports as
/// unsupported, and the planner places those on the naive backend.
final class OpenBLASBackend: Backend {
    var kind: BackendKind { .openblas }
    let deviceName: String
    var memorySpace: MemorySpace { .host }

    init() {
        // One BLAS thread per core; the Swift kernels never run beside a BLAS call in one
        // evaluation, so the two pools do not oversubscribe the cores.
        openblas_set_num_threads(Int32(Parallel.workers))
        let config = openblas_get_config().map { String(cString: $0) } ?? "OpenBLAS"
        deviceName = "host CPU, \(Parallel.workers) threads (\(config.trimmingCharacters(in: .whitespaces)))"
    }

    func upload(_ value: Value) throws(TensorError) -> Value { value }
    func download(_ value: Value) throws(TensorError) -> Value { value }
    func synchronize() throws(TensorError) {}

    func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability {
        let floatOnly: Capability = inputs.allSatisfy({ $0.scalarType == .float32 })
            ? .supported : .unsupported(reason: "only float32 is vectorised; other types use the reference loops")
        switch kernel {
        case .fused(let region):
            return ElementwiseEngine.supports(region) ? .supported : .unsupported(reason: "float16 and int32 arithmetic is not vectorised")
        case .op(let op):
            switch op {
            case .constant: return .unsupported(reason: "constants are not executed")
            case .reshape, .permute, .broadcast, .slice, .contiguous, .pad, .concat, .gather: return .supported
            case .unary, .binary, .select:
                let types = inputs.map(\.scalarType) + [output.scalarType]
                return types.allSatisfy({ $0 == .float32 || $0 == .bool }) ? .supported : .unsupported(reason: "float16 and int32 arithmetic is not vectorised")
            case .cast: return .supported
            case .reduce, .argReduce, .matmul, .softmax, .logSoftmax, .layerNorm: return floatOnly
            case .cumulativeSum, .topK: return .unsupported(reason: "not implemented here; the reference loops serve")
            }
        }
    }

    /// A one-instruction region for a single elementwise op.
    static func region(_ instruction: FusedRegion.Instruction, _ inputs: [TensorSignature], _ output: TensorSignature) -> FusedRegion {
        FusedRegion(inputTypes: inputs.map(\.scalarType), instructions: [instruction], instructionTypes: [output.scalarType])
    }

    func allocate(_ signature: TensorSignature, for op: String) throws(TensorError) -> (Value, HostBuffer) {
        let buffer = try HostBuffer(byteCount: signature.byteCount, op: op)
        return (Value(buffer: buffer, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType), buffer)
    }

    func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value {
        switch kernel {
        case .fused(let region):
            let (result, buffer) = try allocate(output, for: "fused")
            try ElementwiseEngine(region: region).run(inputs: inputs, output: buffer.pointer, count: output.elementCount)
            return result
        case .op(let op):
            return try execute(op, inputs, output)
        }
    }

    private func execute(_ op: Op, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        switch op {
        case .constant, .reshape, .permute, .broadcast, .slice:
            return try executeWithoutKernel(op, inputs, output)
        case .unary(let unary):
            return try elementwise(.unary(unary, 0), inputs, output)
        case .binary(let binary):
            return try elementwise(.binary(binary, 0, 1), inputs, output)
        case .select:
            return try elementwise(.select(0, 1, 2), inputs, output)
        case .cast(let type):
            return try cast(inputs[0], to: type, output)
        case .contiguous:
            let (result, buffer) = try allocate(output, for: op.name)
            StridedCopy.copy(try Self.pointer(inputs[0]), inputs[0].layout, to: buffer.pointer, elementSize: output.scalarType.byteCount)
            return result
        case .reduce(let reduction, let axes, _):
            return try reduce(reduction, axes: axes, inputs[0], output)
        case .argReduce(let arg, let axis, _):
            return try argReduce(arg, axis: axis, inputs[0], output)
        case .softmax(let axis): return try lines(.softmax, axis: axis, inputs[0], output)
        case .logSoftmax(let axis): return try lines(.logSoftmax, axis: axis, inputs[0], output)
        case .layerNorm(let axis, let epsilon): return try lines(.layerNorm(epsilon), axis: axis, inputs[0], output)
        case .matmul:
            return try matmul(inputs[0], inputs[1], output)
        case .pad(let padding, let value):
            return try pad(padding, value, inputs[0], output)
        case .concat(let axis):
            return try concat(axis: axis, inputs, output)
        case .gather(let axis):
            return try gather(axis: axis, inputs[0], inputs[1], output)
        case .cumulativeSum, .topK:
            throw TensorError(.unsupported, op: op.name, message: "the openblas backend does not run \(op.name)")
        }
    }

    private func elementwise(_ instruction: FusedRegion.Instruction, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let region = Self.region(instruction, inputs.map { TensorSignature(shape: $0.shape, scalarType: $0.scalarType) }, output)
        return try execute(.fused(region), inputs: inputs, output: output)
    }

    /// The base address of a host value's buffer.
    static func pointer(_ value: Value) throws(TensorError) -> UnsafeMutableRawPointer {
        guard let buffer = value.buffer as? HostBuffer else {
            throw TensorError(.backendFailure, op: "openblas", message: "a \(value.memorySpace) buffer reached the openblas backend")
        }
        return buffer.pointer
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

