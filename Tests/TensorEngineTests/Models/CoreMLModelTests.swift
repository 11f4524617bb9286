import Foundation
import Testing

@testable import TensorEngine

/// The Core ML fixtures: ML Programs converted by coremltools from torch modules
/// (`scripts/make_coreml_fixtures.py`), with torch's outputs as the references.
enum CoreMLFixture {
    static func url(_ name: String) throws -> URL {
        guard let folder = Bundle.module.url(forResource: "coreml", withExtension: nil, subdirectory: "Fixtures") else {
            throw ONNXFixture.Missing(description: "Fixtures/coreml is not in the test bundle")
        }
        return folder.appendingPathComponent(name)
    }

    static func array(_ name: String) throws -> Tensor { try Tensor(npyFileConverting: try url(name + ".npy")) }

    /// The largest absolute difference between a result and a reference.
    static func maximumDifference(_ result: Tensor, _ reference: Tensor) async throws -> Float {
        #expect(result.shape == reference.shape, "shape \(result.shape) against \(reference.shape)")
        let values = try await result.cast(to: Float.self).shapedArray(of: Float.self).scalars
        let expected = try await reference.shapedArray(of: Float.self).scalars
        return zip(values, expected).reduce(0) { Swift.max($0, Swift.abs($1.0 - $1.1)) }
    }

    /// Runs `name` on its saved inputs under every policy and compares each output with torch's.
    static func check(_ name: String, model file: String? = nil, inputs: [String], outputs: [String], tolerance: Float)
        async throws
    {
        let model = try Model(contentsOf: try url(file ?? "\(name).mlpackage"))
        var tensors: [String: Tensor] = [:]
        for input in inputs { tensors[input] = try array("\(name)_input_\(input)") }
        for policy in ONNXFixture.policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let results = try await model.prediction(from: tensors, options: options)
            for output in outputs {
                let result = try #require(results[output], "\(name): no output '\(output)'")
                let difference = try await maximumDifference(result, try array("\(name)_output_\(output)"))
                #expect(difference <= tolerance, "\(name) \(output) on \(policy): max difference \(difference)")
            }
        }
    }
}

@Suite("Core ML models") struct CoreMLModelTests {
    @Test func convolutionalNetworkMatchesTorch() async throws {
        try await CoreMLFixture.check("cnn", inputs: ["image"], outputs: ["probs", "features"], tolerance: 1e-4)
    }

    @Test func encoderMatchesTorch() async throws {
        try await CoreMLFixture.check(
            "encoder", inputs: ["input_ids", "attention_mask"], outputs: ["last_hidden_state", "pooled"], tolerance: 1e-4)
    }

    @Test func float16EncoderMatchesTorchAtHalfPrecision() async throws {
        try await CoreMLFixture.check(
            "encoder_fp16", inputs: ["input_ids", "attention_mask"], outputs: ["last_hidden_state", "pooled"],
            tolerance: 1e-2)
    }

    @Test func compressedWeightsDecompressOnce() async throws {
        try await CoreMLFixture.check(
            "encoder_int8", inputs: ["input_ids", "attention_mask"], outputs: ["last_hidden_state", "pooled"],
            tolerance: 1e-4)
        try await CoreMLFixture.check(
            "encoder_int8_ios18", inputs: ["input_ids", "attention_mask"], outputs: ["last_hidden_state", "pooled"],
            tolerance: 1e-4)
        try await CoreMLFixture.check("cnn_palettized", inputs: ["image"], outputs: ["probs", "features"], tolerance: 1e-4)
    }
}
