import Foundation
import Testing

@testable import TensorEngine

/// The seed's NLP provider with the `ML` prefixes dropped (its `try!` kept out: a failed
/// allocation gives no feature): lazy multi-arrays, made once, on the first request.
final class NLPFeatureProvider: FeatureProvider {
    private let tokenIDs: [Int32]
    private let attentionMask: [Int32]
    private let sequenceLength: Int

    private var cachedInputIDs: MultiArray?
    private var cachedMask: MultiArray?
    private(set) var arraysMade = 0

    init(tokens: [Int32], mask: [Int32]) {
        assert(tokens.count == mask.count)
        self.tokenIDs = tokens
        self.attentionMask = mask
        self.sequenceLength = tokens.count
    }

    var featureNames: Set<String> {
        return ["input_ids", "attention_mask"]
    }

    func featureValue(for featureName: String) -> FeatureValue? {
        switch featureName {
        case "input_ids":
            return inputIDsArray.map { FeatureValue(multiArray: $0) }
        case "attention_mask":
            return maskArray.map { FeatureValue(multiArray: $0) }
        default:
            return nil
        }
    }

    private var inputIDsArray: MultiArray? {
        if let cached = cachedInputIDs { return cached }
        guard let array = try? MultiArray(shape: [1, sequenceLength as NSNumber], dataType: .int32) else { return nil }
        tokenIDs.withUnsafeBufferPointer { buffer in
            let dst = array.dataPointer.assumingMemoryBound(to: Int32.self)
            if let base = buffer.baseAddress { dst.initialize(from: base, count: buffer.count) }
        }
        cachedInputIDs = array
        arraysMade += 1
        return array
    }

    private var maskArray: MultiArray? {
        if let cached = cachedMask { return cached }
        guard let array = try? MultiArray(shape: [1, sequenceLength as NSNumber], dataType: .int32) else { return nil }
        attentionMask.withUnsafeBufferPointer { buffer in
            let dst = array.dataPointer.assumingMemoryBound(to: Int32.self)
            if let base = buffer.baseAddress { dst.initialize(from: base, count: buffer.count) }
        }
        cachedMask = array
        arraysMade += 1
        return array
    }
}

/// MiniLM-L3's batch-of-3 fixture (padded to 12 tokens) as three unpadded sentences.
struct MiniLMSentences {
    let ids: [[Int32]]
    let pooled: ShapedArray<Float>  // [3, 384]: output "461"
    let hidden: ShapedArray<Float>  // [3, 12, 384]: output "onnx::Shape_422"

    init() throws {
        let ids = try ONNXFixture.array("minilm_l3_b3_input_ids").evaluatedInt32()
        let mask = try ONNXFixture.array("minilm_l3_b3_attention_mask").evaluatedInt32()
        self.ids = (0..<3).map { row in
            let length = Int(mask[row].scalars.reduce(0, +))
            return Array(ids[row].scalars.prefix(length))
        }
        pooled = try ONNXFixture.array("minilm_l3_b3_461").evaluatedArray()
        hidden = try ONNXFixture.array("minilm_l3_b3_onnx__Shape_422").evaluatedArray()
    }
}

@Suite("Model batches and lazy providers") struct ModelBatchTests {
    @Test func seedNLPProviderIsReadLazilyOnceAndWithoutCopying() async throws {
        let model = try await Model.load(contentsOf: try ONNXFixture.minilmL3())
        let sentences = try MiniLMSentences()
        let tokens = sentences.ids[1]
        let input = NLPFeatureProvider(tokens: tokens, mask: Array(repeating: 1, count: tokens.count))
        #expect(input.arraysMade == 0)
        let output = try await model.prediction(from: input)
        #expect(input.arraysMade == 2)
        _ = try await model.prediction(from: input)
        #expect(input.arraysMade == 2)
        let pooled = try #require(output.featureValue(for: "461")?.shapedArrayValue(of: Float.self))
        #expect(pooled.shape == [1, 384])
        let difference = zip(pooled.scalars, sentences.pooled[1].scalars).map { Swift.abs($0 - $1) }.max() ?? 1
        #expect(difference <= 1e-4, "pooled: \(difference)")
        // The input tensors wrap the provider's arrays: no copy of the token buffers.
        let ids = try #require(input.featureValue(for: "input_ids")?.multiArrayValue)
        let tensor = Tensor(ids)
        let start = try await tensor.shapedArray(of: Int32.self).withUnsafeShapedBufferPointer { buffer, _, _ in
            UnsafeRawPointer(buffer.baseAddress)
        }
        #expect(start == UnsafeRawPointer(ids.readStorage.pointer))
    }

    /// Sentences of 12, 8 and 4 tokens stacked into one evaluation, padded to 12 under the mask,
    /// and split back: each output matches onnxruntime's for that sentence, trimmed to its length.
    @Test func batchPredictionsStackPadAndSplit() async throws {
        let model = try Model(contentsOf: try ONNXFixture.minilmL3())
        let sentences = try MiniLMSentences()
        let batch = ArrayBatchProvider(
            array: sentences.ids.map { NLPFeatureProvider(tokens: $0, mask: Array(repeating: 1, count: $0.count)) })
        for policy in ONNXFixture.policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let before = try #require(model.implementation as? ONNXModel).evaluationCount
            let outputs = try await model.predictions(from: batch, options: options)
            #expect(outputs.count == 3)
            #expect(try #require(model.implementation as? ONNXModel).evaluationCount == before + 1)
            for row in 0..<3 {
                let features = outputs.features(at: row)
                let pooled = try #require(features.featureValue(for: "461")?.shapedArrayValue(of: Float.self))
                let hidden = try #require(
                    features.featureValue(for: "onnx::Shape_422")?.shapedArrayValue(of: Float.self))
                let length = sentences.ids[row].count
                #expect(pooled.shape == [1, 384])
                #expect(hidden.shape == [1, length, 384])
                let pooledDifference = zip(pooled.scalars, sentences.pooled[row].scalars)
                    .map { Swift.abs($0 - $1) }.max() ?? 1
                let reference = sentences.hidden[row].scalars.prefix(length * 384)
                let hiddenDifference = zip(hidden.scalars, reference).map { Swift.abs($0 - $1) }.max() ?? 1
                #expect(pooledDifference <= 1e-4 && hiddenDifference <= 1e-4, "\(policy) row \(row)")
            }
        }
    }
}

extension Tensor {
    /// The tensor's `Int32` values, evaluated on the calling thread (test support).
    /// The values as `Int32` (the fixtures' token ids are `int64`; the seed's provider holds `Int32`).
    func evaluatedInt32() throws -> ShapedArray<Int32> {
        guard let array = FeatureValue.tensor(cast(to: Int32.self)).shapedArrayValue(of: Int32.self) else {
            throw ONNXFixture.Missing(description: "the tensor did not evaluate to Int32 values")
        }
        return array
    }
}
