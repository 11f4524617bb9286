import Testing
@testable import TensorEngine

/// Reductions of fewer rows than the OpenBLAS backend has workers, which it cuts each row of into
/// pieces (``OpenBLASBackend/reduceLongRows(_:_:rows:extent:parts:store:)``): against the naive
/// backend's, with row lengths that are not whole blocks and a NaN in a later piece.
@Suite("Long-row reductions")
struct LongRowReductionTests {
    /// Values in [0.5, 1.5), with a NaN at `nanAt`.
    static func values(_ count: Int, nanAt: Int? = nil) -> [Float] {
        (0..<count).map { index in index == nanAt ? .nan : 0.5 + Float((index * 7919) % 1000) / 1000 }
    }

    /// Each reduction of `scalars` shaped `shape`, computed under `policy`.
    static func reductions(_ shape: [Int], _ scalars: [Float], _ policy: ComputePolicy) async throws
        -> [(name: String, values: [Float])]
    {
        let x = Tensor(shape: shape, scalars: scalars)
        let reduced = [
            ("sum", x.sum()), ("mean", x.mean()), ("max", x.max()), ("min", x.min()),
            ("sum of rows", x.sum(alongAxes: -1)), ("max of rows", x.max(alongAxes: -1)),
        ]
        try await Tensor.evaluate(reduced.map(\.1), policy: policy)
        var results: [(name: String, values: [Float])] = []
        for (name, tensor) in reduced { results.append((name, try await tensor.shapedArray(of: Float.self).scalars)) }
        return results
    }

    @Test(arguments: [[100_003], [1, 65_537], [3, 40_001]])
    func piecesCombineAsOneRow(shape: [Int]) async throws {
        let count = shape.reduce(1, *)
        for nanAt in [nil, count - 5] {
            let scalars = Self.values(count, nanAt: nanAt)
            let expected = try await Self.reductions(shape, scalars, .only(.naive))
            let actual = try await Self.reductions(shape, scalars, .only(.openblas))
            for (want, got) in zip(expected, actual) {
                #expect(got.values.count == want.values.count)
                for (index, (a, e)) in zip(got.values, want.values).enumerated() {
                    let close = e.isNaN ? a.isNaN : Swift.abs(a - e) <= 1e-5 * Swift.max(1, Swift.abs(e))
                    if !close {
                        let nan = nanAt.map(String.init) ?? "none"
                        Issue.record("\(want.name) of \(shape), NaN at \(nan): [\(index)] \(a), naive \(e)")
                    }
                }
            }
        }
    }

    /// A product cut into pieces, exactly: powers of two, each block of 64 values cancelling
    /// (values 32 apart are reciprocals, so every lane and every piece stays inside `Float`'s
    /// range), then a tail whose product is 2, so the result is exact and must be 2. A piece or
    /// the tail left out, or a wrong identity, gives another power of two. (Values near 1 would
    /// test rounding instead: a `Float` product of 70 001 of them, in 32 lanes or one after
    /// another, drifts from the exact product by 2e-4.)
    @Test(arguments: [16_387, 70_019])
    func productOfPieces(count: Int) async throws {
        var state: UInt32 = 12_345
        var scalars: [Float] = []
        while scalars.count + 64 <= count - 3 {
            let exponents = (0..<32).map { _ in
                state = state &* 1_664_525 &+ 1_013_904_223
                return Int(state >> 16) % 3 - 1
            }
            scalars += exponents.map { Float(sign: .plus, exponent: $0, significand: 1) }
            scalars += exponents.map { Float(sign: .plus, exponent: -$0, significand: 1) }
        }
        scalars += [Float](repeating: 1, count: count - 3 - scalars.count) + [2, 2, 0.5]
        let product = Tensor(shape: [count], scalars: scalars).product()
        try await Tensor.evaluate([product], policy: .only(.openblas))
        #expect(try await product.shapedArray(of: Float.self).scalars == [2])
    }
}
