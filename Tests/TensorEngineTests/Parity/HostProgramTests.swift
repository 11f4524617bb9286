import Testing
@testable import TensorEngine

/// The host engine's lowering of regions to vector steps: an op's expression node by node, the
/// hand-tuned ops as one step, literals as registers, and a multiply folded into the add that is
/// its only use; and the values it gives against the naive backend (bit for bit where no math
/// function is involved: the product and the sum still round apart).
@Suite("Host programs")
struct HostProgramTests {
    private func region(_ instructions: [(OpKind, [Int])], inputs: Int, types: [ScalarType]? = nil) -> FusedRegion {
        FusedRegion(inputTypes: Array(repeating: .float32, count: inputs),
                    instructions: instructions.map { FusedRegion.Instruction(op: Op($0.0), operands: $0.1) },
                    instructionTypes: types ?? Array(repeating: .float32, count: instructions.count))
    }

    @Test func aProductUsedOnceIsFoldedIntoItsAdd() {
        // relu(a*b + c) * 0.5 + tanh(a), as the fusion pass writes it: inputs a, b, c, 0.5.
        let chain = region([(.multiply, [0, 1]), (.add, [4, 2]), (.relu, [5]), (.multiply, [6, 3]), (.tanh, [0]), (.add, [7, 8])], inputs: 4)
        let program = HostProgram(chain)
        #expect(program.steps.map(\.step) == [.multiplyAdd(0, 1, 2), .fast(.relu, 5), .math(.tanh, 0, 0), .multiplyAdd(6, 3, 8)])
        #expect(program.steps.map(\.register) == [5, 6, 8, 9])
        #expect(program.literals.isEmpty)
    }

    @Test func theProductMayBeTheSecondAddend() {
        let program = HostProgram(region([(.multiply, [0, 1]), (.add, [2, 3])], inputs: 3))
        #expect(program.steps.map(\.step) == [.multiplyAdd(0, 1, 2)])
        #expect(program.steps.map(\.register) == [4])
    }

    @Test func aProductUsedTwiceOrNotAddedStays() {
        // (a*b) + (a*b): the product has two uses.
        let twice = HostProgram(region([(.multiply, [0, 1]), (.add, [2, 2])], inputs: 2))
        #expect(twice.steps.map(\.step) == [.arithmetic(.multiply, 0, 1), .arithmetic(.add, 2, 2)])
        // a*b - c and a*b alone.
        let subtracted = HostProgram(region([(.multiply, [0, 1]), (.subtract, [3, 2])], inputs: 3))
        #expect(subtracted.steps.map(\.step) == [.arithmetic(.multiply, 0, 1), .arithmetic(.subtract, 3, 2)])
        let alone = HostProgram(region([(.multiply, [0, 1])], inputs: 2))
        #expect(alone.steps.map(\.step) == [.arithmetic(.multiply, 0, 1)])
        // Stored as Bool, a float result becomes 0 or 1 first, so nothing is folded across it.
        let logical = HostProgram(region([(.multiply, [0, 1]), (.add, [3, 2])], inputs: 3, types: [.bool, .bool]))
        #expect(logical.steps.map(\.step) == [.arithmetic(.multiply, 0, 1), .indicator(3), .arithmetic(.add, 4, 2), .indicator(5)])
    }

    @Test func expressionsLowerNodeByNode() {
        // 1 / x: the literal is a register filled once.
        let reciprocal = HostProgram(region([(.reciprocal, [0])], inputs: 1))
        #expect(reciprocal.literals.map(\.register) == [1] && reciprocal.literals.map(\.value) == [1])
        #expect(reciprocal.steps.map(\.step) == [.arithmetic(.divide, 1, 0)])
        // silu = x · sigmoid(x): the applied sigmoid goes through its vector function.
        let silu = HostProgram(region([(.silu, [0])], inputs: 1))
        #expect(silu.steps.map(\.step) == [.fast(.sigmoid, 0), .arithmetic(.multiply, 0, 1)])
        // A cast from float to float is a copy into the output.
        let cast = HostProgram(FusedRegion(single: .cast(.float32), inputTypes: [.float32], outputType: .float32))
        #expect(cast.steps.map(\.step) == [.copy(0)])
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
