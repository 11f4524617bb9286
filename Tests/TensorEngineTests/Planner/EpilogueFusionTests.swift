import Foundation
import Testing
@testable import TensorEngine

/// A ReLU reading a convolution that nothing else reads runs as one step, the convolution with
/// its results bounded in its epilogue, on every backend; the expected values are the naive
/// backend's convolution alone (a target, so never fused) with the ReLU applied here.
@Suite("Epilogue fusion") struct EpilogueFusionTests {
    /// Deterministic values in [-1, 1), with a NaN at `nan` (the input's first element by default).
    static func values(_ count: Int, seed: Int, nan: Int? = 0) -> [Float] {
        (0..<count).map { index in
            index == nan ? .nan : Float((index * 7919 + seed * 104_729) % 2001) / 1000 - 1
        }
    }

    static func convolution(_ x: Tensor, _ w: Tensor, _ b: Tensor, strides: [Int]) -> Tensor {
        x.convolution(weight: w, bias: b, strides: strides, padding: .same)
    }

    /// The naive convolution with `max(y, 0)` applied by hand (NaN stays NaN).
    static func expected(_ x: Tensor, _ w: Tensor, _ b: Tensor, strides: [Int]) async throws -> [Float] {
        let plain = convolution(x, w, b, strides: strides)
        try await Tensor.evaluate([plain], policy: .only(.naive))
        return try await plain.shapedArray(of: Float.self).scalars.map { $0.isNaN ? .nan : Swift.max($0, 0) }
    }

    static func policies() -> [ComputePolicy] {
        Engine.shared.backends.map { ComputePolicy.only($0.id) } + [.all]
    }

    static func expectClose(_ actual: [Float], _ expected: [Float], _ context: String) {
        #expect(actual.count == expected.count, "\(context): \(actual.count) values, not \(expected.count)")
        for (index, (a, e)) in zip(actual, expected).enumerated() {
            let close = e.isNaN ? a.isNaN : Swift.abs(a - e) <= 1e-4 * (1 + Swift.abs(e))
            if !close {
                Issue.record("\(context): element \(index) is \(a), expected \(e)")
                return
            }
        }
    }

    @Test(arguments: policies())
    func reluAfterAConvolutionIsOneStep(policy: ComputePolicy) async throws {
        let x = Tensor(shape: [2, 5, 9, 11], scalars: Self.values(2 * 5 * 9 * 11, seed: 1))
        let w = Tensor(shape: [7, 5, 3, 3], scalars: Self.values(7 * 5 * 9, seed: 2, nan: nil))
        let b = Tensor(shape: [7], scalars: Self.values(7, seed: 3, nan: nil))
        let expected = try await Self.expected(x, w, b, strides: [2, 1])
        #expect(expected.contains { $0.isNaN } && expected.contains(0) && expected.contains { $0 > 0 })
        let fused = Self.convolution(x, w, b, strides: [2, 1]).relu()
        let plan = try ComputePlan(for: [fused], policy: policy)
        #expect(plan.operations.map(\.op) == ["fused(convolution+relu)"])
        #expect(plan.operations.first?.fusedOps == ["convolution", "relu"])
        try await Tensor.evaluate([fused], policy: policy)
        Self.expectClose(try await fused.shapedArray(of: Float.self).scalars, expected, "\(policy)")
    }

    /// A convolution that is also asked for, or read by another op, keeps its own step.
    @Test func aConvolutionReadElsewhereIsNotFused() async throws {
        let x = Tensor(shape: [1, 3, 6, 6], scalars: Self.values(108, seed: 4))
        let w = Tensor(shape: [4, 3, 3, 3], scalars: Self.values(108, seed: 5, nan: nil))
        let b = Tensor(shape: [4], scalars: Self.values(4, seed: 6, nan: nil))
        let expected = try await Self.expected(x, w, b, strides: [1, 1])
        let plain = Self.convolution(x, w, b, strides: [1, 1])
        let relu = plain.relu()
        let plan = try ComputePlan(for: [plain, relu])
        #expect(plan.operations.map(\.op) == ["convolution", "relu"])
        let doubled = relu + plain.exp()
        #expect(try ComputePlan(for: [doubled]).operations.contains { $0.op == "convolution" })
        try await Tensor.evaluate([plain, relu])
        Self.expectClose(try await relu.shapedArray(of: Float.self).scalars, expected, "relu beside its convolution")
    }

    /// A cached plan runs the fused step on new data, and a plan reused at similar sizes runs the
    /// new graph's own convolution (another stride), not the one it was planned for.
    @Test func cachedAndResizedPlansRunTheirOwnConvolution() async throws {
        let w = Tensor(shape: [6, 4, 3, 3], scalars: Self.values(216, seed: 7, nan: nil))
        let b = Tensor(shape: [6], scalars: Self.values(6, seed: 8, nan: nil))
        for (seed, strides) in [(9, [2, 1]), (10, [2, 1]), (11, [1, 1])] {
            let x = Tensor(shape: [1, 4, 10, 12], scalars: Self.values(480, seed: seed, nan: nil))
            let expected = try await Self.expected(x, w, b, strides: strides)
            let fused = Self.convolution(x, w, b, strides: strides).relu()
            try await Tensor.evaluate([fused], policy: .cpuOnly)
            Self.expectClose(
                try await fused.shapedArray(of: Float.self).scalars, expected, "seed \(seed), strides \(strides)")
        }
    }

    /// Two fused convolutions concatenated along channels (a SqueezeNet fire module written with
    /// the Tensor API): the steps write into the concatenation's buffer, with the right values.
    @Test(arguments: policies())
    func fusedConvolutionsConcatenated(policy: ComputePolicy) async throws {
        let x = Tensor(shape: [1, 8, 7, 7], scalars: Self.values(392, seed: 12, nan: nil))
        let w1 = Tensor(shape: [16, 8, 1, 1], scalars: Self.values(128, seed: 13, nan: nil))
        let w3 = Tensor(shape: [16, 8, 3, 3], scalars: Self.values(1152, seed: 14, nan: nil))
        let b = Tensor(shape: [16], scalars: Self.values(16, seed: 15, nan: nil))
        let left = try await Self.expected(x, w1, b, strides: [1, 1])
        let right = try await Self.expected(x, w3, b, strides: [1, 1])
        let joined = Self.convolution(x, w1, b, strides: [1, 1]).relu()
            .concatenated(with: Self.convolution(x, w3, b, strides: [1, 1]).relu(), alongAxis: 1)
        try await Tensor.evaluate([joined], policy: policy)
        Self.expectClose(try await joined.shapedArray(of: Float.self).scalars, left + right, "\(policy)")
    }
}
