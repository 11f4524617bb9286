import Foundation
import Testing

@testable import TensorEngine

@Suite("MultiArray and FeatureValue") struct MultiArrayTests {
    /// The seed's MLMultiArray section with the `ML` prefix dropped.
    @Test func seedSnippetRuns() throws {
        let array = try MultiArray(shape: [1, 3, 224, 224], dataType: .float32)
        for i in 0..<array.count { array[i] = NSNumber(value: Float(i % 7) / 7) }
        let values: [Float] = [1.0, 2.0, 3.0, 4.0, 5.0]
        let mlArray = try MultiArray(values)
        let element = array[[0, 0, 112, 112] as [NSNumber]].floatValue
        #expect(element == Float((112 * 224 + 112) % 7) / 7)
        func toFloatArray(_ multiArray: MultiArray) -> [Float] {
            let pointer = multiArray.dataPointer.assumingMemoryBound(to: Float.self)
            return Array(UnsafeBufferPointer(start: pointer, count: multiArray.count))
        }
        #expect(toFloatArray(mlArray) == values)
        let featureValue = FeatureValue(multiArray: array)
        #expect(featureValue.type == .multiArray)
        #expect(featureValue.multiArrayValue === array)
        let expectedShape: [NSNumber] = [1, 3, 224, 224]
        #expect(array.shape == expectedShape)
        let expectedStrides: [NSNumber] = [150_528, 50_176, 224, 1]
        #expect(array.strides == expectedStrides)
        #expect(array.count == 3 * 224 * 224)
    }

    @Test func stridedArraysIndexByTheirStrides() throws {
        // Rows padded to 4 elements: element (i, j) lies at 4i + j.
        let array = try MultiArray(shape: [2, 3], dataType: .int32, strides: [4, 1])
        for i in 0..<6 { array[i] = NSNumber(value: i * 10) }
        array.withUnsafeBufferPointer(ofType: Int32.self) { buffer in
            #expect(Array(buffer) == [0, 10, 20, 0, 30, 40, 50])
        }
        #expect(array[[1, 2]].intValue == 50)
        // A strided array becomes a contiguous tensor (a gather).
        let tensor = Tensor(array)
        #expect(tensor.shape == [2, 3])
        #expect(tensor.dtype == .int32)
        #expect(try MultiArray(tensor)[5].intValue == 50)
    }

    @Test func conversionsShareMemoryAndCopyBeforeWriting() async throws {
        let array = try MultiArray([1, 2, 3, 4] as [Float])
        let tensor = Tensor(array)
        let before = array.readStorage.pointer
        #expect(try await tensor.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        array[0] = 100  // the tensor keeps the values it was made with
        #expect(array.readStorage.pointer != before)
        #expect(try await tensor.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        #expect(array[0].floatValue == 100)

        // A tensor's result wrapped without a copy, and copied on the first write.
        let result = Tensor([1, 2, 3] as [Float]) * 2
        let wrapped = try MultiArray(result)
        let shared = try await result.shapedArray(of: Float.self)
        let resultStart = shared.withUnsafeShapedBufferPointer { buffer, _, _ in UnsafeRawPointer(buffer.baseAddress) }
        #expect(UnsafeRawPointer(wrapped.readStorage.pointer) == resultStart)
        wrapped.withUnsafeMutableBytes { bytes, strides in
            bytes.storeBytes(of: Float(-1), as: Float.self)
            #expect(strides == [1])
        }
        #expect(try await result.shapedArray(of: Float.self).scalars == [2, 4, 6])
        #expect(wrapped[0].floatValue == -1)

        // ShapedArray in both directions.
        let shapedArray = ShapedArray<Float>(scalars: [1, 2, 3, 4, 5, 6], shape: [2, 3])!
        let fromShaped = MultiArray(shapedArray)
        #expect(fromShaped.shape == [2, 3])
        #expect(ShapedArray<Float>(fromShaped) == shapedArray)
        let doubles = try MultiArray([0.5, 1.5] as [Double])
        #expect(ShapedArray<Float>(doubles).scalars == [0.5, 1.5])
        #expect(try await Tensor(doubles).shapedArray(of: Double.self).scalars == [0.5, 1.5])
        #expect(ShapedArray<Int32>(try MultiArray([7, -3] as [Int32])).scalars == [7, -3])
    }

    @Test func buffersOfAnotherTypeAreConvertedCopies() throws {
        let array = try MultiArray([1.5, 2.5] as [Float])
        let doubled: [Double] = array.withUnsafeBufferPointer(ofType: Double.self) { Array($0) }
        #expect(doubled == [1.5, 2.5])
        array.withUnsafeMutableBufferPointer(ofType: Double.self) { buffer, _ in buffer[1] = 8 }
        #expect(array[1].floatValue == 8)
    }

    @Test func badShapesAreTypedErrors() {
        #expect(throws: ModelError.self) { try MultiArray(shape: [-1, 3], dataType: .float32) }
        #expect(throws: ModelError.self) { try MultiArray(shape: [NSNumber(value: Int.max), 2], dataType: .double) }
        #expect(throws: ModelError.self) { try MultiArray(shape: [2, 3], dataType: .float32, strides: [2, 1]) }
        #expect(throws: ModelError.self) { try MultiArray(shape: [2, 3], dataType: .float32, strides: [1]) }
        let array = try? MultiArray(shape: [2], dataType: .float32)
        #expect(array?[5].doubleValue.isNaN == true)
        #expect(array?[[0, 9]].doubleValue.isNaN == true)
        array?[7] = 3  // out of range: nothing is written
        #expect(array?[0].floatValue == 0)
        // Integers truncate toward zero and saturate.
        #expect(Int32(multiArrayDouble: -2.7) == -2)
        #expect(Int32(multiArrayDouble: 1e20) == .max && Int32(multiArrayDouble: -1e20) == .min)
        #expect(Int32(multiArrayDouble: .nan) == 0)
    }

    @Test func featureValuesGiveCoreMLsDefaults() throws {
        #expect(FeatureValue(int64: 7).int64Value == 7)
        #expect(FeatureValue(int64: 7).doubleValue == 7)
        #expect(FeatureValue(double: 0.5).doubleValue == 0.5)
        #expect(FeatureValue(string: "cat").stringValue == "cat")
        #expect(FeatureValue(double: 0.5).stringValue == "")
        #expect(FeatureValue(string: "cat").multiArrayValue == nil)
        #expect(FeatureValue(undefined: .double).isUndefined)
        #expect(FeatureValue(undefined: .double).type == .double)
        let probabilities = try FeatureValue(dictionary: ["cat": 0.75, "dog": 0.25])
        #expect(probabilities.type == .dictionary)
        #expect(probabilities.dictionaryValue["cat"]?.doubleValue == 0.75)
        let byClass = try FeatureValue(dictionary: [1: 0.5, 2: 0.5] as [AnyHashable: NSNumber])
        #expect(byClass.dictionaryValue[Int64(2)]?.doubleValue == 0.5)
        #expect(throws: ModelError.self) {
            try FeatureValue(dictionary: ["a": 1, 2: 3] as [AnyHashable: NSNumber])
        }
        let sequence = FeatureValue(sequence: FeatureSequence(strings: ["a", "b"]))
        #expect(sequence.sequenceValue?.stringValues == ["a", "b"])
        let shaped = FeatureValue(shapedArray: ShapedArray<Float>(scalars: [1, 2], shape: [2])!)
        #expect(shaped.shapedArrayValue(of: Float.self)?.scalars == [1, 2])
        #expect(shaped.shapedArrayValue(of: Int32.self) == nil)
    }

    @Test func dictionaryProvidersTakeCoreMLsValueTypes() throws {
        let provider = try DictionaryFeatureProvider(dictionary: [
            "image": FeatureValue(multiArray: try MultiArray(shape: [1, 3], dataType: .float32)),
            "confidence_threshold": 0.5, "count": 3, "label": "cat",
            "array": try MultiArray([1] as [Int32]),
        ])
        #expect(provider.featureNames == ["image", "confidence_threshold", "count", "label", "array"])
        #expect(provider["confidence_threshold"]?.doubleValue == 0.5)
        #expect(provider["count"]?.int64Value == 3)
        #expect(provider["label"]?.stringValue == "cat")
        #expect(provider["array"]?.type == .multiArray)
        #expect(throws: ModelError.self) { try DictionaryFeatureProvider(dictionary: ["bad": Date()]) }
        let batch = try ArrayBatchProvider(dictionary: ["x": [1.0, 2.0], "label": ["a", "b"]])
        #expect(batch.count == 2)
        #expect(batch.features(at: 1).featureValue(for: "label")?.stringValue == "b")
        #expect(batch.features(at: 5).featureNames.isEmpty)
        #expect(throws: ModelError.self) { try ArrayBatchProvider(dictionary: ["x": [1.0], "y": [1.0, 2.0]]) }
    }
}
