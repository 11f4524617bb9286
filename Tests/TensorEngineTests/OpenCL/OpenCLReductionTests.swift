import Testing
@testable import TensorEngine

@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLReductionTests {
    @Test func reductionsAlongAxesMatch() async throws {
        for op in [OpKind.sum, .mean, .max, .min, .product] {
            let kind = op
            let scale: Float = op == .product ? 0.1 : 1
            try await expectParity("\(op) all", kind, reductionLength: 7 * 9 * 5) { (random([7, 9, 5], seed: 30, scale: scale) + (op == .product ? Float(1) : Float(0))).reduceForTest(op, axes: [0, 1, 2]) }
            try await expectParity("\(op) axis 1 keepRank", kind, reductionLength: 9) { random([7, 9, 5], seed: 31).reduceForTest(op, axes: [1], keepRank: true) }
            try await expectParity("\(op) axes 0,2 of transposed", kind, reductionLength: 35) { random([5, 9, 7], seed: 32).transposed(permutation: [2, 1, 0]).reduceForTest(op, axes: [0, 2]) }
            try await expectParity("\(op) float16", kind, reductionLength: 9) { random([7, 9], seed: 33).cast(to: Float16.self).reduceForTest(op, axes: [1]) }
            try await expectParity("\(op) empty axis", kind) { random([3, 0], seed: 34).reduceForTest(op, axes: [1]) }
            try await expectParity("\(op) with NaN", kind, reductionLength: 20) { Tensor(shape: [2, 10], scalars: specialFloats).reduceForTest(op, axes: [1]) }
            if op != .mean {
                try await expectParity("\(op) int32", kind, reductionLength: 10) { Tensor(shape: [2, 10], scalars: specialInts).reduceForTest(op, axes: [1]) }
            }
        }
        // Long rows take the two-stage path.
        try await expectParity("sum of 1M", .sum, reductionLength: 1 << 20) { random([1 << 20], seed: 35).sum() }
        try await expectParity("max of 1M", .max, reductionLength: 1 << 20) { random([1 << 20], seed: 36).max() }
        try await expectParity("mean of 2 x 300k", .mean, reductionLength: 300_000) { random([2, 300_000], seed: 37).mean(alongAxes: 1) }
        try await expectParity("int sum of 1M", .sum, reductionLength: 1 << 20) {
            Tensor(randomUniform: [1 << 20], in: -1000..<1000, seed: 38, scalarType: Int32.self).sum()
        }
    }

    @Test func argReductionsFollowTieAndNaNRules() async throws {
        let ties: [Float] = [1, 3, 3, 2, -1, -1, 0, 3, .nan, 5, .nan, 5]
        for op in [OpKind.argmax, .argmin] {
            let kind = op
            try await expectParity("\(op) ties and NaN", kind) { Tensor(shape: [3, 4], scalars: ties).argReduceForTest(op, axis: 1) }
            try await expectParity("\(op) axis 0", kind) { Tensor(shape: [3, 4], scalars: ties).argReduceForTest(op, axis: 0) }
            try await expectParity("\(op) random long", kind) { random([3, 5000], seed: 40).argReduceForTest(op, axis: 1) }
            try await expectParity("\(op) int32", kind) { Tensor(shape: [4, 5], scalars: specialInts).argReduceForTest(op, axis: 1) }
            try await expectParity("\(op) float16", kind) { random([6, 70], seed: 41).cast(to: Float16.self).argReduceForTest(op, axis: 1) }
        }
    }

    @Test func lineOpsMatch() async throws {
        for axis in [0, 1, 2] {
            try await expectParity("softmax axis \(axis)", .softmax, reductionLength: 8) { random([6, 8, 5], seed: 50, scale: 4).softmax(alongAxis: axis) }
            try await expectParity("logSoftmax axis \(axis)", .logSoftmax, reductionLength: 8) { random([6, 8, 5], seed: 51, scale: 4).logSoftmax(alongAxis: axis) }
            try await expectParity("layerNorm axis \(axis)", .layerNorm, reductionLength: 8) { random([6, 8, 5], seed: 52, scale: 3).layerNormForTest(axis: axis) }
            try await expectParity("cumulativeSum axis \(axis)", .cumulativeSum, reductionLength: 8) { random([6, 8, 5], seed: 53).cumulativeSum(alongAxis: axis) }
        }
        try await expectParity("softmax long row", .softmax, reductionLength: 10_000) { random([3, 10_000], seed: 54, scale: 5).softmax() }
        try await expectParity("softmax transposed float16", .softmax, reductionLength: 40) { random([40, 7], seed: 55).cast(to: Float16.self).transposed().softmax() }
        try await expectParity("softmax with inf and NaN", .softmax, reductionLength: 5) { Tensor(shape: [4, 5], scalars: specialFloats).softmax() }
        try await expectParity("cumulativeSum long", .cumulativeSum, reductionLength: 4096) { random([2, 4096], seed: 56).cumulativeSum(alongAxis: 1) }
        try await expectParity("cumulativeSum int32", .cumulativeSum, reductionLength: 10) { Tensor(shape: [2, 10], scalars: specialInts).cumulativeSum(alongAxis: 1) }
        try await expectParity("layerNorm size one", .layerNorm) { random([4, 1], seed: 57).layerNormForTest(axis: 1) }
    }

    @Test func topKMatches() async throws {
        let ties: [Float] = [1, 3, 3, 2, -1, -1, 0, 3, .nan, 5, .nan, 5]
        for k in [0, 1, 3, 4] {
            try await expectParity("topK \(k) values", .topK) { Tensor(shape: [3, 4], scalars: ties).topK(k).values }
            try await expectParity("topK \(k) indices", .topK) { Tensor(shape: [3, 4], scalars: ties).topK(k).indices }
        }
        try await expectParity("topK int32", .topK) { Tensor(shape: [2, 10], scalars: specialInts).topK(5).indices }
        try await expectParity("topK float16 values", .topK) { random([5, 50], seed: 60).cast(to: Float16.self).topK(7).values }
        try await expectParity("topK transposed", .topK) { random([50, 5], seed: 61).transposed().topK(6).indices }
    }
}

extension Tensor {
    func reduceForTest(_ kind: OpKind, axes: [Int], keepRank: Bool = false) -> Tensor {
        Tensor.record(.reduction(kind, axes: axes, keepRank: keepRank), [self], at: nil)
    }
    func argReduceForTest(_ kind: OpKind, axis: Int) -> Tensor {
        Tensor.record(.reduction(kind, axes: [axis], keepRank: false), [self], at: nil)
    }
    func layerNormForTest(axis: Int) -> Tensor {
        Tensor.record(.layerNorm(axis: axis, epsilon: 1e-5), [self], at: nil)
    }
}
