import Foundation

/// The reference backend: every primitive op as plain loops over strided data.
///
/// Written for clarity, not speed: it walks views through explicit element offsets and accumulates
/// sums in `Double`. It is the specification the other backends are checked against.
final class NaiveBackend: Backend {
    var kind: BackendKind { .naive }
    var deviceName: String { "host CPU (reference loops)" }
    var memorySpace: MemorySpace { .host }

    func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability {
        switch kernel {
        case .op(.constant): .unsupported(reason: "constants are not executed")
        case .op, .fused: .supported
        }
    }

    func upload(_ value: Value) throws(TensorError) -> Value { value }
    func download(_ value: Value) throws(TensorError) -> Value { value }
    func synchronize() throws(TensorError) {}

    func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value {
        switch kernel {
        case .fused(let region): return try fused(region, inputs, output)
        case .op(let op): return try execute(op, inputs, output)
        }
    }

    /// A fresh row-major host value for a result.
    func allocate(_ signature: TensorSignature, for op: String) throws(TensorError) -> (Value, HostElements) {
        let buffer = try HostBuffer(byteCount: signature.byteCount, op: op)
        let value = Value(buffer: buffer, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType)
        return (value, HostElements(buffer, signature.scalarType))
    }

    private func execute(_ op: Op, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        switch op {
        case .constant, .reshape, .permute, .broadcast, .slice:
            return try executeWithoutKernel(op, inputs, output)
        case .unary(let unary):
            return try elementwise(op, inputs, output) { x, o, i in
                if x[0].type.isFloatingPoint { o.setFloat(unary.apply(x[0].float(i[0])), i[1]) } else { o.setInt(unary.apply(x[0].int(i[0])), i[1]) }
            }
        case .binary(let binary):
            return try elementwise(op, inputs, output) { x, o, i in
                if x[0].type.isFloatingPoint {
                    o.setFloat(binary.apply(x[0].float(i[0]), x[1].float(i[1])), i[2])
                } else {
                    o.setInt(binary.apply(x[0].int(i[0]), x[1].int(i[1])), i[2])
                }
            }
        case .select:
            return try elementwise(op, inputs, output) { x, o, i in
                o.copy(from: x[0].int(i[0]) != 0 ? x[1] : x[2], x[0].int(i[0]) != 0 ? i[1] : i[2], to: i[3])
            }
        case .cast:
            return try elementwise(op, inputs, output) { x, o, i in
                if x[0].type.isFloatingPoint { o.setFloat(x[0].float(i[0]), i[1]) } else { o.setInt(x[0].int(i[0]), i[1]) }
            }
        case .contiguous:
            return try elementwise(op, inputs, output) { x, o, i in o.copy(from: x[0], i[0], to: i[1]) }
        case .reduce(let reduction, let axes, _):
            return try reduce(reduction, axes: axes, inputs[0], output)
        case .argReduce(let arg, let axis, _):
            return try argReduce(arg, axis: axis, inputs[0], output)
        case .cumulativeSum(let axis):
            return try lines(op, axis: axis, inputs[0], output) { x, o, source, destination in
                var running = 0.0
                var runningInt: Int32 = 0
                for (s, d) in zip(source, destination) {
                    if x.type.isFloatingPoint {
                        running += Double(x.float(s))
                        o.setFloat(Float(running), d)
                    } else {
                        runningInt &+= x.int(s)
                        o.setInt(runningInt, d)
                    }
                }
            }
        case .topK(let k, let part):
            return try topK(k: k, part: part, inputs[0], output)
        case .softmax(let axis), .logSoftmax(let axis):
            let logarithmic = if case .logSoftmax = op { true } else { false }
            return try lines(op, axis: axis, inputs[0], output) { x, o, source, destination in
                let values = source.map { Double(x.float($0)) }
                let maximum = values.max() ?? 0
                let total = values.reduce(0) { $0 + Foundation.exp($1 - maximum) }
                for (value, d) in zip(values, destination) {
                    o.setFloat(Float(logarithmic ? value - maximum - Foundation.log(total) : Foundation.exp(value - maximum) / total), d)
                }
            }
        case .layerNorm(let axis, let epsilon):
            return try lines(op, axis: axis, inputs[0], output) { x, o, source, destination in
                let values = source.map { Double(x.float($0)) }
                let count = Double(Swift.max(values.count, 1))
                let mean = values.reduce(0, +) / count
                let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / count
                // Accurate in Double, but in Float's range: a variance past Float's largest value
                // is infinite, as in every float32 kernel, and the row normalises to zeros.
                let scale = 1 / (Double(Float(variance)) + Double(epsilon)).squareRoot()
                for (value, d) in zip(values, destination) { o.setFloat(Float((value - mean) * scale), d) }
            }
        case .matmul:
            return try matmul(inputs[0], inputs[1], output)
        case .pad(let padding, let fill):
            return try pad(padding, fill, inputs[0], output)
        case .concat(let axis):
            return try concat(axis: axis, inputs, output)
        case .gather(let axis):
            return try gather(axis: axis, inputs[0], inputs[1], output)
        }
    }
}

