import Testing
@testable import TensorEngine

/// `Tensor.scaledDotProductAttention` as users call it: untyped literals against values worked
/// out by hand, written-out attention recorded as the op, and bad arguments as typed errors.
@Suite("Attention")
struct AttentionTests {
    @Test func oneQueryByHand() async throws {
        // Scores [0, 1] · 1 plus the mask [0, -1]: both 0, so the weights are ½ and ½.
        let query = Tensor(shape: [1, 2], scalars: [1.0, 0.0])
        let key = Tensor(shape: [2, 2], scalars: [0.0, 5.0, 1.0, 3.0])
        let value = Tensor(shape: [2, 2], scalars: [2.0, 4.0, 6.0, 8.0])
        let out = Tensor.scaledDotProductAttention(
            query: query, key: key, value: value, mask: Tensor(shape: [1, 2], scalars: [0.0, -1.0]), scale: 1)
        #expect(try await out.shapedArray(of: Float.self).scalars == [4, 6])
        // Causal with two queries over two keys: the first sees only the first key.
        let causal = Tensor.scaledDotProductAttention(
            query: Tensor(shape: [2, 2], scalars: [1.0, 0.0, 0.0, 1.0]), key: key, value: value, causal: true)
        let rows = try await causal.shapedArray(of: Float.self).scalars
        #expect(Array(rows.prefix(2)) == [2, 4])
    }

    @Test func writtenOutAttentionIsOneOp() {
        let q = Tensor(randomNormal: [2, 4, 8], seed: 1)
        let k = Tensor(randomNormal: [2, 5, 8], seed: 2)
        let v = Tensor(randomNormal: [2, 5, 3], seed: 3)
        let mask = Tensor(zeros: [2, 1, 5], scalarType: Float.self)
        let written = ((q.matmul(k.transposed(permutation: 0, 2, 1)) / Float(8).squareRoot()) + mask)
            .softmax(alongAxis: -1).matmul(v)
        #expect(written.node?.op.kind == .attention)
        #expect(written.node.map { abs($0.op.attentionScale - 1 / Float(8).squareRoot()) < 1e-7 } == true)
        // A softmax along another axis is not attention.
        let other = q.matmul(k.transposed(permutation: 0, 2, 1)).softmax(alongAxis: 1)
        #expect(other.matmul(Tensor(randomNormal: [2, 5, 3], seed: 4)).node?.op.kind == .matmul)
    }

    @Test func badArgumentsAreTypedErrors() {
        let q = Tensor(zeros: [2, 4, 8], scalarType: Float.self)
        let k = Tensor(zeros: [2, 5, 8], scalarType: Float.self)
        let v = Tensor(zeros: [2, 5, 3], scalarType: Float.self)
        // A key of another depth, a value of another length, other leading axes.
        #expect(Tensor.scaledDotProductAttention(query: q, key: Tensor(zeros: [2, 5, 7], scalarType: Float.self), value: v)
            .error?.kind == .shapeMismatch)
        #expect(Tensor.scaledDotProductAttention(query: q, key: k, value: Tensor(zeros: [2, 6, 3], scalarType: Float.self))
            .error?.kind == .shapeMismatch)
        #expect(Tensor.scaledDotProductAttention(query: Tensor(zeros: [3, 4, 8], scalarType: Float.self), key: k, value: v)
            .error?.kind == .shapeMismatch)
        // A mask that does not broadcast to the scores, a scale that is not finite, integers.
        let error = Tensor.scaledDotProductAttention(
            query: q, key: k, value: v, mask: Tensor(zeros: [4, 4], scalarType: Float.self)).error
        #expect(error?.kind == .shapeMismatch && error?.op == "attention")
        #expect(Tensor.scaledDotProductAttention(query: q, key: k, value: v, scale: .nan).error?.kind == .invalidArgument)
        #expect(Tensor.scaledDotProductAttention(query: q, key: k, value: v, scale: .infinity).error != nil)
        let ints = Tensor(zeros: [2, 4, 8], scalarType: Int32.self)
        #expect(Tensor.scaledDotProductAttention(query: ints, key: ints, value: ints).error != nil)
        // A vector is not a sequence of queries.
        #expect(Tensor.scaledDotProductAttention(query: Tensor([1.0, 2.0]), key: k, value: v).error?.kind == .shapeMismatch)
    }
}
