import Testing
@testable import TensorEngine

@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLMovementTests {
    @Test func copiesOfViewsMatch() async throws {
        try await expectParity("transpose (tiled)", .contiguous) { random([37, 53], seed: 90).transposed().contiguousForTest() }
        try await expectParity("transpose float16", .contiguous) { random([37, 53], seed: 91).cast(to: Float16.self).transposed().contiguousForTest() }
        try await expectParity("reversed and sliced", .contiguous) { random([8, 9, 10], seed: 92)[1..<7, 2..<9, 0..<10].reversed(alongAxes: 0, 2).contiguousForTest() }
        try await expectParity("broadcast", .contiguous) { random([1, 5], seed: 93).broadcast(to: [4, 5]).contiguousForTest() }
        try await expectParity("bool permuted", .contiguous) { (random([3, 4, 5], seed: 94) .> Float(0)).transposed(permutation: [2, 0, 1]).contiguousForTest() }
        try await expectParity("reshape of a transpose", .reshape) { random([6, 4], seed: 95).transposed().reshaped(to: [24]) }
    }

    @Test func padConcatGatherMatch() async throws {
        try await expectParity("pad", .pad) { random([3, 4], seed: 100).padded(forSizes: [(1, 2), (0, 3)], with: 1.5) }
        try await expectParity("pad int32", .pad) { Tensor(shape: [2, 10], scalars: specialInts).padded(forSizes: [(2, 0), (1, 1)], with: -2.7) }
        try await expectParity("pad float16 transposed", .pad) { random([3, 4], seed: 101).cast(to: Float16.self).transposed().padded(forSizes: [(1, 1), (1, 1)], with: 0.1) }
        try await expectParity("pad bool", .pad) { (random([3, 4], seed: 102) .> Float(0)).padded(forSizes: [(1, 1), (1, 1)], with: 1) }
        try await expectParity("concat axis 1", .concat) { Tensor(concatenating: [random([3, 2], seed: 103), random([5, 3], seed: 104).transposed(), random([3, 0], seed: 105)], alongAxis: 1) }
        try await expectParity("concat int32 axis 0", .concat) { Tensor(concatenating: [Tensor(shape: [2, 10], scalars: specialInts), Tensor(shape: [1, 10], scalars: Array(specialInts.prefix(10)))], alongAxis: 0) }
        let indices = Tensor(shape: [5], scalars: [3, 0, 3, 1, 2] as [Int32])
        try await expectParity("gather axis 0", .gather) { random([4, 6], seed: 106).gathering(atIndices: indices, alongAxis: 0) }
        try await expectParity("gather axis 1 of a transpose", .gather) { random([6, 4], seed: 107).transposed().gathering(atIndices: indices, alongAxis: 1) }
        try await expectParity("gather 2-D indices float16", .gather) {
            random([4, 3], seed: 108).cast(to: Float16.self).gathering(atIndices: Tensor(shape: [2, 2], scalars: [1, 0, 3, 3] as [Int32]), alongAxis: 0)
        }
    }

    @Test func gatherOutOfRangeThrowsTheTypedError() async throws {
        let error = await #expect(throws: TensorError.self) {
            try await withComputePolicy(.only(.opencl)) {
                try await Tensor(shape: [3], scalars: [1, 2, 3] as [Float]).gathering(atIndices: Tensor(shape: [3], scalars: [0, 7, -1] as [Int32]), alongAxis: 0).shapedArray(of: Float.self)
            }
        }
        #expect(error?.kind == .indexOutOfRange)
        #expect(error?.message.contains("index 7") == true)
    }
}

extension Tensor {
    func contiguousForTest() -> Tensor { Tensor.record(.contiguous, [self], at: nil) }
}
