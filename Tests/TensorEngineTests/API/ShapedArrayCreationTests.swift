import Foundation
import Testing

@testable import TensorEngine

@Suite("ShapedArray in Core ML's forms") struct ShapedArrayCreationTests {
    @Test func dataAndLentMemory() {
        let values: [Float] = [1, 2, 3, 4, 5, 6]
        let data = values.withUnsafeBytes { Data($0) }
        #expect(ShapedArray<Float>(data: data, shape: [2, 3])?.scalars == values)
        #expect(ShapedArray<Float>(data: data, shape: [4, 3]) == nil)
        // Columns of a row-major [2, 3] block, read as a [3, 2] array with strides [1, 3].
        #expect(ShapedArray<Float>(data: data, shape: [3, 2], strides: [1, 3])?.scalars == [1, 4, 2, 5, 3, 6])
        #expect(ShapedArray<Float>(data: data, shape: [2], strides: [-1]) == nil)

        let memory = UnsafeMutablePointer<Int32>.allocate(capacity: 4)
        memory.initialize(from: [7, 8, 9, 10], count: 4)
        let released = Counter()
        var lent: ShapedArray<Int32>? = ShapedArray<Int32>(
            bytesNoCopy: memory, shape: [2, 2], strides: [2, 1],
            deallocator: .custom { pointer, _ in
                released.add(1)
                pointer.deallocate()
            })
        #expect(lent?.scalars == [7, 8, 9, 10])
        lent?.withUnsafeShapedBufferPointer { buffer, _, _ in #expect(buffer.baseAddress == UnsafePointer(memory)) }
        #expect(released.value == 0)
        let copy = lent
        lent?[scalarAt: 0, 0] = 70  // copies first: the lent memory is never written
        #expect(copy?.scalars == [7, 8, 9, 10])
        #expect(memory[0] == 7)
        #expect(lent?.scalars == [70, 8, 9, 10])
        _ = consume copy
        lent = nil
        #expect(released.value == 1)
    }

    @Test func identityRandomAndConcatenation() {
        #expect(ShapedArray<Float>(identityMatrixOfSize: 3).scalars == [1, 0, 0, 0, 1, 0, 0, 0, 1])
        #expect(ShapedArray<Int32>(identityMatrixOfSize: -2).shape == [0, 0])
        let uniform = ShapedArray<Float>(randomScalarsIn: -1...1, shape: [100])
        #expect(uniform.scalars.allSatisfy { $0 >= -1 && $0 <= 1 })
        let dice = ShapedArray<Int32>(randomScalarsIn: 1...6, shape: [2, 50])
        #expect(dice.shape == [2, 50] && dice.scalars.allSatisfy { (1...6).contains($0) })
        let a = ShapedArray<Float>(scalars: [1, 2, 3, 4], shape: [2, 2])!
        let b = ShapedArray<Float>(scalars: [5, 6], shape: [2, 1])!
        #expect(ShapedArray(concatenating: [a, b], alongAxis: 1)?.scalars == [1, 2, 5, 3, 4, 6])
        #expect(ShapedArray(concatenating: [a, a], alongAxis: -2)?.shape == [4, 2])
        #expect(ShapedArray(concatenating: [a, b], alongAxis: 0) == nil)
        #expect(ShapedArray<Float>(concatenating: [], alongAxis: 0) == nil)
    }

    @Test func shapeFunctions() throws {
        let a = ShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])!
        #expect(a.reshaped(to: [3, 2])?.shape == [3, 2])
        #expect(a.reshaped(to: [4]) == nil)
        #expect(a.transposed().scalars == [1, 4, 2, 5, 3, 6])
        #expect(a.transposed(permutation: [0, 0]) == nil)
        #expect(a.expandingShape(at: 0)?.shape == [1, 2, 3])
        #expect(a.expandingShape(at: -1)?.shape == [2, 3, 1])
        #expect(a.expandingShape(at: 4) == nil)
        #expect(try #require(a.expandingShape(at: 1)).squeezingShape() == a)
        #expect(Set([a, a.transposed().transposed()]).count == 1)
        let encoded = try JSONEncoder().encode(a)
        #expect(try JSONDecoder().decode(ShapedArray<Float>.self, from: encoded) == a)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ShapedArray<Float>.self, from: Data(#"{"shape":[3],"scalars":[1]}"#.utf8))
        }
    }
}
