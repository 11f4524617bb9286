import Foundation
import Testing
@testable import TensorEngine

/// Sizes, counts and ranges at the ends of `Int` and `Float`: each gives a typed error at once,
/// before any element is made, or a correct result; none traps.
@Suite("Extreme arguments")
struct ExtremeArgumentTests {
    let x = Tensor(shape: [2, 3], scalars: [1, 2, 3, 4, 5, 6] as [Float])

    @Test func reshapeWhoseOtherDimensionsOverflow() {
        #expect(x.reshaped(to: [Int.max, 3, -1]).error?.kind == .invalidReshape)
        #expect(x.reshaped(to: [Int.max, Int.max]).error?.kind == .invalidReshape)
        #expect(x.reshaped(to: [Int.min, -1]).error != nil)
        #expect(x.reshaped(to: [3, -1]).shape == [3, 2], "the ordinary case still infers")
    }

    @Test func tileWhoseResultOverflows() {
        #expect(x.tiled(multiples: [Int.max, 1]).error?.kind == .tooLarge)
        #expect(x.tiled(multiples: [Int.max / 2, Int.max / 2]).error?.kind == .tooLarge)
        #expect(x.tiled(multiples: [1 << 40, 1]).error?.kind == .tooLarge, "no overflow, but no memory either")
        #expect(x.tiled(multiples: [Int.min, 1]).error?.kind == .invalidArgument)
        #expect(x.tiled(multiples: [2, 1]).shape == [4, 3])
    }

    @Test func padWhoseSizesOverflow() {
        #expect(x.padded(forSizes: [(Int.max, 1), (0, 0)], with: 0).error?.kind == .tooLarge)
        #expect(x.padded(forSizes: [(Int.max - 1, 0), (0, 0)], with: 0).error?.kind == .tooLarge)
        #expect(x.padded(forSizes: [(0, 0), (1 << 40, 0)], with: 0).error?.kind == .tooLarge, "fits an Int, not memory")
        #expect(x.padded(forSizes: [(Int.min, 0), (0, 0)], with: 0).error?.kind == .invalidArgument)
    }

    @Test func splitWhoseSizesOverflow() {
        let parts = x.split(sizes: [Int.max, 2], alongAxis: 0)
        #expect(parts.count == 1 && parts[0].error?.kind == .invalidArgument)
        #expect(x.split(sizes: [Int.max, Int.max, 4], alongAxis: 0).first?.error?.kind == .invalidArgument)
        #expect(x.split(sizes: [1, 1], alongAxis: 0).map(\.shape) == [[1, 3], [1, 3]])
    }

    @Test func rangesSizedBeforeTheirElementsAreMade() {
        #expect(Tensor(rangeFrom: 0, to: 1e12, by: 1).error?.kind == .tooLarge)
        #expect(Tensor(rangeFrom: 0, to: Float.greatestFiniteMagnitude, by: 1e-30).error?.kind == .tooLarge)
        #expect(Tensor(rangeFrom: -.greatestFiniteMagnitude, to: .greatestFiniteMagnitude, by: 1).error?.kind == .tooLarge)
        #expect(Tensor(rangeFrom: 0, to: 1, by: .infinity).error?.kind == .invalidArgument)
        #expect(Tensor(rangeFrom: 0, to: 1, by: .nan).error?.kind == .invalidArgument)
        #expect(Tensor(rangeFrom: 0, to: 10, by: -1).shape == [0], "a stride away from the end: empty")
        // Counted in Float: 0.3 / 0.1 is 3 there (3.0000000745 in Double, which would add 0.3).
        #expect(Tensor(rangeFrom: 0, to: 0.3, by: 0.1).shape == [3])
        #expect(Tensor(linearSpaceFrom: 0, through: 1, count: Int.max / 2).error?.kind == .tooLarge)
        #expect(Tensor(linearSpaceFrom: 0, through: 1, count: Int.max).error?.kind == .tooLarge)
        #expect(Tensor(linearSpaceFrom: 0, through: 1, count: Int.min).error?.kind == .invalidArgument)
    }

    @Test func randomTensorsSizedInBytes() {
        // More elements than the machine has bytes / 4, fewer than it has bytes: refused before
        // any value is generated.
        let elements = Int(clamping: ProcessInfo.processInfo.physicalMemory) / 2
        #expect(Tensor(randomNormal: [elements], seed: 1).error?.kind == .tooLarge)
        #expect(Tensor(randomUniform: [elements], seed: 1).error?.kind == .tooLarge)
        #expect(Tensor(randomUniform: [Int.max, 2], seed: 1).error?.kind == .tooLarge)
        #expect(Tensor(randomNormal: [-1], seed: 1).error?.kind == .invalidArgument)
        #expect(Tensor(randomNormal: [2, 3], seed: 1).shape == [2, 3])
    }

    @Test func integerRangesCountedExactly() async throws {
        let up = Tensor(rangeFrom: Int32(1), to: Int32(10), by: Int32(4))
        #expect(try await up.shapedArray(of: Int32.self).scalars == [1, 5, 9])
        let down = Tensor(rangeFrom: Int32(0), to: Int32(-5), by: Int32(-2))
        #expect(try await down.shapedArray(of: Int32.self).scalars == [0, -2, -4])
        #expect(Tensor(rangeFrom: Int32(5), to: Int32(0), by: Int32(1)).shape == [0])
        #expect(Tensor(rangeFrom: Int32.min, to: Int32.max, by: Int32.max).shape == [3])
    }

    @Test func memoryLimitsThatOverflow() {
        #expect(MemoryLimit.parse("99999999999G") == nil)
        #expect(MemoryLimit.parse("\(Int.max)K") == nil)
        #expect(MemoryLimit.parse("8589934591G") == 8_589_934_591 << 30)
    }

    /// A chain of half a million recorded steps, evaluated and then let go: its nodes are freed
    /// one after another, not from inside each other's `deinit` (which would take a stack frame
    /// per node and overflow the stack). Each step adds 1 to an integer: the result is exact.
    @Test func aLongChainIsEvaluatedAndFreedWithoutRecursion() async throws {
        var chain = Tensor(shape: [1], scalars: [0] as [Int32])
        for _ in 0..<500_000 { chain = chain + 1 }
        #expect(try await chain.shapedArray(of: Int32.self).scalars == [500_000])
        chain = Tensor(shape: [1], scalars: [0] as [Int32])
    }
}
