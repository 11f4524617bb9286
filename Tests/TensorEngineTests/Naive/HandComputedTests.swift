import Testing
@testable import TensorEngine

/// Values worked out by hand, on the reference backend: the spec the others follow.
@Suite("Hand-computed values")
struct HandComputedTests {
    func floats(_ t: Tensor) async throws -> [Float] {
        try await withComputePolicy(.only(.naive)) { try await t.shapedArray(of: Float.self).scalars }
    }

    func ints(_ t: Tensor) async throws -> [Int32] {
        try await withComputePolicy(.only(.naive)) { try await t.shapedArray(of: Int32.self).scalars }
    }

    func bools(_ t: Tensor) async throws -> [Bool] {
        try await withComputePolicy(.only(.naive)) { try await t.shapedArray(of: Bool.self).scalars }
    }

    let m = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])

    @Test func properties() {
        #expect(m.shape == [2, 3])
        #expect(m.rank == 2)
        #expect(m.scalarCount == 6)
        #expect(!m.isScalar)
        let isFloat = m.scalarType == Float.self
        #expect(isFloat)
        #expect(m.dtype == .float32)
        #expect(Tensor(shape: [], scalars: [Int32(3)]).isScalar)
        #expect(Tensor(zeros: [2], scalarType: Float16.self).dtype == .float16)
    }

    @Test func creation() async throws {
        #expect(try await floats(Tensor(rangeFrom: 0, to: 1, by: 0.25)) == [0, 0.25, 0.5, 0.75])
        #expect(try await ints(Tensor(rangeFrom: Int32(5), to: 0, by: -2)) == [5, 3, 1])
        #expect(try await floats(Tensor(linearSpaceFrom: 0, through: 1, count: 5)) == [0, 0.25, 0.5, 0.75, 1])
        #expect(try await floats(Tensor(repeating: Float(7), shape: [2, 2])) == [7, 7, 7, 7])
        #expect(try await ints(Tensor(ones: [3], scalarType: Int32.self)) == [1, 1, 1])
        let literal: Tensor = [1, 2, 3]
        #expect(try await floats(literal * 2) == [2, 4, 6])
        let shaped = try #require(ShapedArray<Float>(scalars: [1, 2, 3, 4], shape: [2, 2]))
        #expect(try await floats(Tensor(shaped).transposed()) == [1, 3, 2, 4])
        #expect(try await floats(Tensor(stacking: [literal, literal * 10], alongAxis: 1)) == [1, 10, 2, 20, 3, 30])
    }

    @Test func randomIsDeterministicAndShaped() async throws {
        let a = try await floats(Tensor(randomNormal: [1000], mean: 2, standardDeviation: 0.5, seed: 42))
        let b = try await floats(Tensor(randomNormal: [1000], mean: 2, standardDeviation: 0.5, seed: 42))
        #expect(a == b)
        let mean = a.reduce(0, +) / 1000
        #expect(Swift.abs(mean - 2) < 0.1)
        let uniform = try await floats(Tensor(randomUniform: [1000], in: -1..<3, seed: 7))
        #expect(uniform.allSatisfy { (-1..<3).contains($0) })
        #expect(try await floats(Tensor(randomUniform: [4], seed: 1)) != (try await floats(Tensor(randomUniform: [4], seed: 2))))
    }

    @Test func arithmeticWithBroadcastingAndScalars() async throws {
        let row: Tensor = [10, 20, 30]
        let sum = m + row
        #expect(try await floats(sum) == [11, 22, 33, 14, 25, 36])
        #expect(try await floats(1 - m) == [0, -1, -2, -3, -4, -5])
        #expect(try await floats(m / 2) == [0.5, 1, 1.5, 2, 2.5, 3])
        #expect(try await floats(-m) == [-1, -2, -3, -4, -5, -6])
        #expect(try await floats(pow(m, 2)) == [1, 4, 9, 16, 25, 36])
        #expect(try await floats(m.clamped(to: 2...4)) == [2, 2, 3, 4, 4, 4])
        let column = Tensor(shape: [2, 1], scalars: [1, -1] as [Float])
        #expect(try await floats(column * row) == [10, 20, 30, -10, -20, -30])
    }

    @Test func integerSemantics() async throws {
        let a = Tensor([7, -7, 5, Int32.max] as [Int32])
        let b = Tensor([2, 2, 0, 1] as [Int32])
        #expect(try await ints(a / b) == [3, -3, 0, Int32.max], "division truncates toward zero; x / 0 is 0")
        #expect(try await ints(a + b) == [9, -5, 5, Int32.min], "addition wraps")
        #expect(try await ints(a - 3) == [4, -10, 2, Int32.max - 3], "a literal takes the tensor's type")
        #expect(try await ints(Tensor([2.9, -2.9, .nan, 1e12] as [Float]).cast(to: Int32.self)) == [2, -2, 0, Int32.max])
    }

    @Test func floatSemantics() async throws {
        let x = Tensor([-1.5, 0, 2.5, .nan] as [Float])
        let values = try await floats(x.relu())
        #expect(values[0...2] == [0, 0, 2.5] && values[3].isNaN)
        #expect(try await floats(Tensor([0.5, 1.5, 2.5, -0.5] as [Float]).round()) == [0, 2, 2, -0])
        let minimum = try await floats(x.pointwiseMin(Tensor([0, 0, 0, 0] as [Float])))
        #expect(minimum[0...2] == [-1.5, 0, 0] && minimum[3].isNaN, "NaN propagates")
        #expect(try await floats(Tensor([0, 1] as [Float]).gelu()).map { ($0 * 1e6).rounded() / 1e6 } == [0, 0.841345])
        #expect(try await floats(Tensor([0] as [Float]).sigmoid()) == [0.5])
        #expect(try await floats(Tensor([-2, 0, 3] as [Float]).sign()) == [-1, 0, 1])
        let silu = try await floats(Tensor([1] as [Float]).silu())
        #expect(Swift.abs(silu[0] - 0.7310586) < 1e-6)
    }

    /// asinh(x) = log(x + √(x² + 1)): 0 at 0, log(1 + √2) at 1, odd, about log(2x) for large x.
    @Test func inverseHyperbolicSine() async throws {
        let x = Tensor([0, 1, -1, 3, 1e20, .infinity, .nan] as [Float])
        let result = try await floats(x.asinh())
        let expected: [Float] = [0, 0.881_373_6, -0.881_373_6, 1.818_446_5, 46.744_849, .infinity, .nan]
        #expect(zip(result, expected).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) || Swift.abs($0 - $1) <= 1e-6 * Swift.max(1, Swift.abs($1)) },
                "\(result)")
    }

    @Test func comparisonAndSelection() async throws {
        #expect(try await bools(m .> 3) == [false, false, false, true, true, true])
        #expect(try await bools((m .>= 2) .& (m .<= 4)) == [false, true, true, true, false, false])
        #expect(try await bools(.!(m .== 1) .| (m .!= 6)) == [true, true, true, true, true, true])
        let replaced = Tensor([1, 2, 3] as [Float]).replacing(with: Tensor([4, 5, 6] as [Float]), where: Tensor([false, true, false]))
        #expect(try await floats(replaced) == [1, 5, 3])
        #expect(try await floats(m.replacing(with: 0, where: m .> 4)) == [1, 2, 3, 4, 0, 0])
    }

    @Test func reductions() async throws {
        #expect(try await floats(m.sum()) == [21])
        #expect(try await floats(m.sum(alongAxes: 0)) == [5, 7, 9])
        #expect(try await floats(m.mean(alongAxes: 1, keepRank: true)) == [2, 5])
        #expect(m.mean(alongAxes: 1, keepRank: true).shape == [2, 1])
        #expect(try await floats(m.max(alongAxes: -1)) == [3, 6])
        #expect(try await floats(m.min()) == [1])
        #expect(try await floats(m.product(alongAxes: 1)) == [6, 120])
        #expect(try await floats(m.variance(alongAxes: 1)) == [2.0 / 3, 2.0 / 3])
        #expect(try await ints(m.argmax()) == [5])
        #expect(try await ints(m.argmin(alongAxis: 1)) == [0, 0])
        #expect(try await ints(Tensor([1, .nan, 3, .nan] as [Float]).argmax()) == [1], "the first NaN is the maximum")
        #expect(try await floats(m.cumulativeSum(alongAxis: 1)) == [1, 3, 6, 4, 9, 15])
        let (values, indices) = Tensor([3, 1, 3, 2] as [Float]).topK(3)
        #expect(try await floats(values) == [3, 3, 2])
        #expect(try await ints(indices) == [0, 2, 3], "ties keep the lower index first")
        #expect(try await floats(Tensor(zeros: [0, 3]).sum(alongAxes: 0)) == [0, 0, 0])
    }

    @Test func shapes() async throws {
        #expect(try await floats(m.transposed()) == [1, 4, 2, 5, 3, 6])
        #expect(m.reshaped(to: [3, -1]).shape == [3, 2])
        #expect(m.flattened().shape == [6])
        #expect(m.expandingShape(at: 0, 3).shape == [1, 2, 3, 1])
        #expect(m.expandingShape(at: 0).squeezingShape().shape == [2, 3])
        #expect(m.expandingShape(at: 1).squeezingShape(at: 1).shape == [2, 3])
        #expect(try await floats(m.transposed().reshaped(to: [6])) == [1, 4, 2, 5, 3, 6])
        let parts = m.split(count: 3, alongAxis: 1)
        #expect(parts.count == 3)
        #expect(try await floats(parts[1]) == [2, 5])
        #expect(try await floats(m.split(sizes: [1, 2], alongAxis: 1)[1]) == [2, 3, 5, 6])
        #expect(try await floats(Tensor([1, 2] as [Float]).tiled(multiples: [3])) == [1, 2, 1, 2, 1, 2])
        #expect(try await floats(Tensor([1, 2] as [Float]).padded(forSizes: [(before: 1, after: 2)], with: 9)) == [9, 1, 2, 9, 9])
        #expect(try await floats(m.reversed(alongAxes: 1)) == [3, 2, 1, 6, 5, 4])
        #expect(try await floats(m.broadcast(to: [2, 2, 3])) == [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6])
        #expect(try await floats(Tensor(concatenating: [m, m * 0], alongAxis: 0)) == [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0])
    }

    @Test func subscripts() async throws {
        #expect(try await floats(m[1]) == [4, 5, 6])
        #expect(try await floats(m[0, 1...]) == [2, 3])
        #expect(try await floats(m[..., 0]) == [1, 4])
        #expect(try await floats(m[-1, ..<2]) == [4, 5])
        #expect(try await floats(m[0, ..., 2]) == [3])
        #expect(m[0..<1].shape == [1, 3])
        let gathered = m.gathering(atIndices: Tensor([2, 0] as [Int32]), alongAxis: 1)
        #expect(try await floats(gathered) == [3, 1, 6, 4])
    }

    @Test func neuralNetworkOps() async throws {
        let a = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
        #expect(try await floats(a.matmul(a)) == [7, 10, 15, 22])
        #expect(try await floats(Tensor([1, 2] as [Float]).matmul(Tensor([3, 4] as [Float]))) == [11])
        #expect(try await floats(a.matmul(Tensor([1, 1] as [Float]))) == [3, 7])
        #expect(a.expandingShape(at: 0).broadcast(to: [3, 2, 2]).matmul(a).shape == [3, 2, 2])
        let softmax = try await floats(Tensor([0, 0, Float(2).squareRoot()] as [Float]).log().softmax())
        #expect(Swift.abs(softmax.reduce(0, +) - 1) < 1e-6)
        let equal = try await floats(Tensor([5, 5] as [Float]).softmax())
        #expect(equal == [0.5, 0.5])
        let logSoftmax = try await floats(Tensor([1, 1] as [Float]).logSoftmax())
        #expect(logSoftmax.allSatisfy { Swift.abs($0 + 0.6931472) < 1e-6 }, "log(1/2) each")
        let normalized = try await floats(Tensor([1, 3] as [Float]).layerNorm(epsilon: 0))
        #expect(normalized == [-1, 1])
        let scaled = try await floats(Tensor([1, 3] as [Float]).layerNorm(epsilon: 0, scale: Tensor([2, 2] as [Float]), bias: Tensor([1, 1] as [Float])))
        #expect(scaled == [-1, 3])
    }

    @Test func castsAndFloat16() async throws {
        let half = Tensor([1.5, -2.25] as [Float]).cast(to: Float16.self)
        #expect(half.dtype == .float16)
        #expect(try await withComputePolicy(.only(.naive)) { try await half.shapedArray(of: Float16.self).scalars } == [1.5, -2.25])
        #expect(try await floats((half * 2).cast(to: Float.self)) == [3, -4.5])
        #expect(try await bools(Tensor([0, 2, .nan] as [Float]).cast(to: Bool.self)) == [false, true, true])
    }

    @Test func resultsAreKept() async throws {
        let y = (m * 3).sum()
        let first = try await y.shapedArray(of: Float.self)
        let statistics = try await Tensor.evaluate([y])
        #expect(statistics.steps == 0, "a kept result is not computed again")
        #expect(try await y.shapedArray(of: Float.self) == first)
    }

    @Test func sharedSubgraphsRunOnce() async throws {
        let shared = (m * 2).exp()
        let a = shared.sum()
        let b = shared.max()
        let statistics = try await Tensor.evaluate([a, b], policy: .only(.naive))
        // multiply+exp fuse into one step; the two reductions are two more.
        #expect(statistics.steps <= 4)
        #expect(statistics.peakLiveBytes <= statistics.totalIntermediateBytes)
    }
}
