import Testing
@testable import TensorEngine

/// The host engine's folding of a multiply into the add that is its only use, and the values it
/// gives against the naive backend (bit for bit: the product and the sum still round apart).
@Suite("Elementwise steps")
struct ElementwiseStepTests {
    private func region(_ instructions: [FusedRegion.Instruction], inputs: Int, types: [ScalarType]? = nil) -> FusedRegion {
        FusedRegion(inputTypes: Array(repeating: .float32, count: inputs), instructions: instructions,
                    instructionTypes: types ?? Array(repeating: .float32, count: instructions.count))
    }

    @Test func aProductUsedOnceIsFoldedIntoItsAdd() {
        // relu(a*b + c) * 0.5 + tanh(a), as the fusion pass writes it: inputs a, b, c, 0.5.
        let chain = region([.binary(.multiply, 0, 1), .binary(.add, 4, 2), .unary(.relu, 5), .binary(.multiply, 6, 3),
                            .unary(.tanh, 0), .binary(.add, 7, 8)], inputs: 4)
        let steps = ElementwiseStep.steps(of: chain)
        #expect(steps.map(\.step) == [.multiplyAdd(0, 1, 2), .instruction(.unary(.relu, 5)), .instruction(.unary(.tanh, 0)), .multiplyAdd(6, 3, 8)])
        #expect(steps.map(\.register) == [5, 6, 8, 9])
    }

    @Test func theProductMayBeTheSecondAddend() {
        let steps = ElementwiseStep.steps(of: region([.binary(.multiply, 0, 1), .binary(.add, 2, 3)], inputs: 3))
        #expect(steps.map(\.step) == [.multiplyAdd(0, 1, 2)])
        #expect(steps.map(\.register) == [4])
    }

    @Test func aProductUsedTwiceOrNotAddedStays() {
        // (a*b) + (a*b): the product has two uses.
        let twice = region([.binary(.multiply, 0, 1), .binary(.add, 2, 2)], inputs: 2)
        #expect(ElementwiseStep.steps(of: twice).map(\.step) == twice.instructions.map { .instruction($0) })
        // a*b - c and a*b alone.
        let subtracted = region([.binary(.multiply, 0, 1), .binary(.subtract, 3, 2)], inputs: 3)
        #expect(ElementwiseStep.steps(of: subtracted).map(\.step) == subtracted.instructions.map { .instruction($0) })
        let alone = region([.binary(.multiply, 0, 1)], inputs: 2)
        #expect(ElementwiseStep.steps(of: alone).map(\.step) == [.instruction(.binary(.multiply, 0, 1))])
        // Sums and products of Bool registers are not folded.
        let logical = region([.binary(.multiply, 0, 1), .binary(.add, 3, 2)], inputs: 3, types: [.bool, .bool])
        #expect(ElementwiseStep.steps(of: logical).map(\.step) == logical.instructions.map { .instruction($0) })
    }

    /// Graphs whose regions fold, large enough for several blocks and workers, bit for bit.
    @Test(arguments: [1, 37, 70_001])
    func foldedRegionsMatchNaiveExactly(_ count: Int) async throws {
        let a = Tensor(randomNormal: [count], seed: 11)
        let b = Tensor(randomNormal: [count], seed: 12)
        let c = Tensor(randomNormal: [count], seed: 13)
        try await Tensor.evaluate([a, b, c])
        let graphs: [() -> Tensor] = [
            { (a * b + c).relu() * 0.5 + a.abs() },
            { c + a * b },
            { a * b + a * b },
            { (a * b) * 3 + c * b - a },
        ]
        for (index, graph) in graphs.enumerated() {
            let want = try await withComputePolicy(.only(.naive)) { try await graph().shapedArray(of: Float.self).scalars }
            let got = try await withComputePolicy(.only(.openblas)) { try await graph().shapedArray(of: Float.self).scalars }
            let differing = zip(got, want).filter { $0.bitPattern != $1.bitPattern && !($0.isNaN && $1.isNaN) }.count
            #expect(got.count == want.count && differing == 0, "graph \(index), \(count) elements: \(differing) differ")
        }
    }
}
