import Testing
@testable import TensorEngine
import TensorEngineChecks

/// Whether this machine has an OpenCL device the engine could open.
let openCLAvailable = Engine.shared.backend(.opencl) != nil

/// A tensor's elements as `Double` (exact for every scalar type), evaluated under a policy.
func evaluated(_ make: () -> Tensor, policy: ComputePolicy) async throws -> (shape: [Int], values: [Double], type: ScalarType) {
    try await withComputePolicy(policy) {
        let tensor = make()
        switch tensor.dtype {
        case .float32:
            let array = try await tensor.shapedArray(of: Float.self)
            return (array.shape, array.scalars.map { Double($0) }, .float32)
        case .float16:
            let array = try await tensor.shapedArray(of: Float16.self)
            return (array.shape, array.scalars.map { Double(Float($0)) }, .float16)
        case .int32:
            let array = try await tensor.shapedArray(of: Int32.self)
            return (array.shape, array.scalars.map { Double($0) }, .int32)
        case .bool:
            let array = try await tensor.shapedArray(of: Bool.self)
            return (array.shape, array.scalars.map { $0 ? 1 : 0 }, .bool)
        case .int64:
            let array = try await tensor.shapedArray(of: Int64.self)
            return (array.shape, array.scalars.map { Double($0) }, .int64)
        case .float64:
            let array = try await tensor.shapedArray(of: Double.self)
            return (array.shape, array.scalars, .float64)
        }
    }
}

/// Evaluates the graph `make` builds on the naive backend and on OpenCL, and expects every element
/// within the op's parity tolerance; a failure names the case, the first bad element and the bound.
func expectParity(
    _ label: String, _ kind: OpKind, reductionLength: Int = 1, sourceLocation: Testing.SourceLocation = #_sourceLocation,
    _ make: () -> Tensor
) async throws {
    let expected = try await evaluated(make, policy: .only(.naive))
    let actual = try await evaluated(make, policy: .only(.opencl))
    #expect(actual.shape == expected.shape, "\(label): shape \(actual.shape) vs \(expected.shape)", sourceLocation: sourceLocation)
    #expect(actual.type == expected.type, "\(label): type", sourceLocation: sourceLocation)
    guard actual.values.count == expected.values.count else { return }
    let tolerance = kind.parityTolerance(reductionLength: reductionLength)
    var bad: [Int] = []
    for i in actual.values.indices {
        let (a, e) = (actual.values[i], expected.values[i])
        let ok = expected.type.isFloatingPoint ? tolerance.accepts(Float(a), Float(e)) : a == e
        if !ok { bad.append(i) }
    }
    if let first = bad.first {
        Issue.record("\(label) [\(kind), \(expected.type), shape \(expected.shape)]: \(bad.count) of \(expected.values.count) elements differ; first at \(first): opencl \(actual.values[first]) vs naive \(expected.values[first]) (tolerance \(tolerance))", sourceLocation: sourceLocation)
    }
}

/// Values with the awkward cases every float op must get right.
let specialFloats: [Float] = [0, -0.0, 1, -1, 0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 1e-3, 100, -100, .infinity, -.infinity, .nan, 1e30, -1e-30, 7, 0.25]

let specialInts: [Int32] = [0, 1, -1, 2, -2, 7, -7, 100, Int32.max, Int32.min, 46341, -46341, 3, 12, -12, 5, 0, 9, -9, 1 << 20]

func random(_ shape: [Int], seed: Int, scale: Float = 1) -> Tensor {
    Tensor(randomNormal: shape, standardDeviation: scale, seed: UInt64(seed))
}
