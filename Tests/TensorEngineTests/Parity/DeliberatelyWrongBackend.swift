@testable import TensorEngine

/// A backend that computes like the naive one, then corrupts every float result slightly: the
/// parity harness must catch it. It registers every kind the naive backend runs, each computed by
/// the naive backend (composite ops as their decompositions there) and corrupted after.
final class DeliberatelyWrongBackend: Backend {
    private let naive = NaiveBackend()
    var id: BackendID { .openblas }
    var deviceName: String { "deliberately wrong" }
    var memorySpace: MemorySpace { .host }
    var defaultProfile: DeviceProfile { naive.defaultProfile }
    var cacheBytes: Int? { nil }

    static let kernels: KernelRegistry<DeliberatelyWrongBackend> = {
        var registry = KernelRegistry<DeliberatelyWrongBackend>()
        let computed = OpKind.allCases.filter { $0 != .constant && !$0.isView }
        registry.register(computed) { wrong, op, inputs, output throws(TensorError) in
            try corrupt(try wrong.naive.execute(.op(op), inputs: inputs, output: output))
        }
        registry.registerFused { wrong, region, inputs, output throws(TensorError) in
            try corrupt(try wrong.naive.execute(.fused(region), inputs: inputs, output: output))
        }
        return registry
    }()

    private static func corrupt(_ result: Value) throws(TensorError) -> Value {
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
