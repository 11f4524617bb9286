import Testing

@testable import TensorEngine

/// Chains of reshapes and permutations are recorded as one view of their source, and views
/// that change nothing as the tensor itself. Values against index arithmetic done by hand.
@Suite("View chains")
struct ViewChainTests {
    /// `[2, 3, 4]` holding 0 ..< 24 in row-major order.
    static let values = (0..<24).map(Float.init)
    static var x: Tensor { Tensor(shape: [2, 3, 4], scalars: values) }

    @Test func reshapesOfReshapesReadTheSource() async throws {
        let x = Self.x
        let y = x.reshaped(to: [6, 4]).reshaped(to: [4, 6]).reshaped(to: [3, -1])
        #expect(y.shape == [3, 8])
        #expect(y.node?.op.kind == .reshape && y.node?.inputs.first === x.node)
        // A reshape keeps the row-major order of the elements.
        #expect(try await y.shapedArray(of: Float.self).scalars == Self.values)
    }

    @Test func viewsThatChangeNothingAreTheTensor() {
        let x = Self.x
        #expect(x.reshaped(to: [2, 3, 4]).node === x.node)
        #expect(x.reshaped(to: [2, -1, 4]).node === x.node)
        #expect(x.transposed(permutation: 0, 1, 2).node === x.node)
        #expect(x.transposed(permutation: -3, -2, -1).node === x.node)
        // A permutation and its inverse.
        #expect(x.transposed(permutation: 1, 2, 0).transposed(permutation: 2, 0, 1).node === x.node)
    }

    @Test func permutationsOfPermutationsCompose() async throws {
        let x = Self.x
        // Axis i of the result is axis p[i] of its operand: first [3, 2, 4] by (1, 0, 2), then
        // [4, 3, 2] by (2, 0, 1): element (a, b, c) is x[c][b][a].
        let y = x.transposed(permutation: 1, 0, 2).transposed(permutation: 2, 0, 1)
        #expect(y.shape == [4, 3, 2])
        #expect(y.node?.op.kind == .permute && y.node?.inputs.first === x.node)
        var expected: [Float] = []
        for a in 0..<4 { for b in 0..<3 { for c in 0..<2 { expected.append(Float(c * 12 + b * 4 + a)) } } }
        #expect(try await y.shapedArray(of: Float.self).scalars == expected)
    }

    @Test func aReshapeOfAPermutedViewCopiesOnce() async throws {
        // [3, 2, 4] by (1, 0, 2): element (b, a, c) is x[a][b][c]; as [6, 4], then [24].
        let y = Self.x.transposed(permutation: 1, 0, 2).reshaped(to: [6, 4]).reshaped(to: [24])
        #expect(y.node?.op.kind == .reshape && y.node?.inputs.first?.op.kind == .contiguous)
        var expected: [Float] = []
        for b in 0..<3 { for a in 0..<2 { for c in 0..<4 { expected.append(Float(a * 12 + b * 4 + c)) } } }
        #expect(try await y.shapedArray(of: Float.self).scalars == expected)
    }

    @Test func aComputedViewIsReadAsItIs() async throws {
        let x = Self.x
        let rows = x.reshaped(to: [6, 4])
        _ = try await rows.shapedArray(of: Float.self)
        // Its result is stored: a later reshape reads it rather than walking back to `x`.
        let flat = rows.reshaped(to: [24])
        #expect(flat.node?.inputs.first === rows.node)
        #expect(try await flat.shapedArray(of: Float.self).scalars == Self.values)
    }

    @Test func badPermutationsStillFail() {
        #expect(Self.x.transposed(permutation: 0, 0, 1).error != nil)
        #expect(Self.x.transposed(permutation: 0, 1).error != nil)
        #expect(Self.x.reshaped(to: [5, 5]).error != nil)
    }
}
