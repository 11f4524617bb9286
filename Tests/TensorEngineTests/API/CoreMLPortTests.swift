import Foundation
import TensorEngine
import Testing

/// Core ML code as users write it, held verbatim but for `MLTensor` → `Tensor` (and `try` before
/// `await` on materialization, the documented difference). Expected values are hand-computed.
@Suite("Core ML ports")
struct CoreMLPortTests {
    /// The seed's "MLTensor Advanced Operations" section (the `MLMultiArray` lines belong to the
    /// model layer and are left out here).
    @Test func seedAdvancedOperations() async throws {
        // Creation patterns
        let tensor1D = Tensor([1.0, 2.0, 3.0, 4.0])
        let zeros = Tensor(zeros: [3, 224, 224], scalarType: Float.self)
        let ones = Tensor(ones: [2, 2], scalarType: Float.self)

        // Reshaping
        let reshaped = tensor1D.reshaped(to: [2, 2])
        let expanded = tensor1D.expandingShape(at: 0)  // [1, 4]

        // Arithmetic and reduction
        let sum = tensor1D + ones.reshaped(to: [4])
        let mean = tensor1D.mean()
        let argmax = tensor1D.argmax()

        // Activation functions
        let softmaxed = tensor1D.softmax()

        let shaped = try await tensor1D.shapedArray(of: Float.self)  // MLShapedArray

        // Concatenation
        let a = Tensor([1.0, 2.0])
        let b = Tensor([3.0, 4.0])
        let concatenated = Tensor(concatenating: [a, b], alongAxis: 0)

        // Normalization pattern (e.g., ImageNet preprocessing)
        func normalize(_ tensor: Tensor, mean: [Float], std: [Float]) -> Tensor {
            let meanTensor = Tensor(mean)
            let stdTensor = Tensor(std)
            return (tensor - meanTensor) / stdTensor
        }

        #expect(zeros.shape == [3, 224, 224])
        #expect(reshaped.shape == [2, 2] && expanded.shape == [1, 4])
        #expect(try await sum.shapedArray(of: Float.self).scalars == [2, 3, 4, 5])
        #expect(try await mean.shapedArray(of: Float.self).scalar == 2.5)
        #expect(try await argmax.shapedArray(of: Int32.self).scalar == 3)
        let e = [1, 2, 3, 4].map { Foundation.exp(Double($0)) }
        let expected = e.map { Float($0 / e.reduce(0, +)) }
        let softmax = try await softmaxed.shapedArray(of: Float.self).scalars
        #expect(zip(softmax, expected).allSatisfy { Swift.abs($0 - $1) < 1e-6 })
        #expect(shaped.scalars == [1, 2, 3, 4] && shaped.shape == [4])
        #expect(try await concatenated.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        let normalized = normalize(Tensor([[0.5, 1.0]].flatMap { $0 }), mean: [0.5, 0.5], std: [0.25, 0.5])
        #expect(try await normalized.shapedArray(of: Float.self).scalars == [0, 1])
    }

    @Test func plainLiteralInitializers() async throws {
        #expect(Tensor([1.0, 2.0]).dtype == .float32)
        #expect(Tensor([1, 2, 3]).dtype == .float32)
        let matrix = Tensor(shape: [2, 3], scalars: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        #expect(matrix.shape == [2, 3] && matrix.dtype == .float32)
        let halves = Tensor(repeating: 0.5, shape: [2, 4])
        #expect(try await halves.shapedArray(of: Float.self).scalars == Array(repeating: 0.5, count: 8))
        let integers = Tensor([1, 2, 3], scalarType: Int32.self)
        #expect(try await integers.shapedArray(of: Int32.self).scalars == [1, 2, 3])
        let scalar = Tensor(7, scalarType: Float.self)
        #expect(scalar.shape == [])
        #expect(try await scalar.shapedArray(of: Float.self).scalar == 7)
        let flags = Tensor([true, false])
        #expect(flags.dtype == .bool)
        let typedRepeat = Tensor(repeating: Int32(4), shape: [2], scalarType: Int32.self)
        #expect(try await typedRepeat.shapedArray(of: Int32.self).scalars == [4, 4])
        let range = Tensor(rangeFrom: Int32(0), to: 6, by: 2, scalarType: Int32.self)
        #expect(try await range.shapedArray(of: Int32.self).scalars == [0, 2, 4])
        let halfRange = Tensor(rangeFrom: Float16(0), to: 1, by: 0.25, scalarType: Float16.self)
        #expect(try await halfRange.shapedArray(of: Float16.self).scalars == [0, 0.25, 0.5, 0.75])
        let space = Tensor(linearSpaceFrom: Float16(0), through: 1, count: 3, scalarType: Float16.self)
        #expect(try await space.shapedArray(of: Float16.self).scalars == [0, 0.5, 1])
        let stacked = Tensor([Tensor([1.0, 2.0]), Tensor([3.0, 4.0])], alongAxis: 1)
        #expect(try await stacked.shapedArray(of: Float.self) == ShapedArray(scalars: [1, 3, 2, 4], shape: [2, 2])!)
    }

    @Test func memoryInitializers() async throws {
        let bytes = [Float(1), 2, 3, 4].withUnsafeBytes { Data($0) }
        let fromData = Tensor(shape: [2, 2], data: bytes, scalarType: Float.self)
        #expect(try await fromData.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        #expect(Tensor(shape: [3], data: bytes, scalarType: Float.self).error?.kind == .shapeMismatch)

        let written = Tensor(unsafeUninitializedShape: [3], scalarType: Int32.self) { buffer in
            let values = buffer.bindMemory(to: Int32.self)
            for i in values.indices { values[i] = Int32(i * 10) }
        }
        #expect(try await written.shapedArray(of: Int32.self).scalars == [0, 10, 20])
        #expect(Tensor(unsafeUninitializedShape: [-1], scalarType: Float.self) { _ in }.error?.kind == .invalidArgument)

        let released = Flag()
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)
        memory.bindMemory(to: Float.self, capacity: 4).update(from: [5, 6, 7, 8], count: 4)
        do {
            let wrapped = Tensor(
                bytesNoCopy: memory, shape: [4], scalarType: Float.self,
                deallocator: .custom { pointer, _ in
                    pointer.deallocate()
                    released.set()
                })
            #expect(try await (wrapped * 2).shapedArray(of: Float.self).scalars == [10, 12, 14, 16])
            #expect(!released.value, "the memory stays while the tensor lives")
        }
        #expect(released.value, "the deallocator runs once the tensor is gone")
    }

    @Test func newMathOps() async throws {
        let x = Tensor([0.5, -0.25])
        func values(_ t: Tensor) async throws -> [Float] { try await t.shapedArray(of: Float.self).scalars }
        let cases: [(Tensor, (Float) -> Float)] = [
            (x.tan(), Foundation.tan), (x.asin(), Foundation.asin), (x.acos(), Foundation.acos),
            (x.atan(), Foundation.atan), (x.sinh(), Foundation.sinh), (x.cosh(), Foundation.cosh),
            (x.atanh(), Foundation.atanh), (x.exp2(), Foundation.exp2), ((x + 2).acosh(), { Foundation.acosh($0 + 2) }),
        ]
        for (tensor, reference) in cases {
            let actual = try await values(tensor)
            let expected = [Float(0.5), -0.25].map(reference)
            #expect(zip(actual, expected).allSatisfy { Swift.abs($0 - $1) <= 1e-6 * Swift.max(1, Swift.abs($1)) })
        }
        #expect(try await values(Tensor([7.5, -7.5]) % 2) == [1.5, -1.5])
        #expect(try await values(x.pow(2)) == [0.25, 0.0625])
        #expect(try await values(x.clamped(to: 0...)) == [0.5, 0])
        #expect(try await values(x.clamped(to: ...0)) == [0, -0.25])
        #expect(try await values(pointwiseMin(x, Tensor([0.0, 0.0]))) == [0, -0.25])
        #expect(try await values(pointwiseMax(x, Tensor([0.0, 0.0]))) == [0.5, 0])
        let integers = Tensor([7, -7, 5], scalarType: Int32.self)
        #expect(try await (integers % Int32(3)).shapedArray(of: Int32.self).scalars == [1, -1, 2])
        #expect(
            try await (integers % Tensor([0, 2, -3], scalarType: Int32.self)).shapedArray(of: Int32.self).scalars == [
                0, -1, 2,
            ])
        #expect(try await (integers + Int32(1)).shapedArray(of: Int32.self).scalars == [8, -6, 6])
        #expect(try await (integers .> Int32(0)).shapedArray(of: Bool.self).scalars == [true, false, true])
        var y = x
        y %= Tensor([0.3, 0.3])
        #expect(try await values(y).enumerated().allSatisfy { Swift.abs($1 - [0.2, -0.25][$0]) < 1e-6 })
        let p = Tensor([true, true, false, false])
        let q = Tensor([true, false, true, false])
        #expect(try await (p .^ q).shapedArray(of: Bool.self).scalars == [false, true, true, false])
        #expect(x.cast(like: integers).dtype == .int32)
    }

    @Test func logicalReductionsScansAndSorting() async throws {
        let m = Tensor(shape: [2, 3], scalars: [true, true, true, false, true, false])
        #expect(try await m.all().shapedArray(of: Bool.self).scalar == false)
        #expect(try await m.any().shapedArray(of: Bool.self).scalar == true)
        #expect(try await m.all(alongAxes: 1).shapedArray(of: Bool.self).scalars == [true, false])
        #expect(try await m.any(alongAxes: [0], keepRank: true).shapedArray(of: Bool.self).shape == [1, 3])
        let empty = Tensor(shape: [0], scalars: [] as [Bool])
        #expect(try await empty.all().shapedArray(of: Bool.self).scalar == true)
        #expect(try await empty.any().shapedArray(of: Bool.self).scalar == false)
        #expect(Tensor([1.0]).all().error?.kind == .scalarTypeMismatch)

        let x = Tensor(shape: [2, 3], scalars: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        #expect(
            try await x.cumulativeProduct(alongAxis: 1).shapedArray(of: Float.self).scalars == [1, 2, 6, 4, 20, 120])
        #expect(
            try await x.cumulativeProduct(alongAxis: 0).shapedArray(of: Float.self).scalars == [1, 2, 3, 4, 10, 18])
        #expect(try await x.sum(alongAxes: [0, 1]).shapedArray(of: Float.self).scalar == 21)

        // Apple's example (its page spells the call `argSort()`; the method is `argsort`).
        let x3 = Tensor([1.0, 3.0, 2.0])
        let y3 = x3.argsort()
        #expect(try await y3.shapedArray(of: Int32.self).scalars == [0, 2, 1])
        let unsorted = Tensor([3.0, 1.0, 2.0, 1.0])
        #expect(try await unsorted.argsort().shapedArray(of: Int32.self).scalars == [1, 3, 2, 0])
        #expect(try await unsorted.argsort(descendingOrder: true).shapedArray(of: Int32.self).scalars == [0, 2, 1, 3])
        let columns = Tensor(shape: [3, 2], scalars: [3, 0, 1, 2, 2, 1] as [Int32])
        #expect(try await columns.argsort(alongAxis: 0).shapedArray(of: Int32.self).scalars == [1, 0, 2, 2, 0, 1])
        let extremes = Tensor([Int32.max, Int32.min, 0], scalarType: Int32.self)
        #expect(try await extremes.argsort().shapedArray(of: Int32.self).scalars == [1, 2, 0])
    }

    @Test func shapeForms() async throws {
        let x = Tensor(shape: [2, 3], scalars: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        let rows = x.unstacked(alongAxis: 0)
        #expect(rows.count == 2 && rows[1].shape == [3])
        #expect(try await rows[1].shapedArray(of: Float.self).scalars == [4, 5, 6])
        let columns = x.unstacked(alongAxis: 1)
        #expect(try await columns[2].shapedArray(of: Float.self).scalars == [3, 6])
        #expect(x.unstacked(alongAxis: 2).first?.error?.kind == .invalidAxis)
        let joined = rows[0].concatenated(with: rows[1])
        #expect(try await joined.shapedArray(of: Float.self).scalars == [1, 2, 3, 4, 5, 6])
        #expect(x.expandingShape(at: 0).squeezingShape(at: [0]).shape == [2, 3])
    }

    @Test func shapedArrayInCoreMLForms() async throws {
        var array = ShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])!
        #expect(array[scalarAt: 1, 2] == 6)
        #expect(array[1].scalars == [4, 5, 6] && array[1].shape == [3])
        #expect(array[1, 2].isScalar && array[1, 2].scalar == 6)
        #expect(array[0..<1].shape == [1, 3])
        let copy = array
        array[scalarAt: 0, 0] = 10
        #expect(array.scalars.first == 10 && copy.scalars.first == 1, "copy-on-write")
        array.scalars = [6, 5, 4, 3, 2, 1]
        #expect(array[scalarAt: [0, 0]] == 6)
        let total = array.withUnsafeShapedBufferPointer { buffer, shape, strides in
            #expect(shape == [2, 3] && strides == [3, 1])
            return buffer.reduce(0, +)
        }
        #expect(total == 21)
        array.withUnsafeMutableShapedBufferPointer { buffer, _, _ in buffer[5] = 100 }
        #expect(array[scalarAt: 1, 2] == 100)
        array.fill(with: 0)
        #expect(array.scalars == Array(repeating: 0, count: 6))

        // A tensor's result is shared, not copied; writing to the array leaves the tensor's
        // result as it was.
        let tensor = Tensor([1.0, 2.0, 3.0]) * 2
        var result = try await tensor.shapedArray(of: Float.self)
        result[scalarAt: 0] = -1
        #expect(result.scalars == [-1, 4, 6])
        #expect(try await tensor.shapedArray(of: Float.self).scalars == [2, 4, 6])
        // A tensor made from an array keeps the values it was made with.
        var source = ShapedArray<Float>(scalars: [1, 2], shape: [2])!
        let made = Tensor(source)
        source[scalarAt: 0] = 9
        #expect(try await made.shapedArray(of: Float.self).scalars == [1, 2])
    }

    @Test func scatterAndNDimensionalGather() async throws {
        // Apple's example for replacing(atIndices:with:alongAxis:).
        let x = Tensor(
            shape: [2, 3],
            scalars: [
                10, 30, 20,
                60, 40, 50,
            ], scalarType: Float.self)
        let i = Tensor(
            shape: [2, 1],
            scalars: [
                1,
                0,
            ], scalarType: Int32.self)
        let y = x.replacing(with: 99, atIndices: i, alongAxis: 1)
        #expect(try await y.shapedArray(of: Float.self).scalars == [10, 99, 20, 99, 40, 50])
        let rows = x.replacing(
            with: Tensor(shape: [1, 3], scalars: [1.0, 2.0, 3.0]),
            atIndices: Tensor(shape: [1, 3], scalars: [1, 0, 1], scalarType: Int32.self), alongAxis: 0)
        #expect(try await rows.shapedArray(of: Float.self).scalars == [10, 2, 20, 1, 40, 3])
        let bad = x.replacing(
            atIndices: Tensor(shape: [2, 1], scalars: [3, 0], scalarType: Int32.self), with: 1, alongAxis: 1)
        // openblas registers no scatter kernel (the planner gives scatters to naive or OpenCL).
        for backend in BackendStatus.all where backend.isAvailable && backend.id.name != "openblas" {
            // Every backend names the bad index (3 along axis 1 of size 3).
            do throws(TensorError) {
                try await Tensor.evaluate([bad], policy: .only(backend.id))
                Issue.record("\(backend.id) ran a scatter with a bad index")
            } catch {
                #expect(error.kind == .indexOutOfRange && error.message.contains("index 3"), "\(backend.id)")
            }
        }
        #expect(
            x.replacing(atIndices: Tensor([1, 0], scalarType: Int32.self), with: 1, alongAxis: 1).error?.kind
                == .shapeMismatch)

        let m = Tensor(shape: [2, 2], scalars: [1.0, 2.0, 3.0, 4.0])
        let picked = m.gathering(atIndices: Tensor(shape: [2, 2], scalars: [0, 1, 1, 0], scalarType: Int32.self))
        #expect(try await picked.shapedArray(of: Float.self).scalars == [2, 3])
        let rowsPicked = m.gathering(atIndices: Tensor(shape: [3, 1], scalars: [1, 0, 1], scalarType: Int32.self))
        #expect(try await rowsPicked.shapedArray(of: Float.self).scalars == [3, 4, 1, 2, 3, 4])
        let outside = m.gathering(atIndices: Tensor(shape: [1, 2], scalars: [0, 2], scalarType: Int32.self))
        await #expect(throws: TensorError.self) { _ = try await outside.shapedArray(of: Float.self) }
    }

    @Test func paddingModesResizeAndBands() async throws {
        let x = Tensor([1.0, 2.0, 3.0])
        func values(_ t: Tensor) async throws -> [Float] { try await t.shapedArray(of: Float.self).scalars }
        #expect(try await values(x.padded(forSizes: [(2, 1)], mode: .reflection)) == [3, 2, 1, 2, 3, 2])
        #expect(try await values(x.padded(forSizes: [(2, 3)], mode: .symmetric)) == [2, 1, 1, 2, 3, 3, 2, 1])
        #expect(try await values(x.padded(forSizes: [(1, 0)], mode: .constant(7))) == [7, 1, 2, 3])
        #expect(x.padded(forSizes: [(3, 0)], mode: .reflection).error?.kind == .invalidArgument)
        let grid = Tensor(shape: [2, 2], scalars: [1.0, 2.0, 3.0, 4.0])
        let both = grid.padded(forSizes: [(1, 0), (0, 1)], mode: .reflection)
        #expect(try await values(both) == [3, 4, 3, 1, 2, 1, 3, 4, 3])

        let image = Tensor(shape: [1, 1, 2, 2], scalars: [1.0, 2.0, 3.0, 4.0])
        let nearest = image.resized(to: [4, 4])
        #expect(try await values(nearest) == [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4])
        // PyTorch's F.interpolate(mode="bilinear", align_corners=True) of [[1, 2], [3, 4]] to 3×3.
        let aligned = image.resized(to: [3, 3], method: .bilinear(alignCorners: true))
        #expect(try await values(aligned) == [1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4])
        // align_corners=False to 4 along a row [1, 2]: positions -0.25→0, 0.25, 0.75, 1.25→1.
        let row = Tensor(shape: [1, 2], scalars: [1.0, 2.0]).resized(to: [4], method: .bilinear())
        #expect(try await values(row) == [1, 1.25, 1.75, 2])
        #expect(
            Tensor([1, 2], scalarType: Int32.self).resized(to: [3], method: .bilinear()).error?.kind
                == .scalarTypeMismatch)

        let ones = Tensor(ones: [3, 3])
        #expect(try await values(ones.bandPart(lowerBandCount: -1, upperBandCount: 0)) == [1, 0, 0, 1, 1, 0, 1, 1, 1])
        #expect(try await values(ones.bandPart(lowerBandCount: 0, upperBandCount: 1)) == [1, 1, 0, 0, 1, 1, 0, 0, 1])
        #expect(Tensor([1.0]).bandPart(lowerBandCount: 0, upperBandCount: 0).error?.kind == .invalidArgument)
        // The band rule Apple's page states, on the example TensorFlow's band_part documents.
        let input = Tensor(shape: [4, 4], scalars: [0, 1, 2, 3, -1, 0, 1, 2, -2, -1, 0, 1, -3, -2, -1, 0] as [Float])
        #expect(try await values(input.bandPart(lowerBandCount: 1, upperBandCount: -1))
            == [0, 1, 2, 3, -1, 0, 1, 2, 0, -1, 0, 1, 0, 0, -1, 0])
        #expect(try await values(input.bandPart(lowerBandCount: 2, upperBandCount: 1))
            == [0, 1, 0, 0, -1, 0, 1, 0, -2, -1, 0, 1, 0, -2, -1, 0])
    }

    @Test func subscriptForms() async throws {
        let x = Tensor(shape: [2, 3, 4], scalars: (0..<24).map(Float.init))
        func values(_ t: Tensor) async throws -> [Float] { try await t.shapedArray(of: Float.self).scalars }
        #expect(x[.newAxis, 0].shape == [1, 3, 4])
        #expect(x[0, .newAxis, 1].shape == [1, 4])
        #expect(x[..., .newAxis].shape == [2, 3, 4, 1])
        #expect(try await values(x[0, 0, .range(0..<4, stride: 2)]) == [0, 2])
        #expect(try await values(x[0, 0, .range(..., stride: -1)]) == [3, 2, 1, 0])
        #expect(try await values(x[1, .range(0..<3, stride: -2), 0]) == [20, 12])
        #expect(try await values(x[0, 1, ..., 3]) == [7], "an ellipsis standing for no axis")
        #expect(x[0, 1, 2, ..., 3].error?.kind == .indexOutOfRange, "four indices for rank 3")
        #expect(try await values(x[.fillAll, 2, .index(-1)]) == [11, 23])
        #expect(x[.newAxis][.squeezeAxis].shape == [2, 3, 4])
        #expect(x[.squeezeAxis].error?.kind == .indexOutOfRange)
        #expect(x[0, 0, .range(0..<4, stride: 0)].error?.kind == .indexOutOfRange)
        #expect(try await values(x[0, .range(1...2, stride: 1), 0]) == [4, 8])
    }

    @Test func computePolicyForms() async throws {
        let x = Tensor([1.0, 2.0])
        let doubled = try await withTensorComputePolicy(.cpuOnly) { try await (x * 2).shapedArray(of: Float.self) }
        #expect(doubled.scalars == [2, 4])
        let scoped = withTensorComputePolicy(ComputePolicy(.cpuAndGPU)) { x.shape }
        #expect(scoped == [2])
        #expect(ComputePolicy(.cpuOnly) == .cpuOnly && ComputePolicy(.cpuAndNeuralEngine) == .cpuOnly)
        #expect(ComputePolicy(.all) == .all && ComputePolicy(.cpuAndGPU) == .cpuAndGPU)
    }
}

/// A flag set from a deallocator.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var isSet = false
    var value: Bool { lock.withLock { isSet } }
    func set() { lock.withLock { isSet = true } }
}
