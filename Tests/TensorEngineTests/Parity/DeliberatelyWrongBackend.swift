@testable import TensorEngine

/// A backend that computes like the naive one, then corrupts every float result slightly: the
/// parity harness must catch it.
final class DeliberatelyWrongBackend: Backend {
    private let naive = NaiveBackend()
    var id: BackendID { .openblas }
    var defaultProfile: DeviceProfile { naive.defaultProfile }
    var deviceName: String { "deliberately wrong" }
    var memorySpace: MemorySpace { .host }

    static let kernels: KernelRegistry<DeliberatelyWrongBackend> = NaiveBackend.kernels.mapped(backend: { $0.naive }) { _, result throws(TensorError) in
        if result.scalarType == .float32, result.layout.elementCount > 0 {
            let elements = try HostElements(result)
            let offset = result.layout.offset
            elements.setFloat(elements.float(offset) + 0.01 * (1 + Swift.abs(elements.float(offset))), offset)
        }
        return result
    }

    func upload(_ value: Value) throws(TensorError) -> Value { value }
    func download(_ value: Value) throws(TensorError) -> Value { value }
    func synchronize() throws(TensorError) {}
}
