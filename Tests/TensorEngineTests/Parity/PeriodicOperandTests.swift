import Testing
@testable import TensorEngine

/// Fused elementwise regions whose operands repeat a run (a bias broadcast over rows), which the
/// OpenBLAS backend reads from a tiled copy, against the naive backend.
@Suite("Periodic operands")
struct PeriodicOperandTests {
    @Test func periods() {
        #expect(ElementwiseEngine.period(of: Layout(shape: [704, 384], strides: [0, 1], offset: 0)) == 384)
        #expect(ElementwiseEngine.period(of: Layout(shape: [4, 3, 5], strides: [0, 5, 1], offset: 2)) == 15)
        #expect(ElementwiseEngine.period(of: Layout(shape: [4, 1, 5], strides: [0, 7, 1], offset: 0)) == 5)
        #expect(ElementwiseEngine.period(of: Layout(shape: [4, 3, 5], strides: [15, 0, 1], offset: 0)) == nil)
        #expect(ElementwiseEngine.period(of: Layout(shape: [3, 5], strides: [1, 3], offset: 0)) == nil)
    }

    /// (rows, row shape): a row `[row shape]` broadcast over `rows`, through a bias add and GELU.
    @Test(arguments: [(704, [384]), (3, [5]), (1000, [7]), (9, [4, 300])])
    func broadcastRowsMatchNaive(_ rows: Int, _ rowShape: [Int]) async throws {
        let x = Tensor(randomNormal: [rows] + rowShape, seed: 3)
        let bias = Tensor(randomNormal: rowShape, seed: 4)
        try await Tensor.evaluate([x, bias])
        func graph() -> Tensor { (x + bias).gelu() * bias }
        let want = try await withComputePolicy(.only(.naive)) { try await graph().shapedArray(of: Float.self).scalars }
        let got = try await withComputePolicy(.only(.openblas)) { try await graph().shapedArray(of: Float.self).scalars }
        #expect(got.count == want.count)
        let worst = zip(got, want).map { Swift.abs($0 - $1) / (1 + Swift.abs($1)) }.max() ?? 0
        #expect(worst < 1e-5, "rows \(rows), row \(rowShape): worst relative difference \(worst)")
    }
}
