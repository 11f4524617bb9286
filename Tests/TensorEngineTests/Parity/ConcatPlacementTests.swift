import Testing
@testable import TensorEngine

/// Concatenations whose operands the executor has their convolutions write in place
/// (`ConcatPlacements`), on the openblas backend against the naive one: placed, partly placed
/// (operands from elementwise steps, an operand read elsewhere too, a run not 64-byte aligned, a
/// batch of two, the same operand twice, a nested concatenation) and the concatenation as a
/// target beside its operands.
@Suite("Concatenation in place")
struct ConcatPlacementTests {
    /// A batch `batch` image of `channels` × `side` × `side` and three convolutions of it:
    /// 1 × 1 to `first` channels, 3 × 3 (padded) to `second`, 1 × 1 to 3.
    struct Fire {
        let x: Tensor
        let convolutions: [Tensor]

        init(batch: Int = 1, channels: Int = 8, side: Int, first: Int = 16, second: Int = 16) {
            x = Tensor(randomNormal: [batch, channels, side, side], seed: 11)
            let w1 = Tensor(randomNormal: [first, channels, 1, 1], seed: 12)
            let w3 = Tensor(randomNormal: [second, channels, 3, 3], seed: 13)
            let wOdd = Tensor(randomNormal: [3, channels, 1, 1], seed: 14)
            convolutions = [
                x.convolution(weight: w1), x.convolution(weight: w3, padding: .symmetric([1, 1])),
                x.convolution(weight: wOdd),
            ]
        }
    }

    static let graphs: [(String, @Sendable () -> [Tensor])] = [
        ("two convolutions", {
            let f = Fire(side: 13)
            return [Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1)]
        }),
        ("operands made by elementwise steps, which write buffers of their own", {
            let f = Fire(side: 13)
            return [Tensor(concatenating: [f.convolutions[0].relu(), f.convolutions[1].relu()], alongAxis: 1)]
        }),
        ("an operand read elsewhere too", {
            let f = Fire(side: 13)
            let c = Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1)
            return [c.sum(alongAxes: 1) + f.convolutions[0].sum(alongAxes: 1)]
        }),
        ("a run not 64-byte aligned", {
            let f = Fire(side: 5)
            return [Tensor(concatenating: [f.convolutions[2], f.convolutions[0], f.convolutions[1]], alongAxis: 1)]
        }),
        ("a batch of two", {
            let f = Fire(batch: 2, side: 7)
            return [Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1)]
        }),
        ("the same operand twice", {
            let f = Fire(side: 8)
            return [Tensor(concatenating: [f.convolutions[0], f.convolutions[0], f.convolutions[1]], alongAxis: 1)]
        }),
        ("nested", {
            let f = Fire(side: 8)
            let inner = Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1)
            return [Tensor(concatenating: [inner, f.convolutions[2]], alongAxis: 1).relu()]
        }),
        ("targets beside the concatenation", {
            let f = Fire(side: 16)
            return [Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1), f.convolutions[1]]
        }),
        ("along the last axis", {
            let f = Fire(side: 4, first: 1, second: 1)
            let rows = f.convolutions[0].reshaped(to: [1, 16])
            return [Tensor(concatenating: [rows, f.convolutions[1].reshaped(to: [1, 16])], alongAxis: 1)]
        }),
    ]

    @Test(arguments: graphs.indices) func matchesNaive(_ index: Int) async throws {
        let (name, graph) = Self.graphs[index]
        func results(_ backend: BackendID) async throws -> [[Float]] {
            try await withComputePolicy(.only(backend)) {
                var all: [[Float]] = []
                for tensor in graph() { all.append(try await tensor.shapedArray(of: Float.self).scalars) }
                return all
            }
        }
        let want = try await results(.naive)
        let got = try await results(.openblas)
        #expect(got.map(\.count) == want.map(\.count), "\(name)")
        for (g, w) in zip(got, want) {
            let worst = zip(g, w).map { Swift.abs($0 - $1) / (1 + Swift.abs($1)) }.max() ?? 0
            #expect(worst < 1e-4, "\(name): worst relative difference \(worst)")
        }
    }

    /// Two 1 × 1 convolutions to 16 channels of a 13 × 13 image, concatenated: both are placed
    /// (runs of 16 · 169 floats, multiples of 64 bytes), so the plan's buffers are the
    /// concatenation's alone, counted once.
    @Test func placedOperandsShareTheConcatenationsBuffer() async throws {
        let f = Fire(side: 13)
        _ = try await Tensor.evaluate([f.x])
        let c = Tensor(concatenating: [f.convolutions[0], f.convolutions[1]], alongAxis: 1)
        let statistics = try await withComputePolicy(.only(.openblas)) { try await Tensor.evaluate([c]) }
        #expect(statistics.totalIntermediateBytes == 32 * 169 * 4)
        #expect(statistics.peakLiveBytes == 32 * 169 * 4)
    }
}
