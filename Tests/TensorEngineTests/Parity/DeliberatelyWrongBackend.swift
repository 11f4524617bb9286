@testable import TensorEngine

/// A backend that computes like the naive one, then corrupts every float result slightly: the
/// parity harness must catch it.
final class DeliberatelyWrongBackend: Backend {
    private let naive = NaiveBackend()
    var kind: BackendKind { .openblas }
    var deviceName: String { "deliberately wrong" }
    var memorySpace: MemorySpace { .host }

    func capability(for kernel: Kernel, inputs: [TensorSignature], output: TensorSignature) -> Capability {
        naive.capability(for: kernel, inputs: inputs, output: output)
    }
    func upload(_ value: Value) throws(TensorError) -> Value { value }
    func download(_ value: Value) throws(TensorError) -> Value { value }
    func synchronize() throws(TensorError) {}

    func execute(_ kernel: Kernel, inputs: [Value], output: TensorSignature) throws(TensorError) -> Value {
        let result = try naive.execute(kernel, inputs: inputs, output: output)
        if case .op(let op) = kernel, op.kind.isView { return result }
        if result.scalarType == .float32, result.layout.elementCount > 0 {
            let elements = try HostElements(result)
            let offset = result.layout.offset
            elements.setFloat(elements.float(offset) + 0.01 * (1 + Swift.abs(elements.float(offset))), offset)
        }
        return result
    }
}
