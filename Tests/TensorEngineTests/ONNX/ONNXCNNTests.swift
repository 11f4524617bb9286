import Foundation
import TensorEngineChecks
import Testing

@testable import TensorEngine

/// Convolutional networks from ONNX files: a ResNet-18-style export and a mix of the window ops
/// (grouped, depthwise-dilated and transposed convolutions, ceil-mode pools), both against
/// onnxruntime (`Fixtures/onnx/make_onnx_resnet_fixtures.py`), and ONNX's nine light CNNs.
@Suite("ONNX CNNs") struct ONNXCNNTests {
    @Test(arguments: [("resnet_tiny", "input", "logits"), ("cnn_mix", "input", "output")])
    func exportsMatchOnnxruntime(_ fixture: (name: String, input: String, output: String)) async throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.url(fixture.name + ".onnx"))
        let x = try ONNXFixture.array("\(fixture.name)_input")
        let expected = try ONNXFixture.array("\(fixture.name)_\(fixture.output)")
        for policy in ONNXFixture.policies {
            let outputs = try await model.prediction(from: [fixture.input: x], policy: policy)
            let difference = try await ONNXFixture.maximumDifference(try #require(outputs[fixture.output]), expected)
            #expect(difference <= 1e-4, "\(fixture.name) on \(policy): \(difference)")
        }
    }

    @Test func theBatchAxisIsSymbolic() async throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.url("resnet_tiny.onnx"))
        #expect(model.inputDescriptionsByName["input"]?.multiArrayConstraint?.shape?.first == .symbolic("batch"))
        // The second image alone gives the second row of the batch's logits.
        let x = try ONNXFixture.array("resnet_tiny_input").slice(alongAxis: 0, start: 1, count: 1)
        let logits = try #require(try await model.prediction(from: ["input": x])["logits"])
        let expected = try ONNXFixture.array("resnet_tiny_logits").slice(alongAxis: 0, start: 1, count: 1)
        #expect(try await ONNXFixture.maximumDifference(logits, expected) <= 1e-4)
    }

    /// ResNet50, SqueezeNet, VGG19, DenseNet121, AlexNet, GoogLeNet, Inception v2, ShuffleNet and
    /// ZFNet with constant weights, on ONNX's runner inputs, against their stored outputs, on the
    /// fast backends (the naive reference takes three minutes for the nine, at 0.4 GFLOP/s;
    /// `tensorengine-check onnx light --policy naive` runs it).
    @Test func lightModelsMatchTheirExpectedOutputs() async throws {
        let root = ONNXConformance.directory()
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent("light").path) else {
            throw ONNXFixture.Missing(
                description: "ONNX's light models are not in \(root.path); run scripts/fetch-onnx-tests.sh")
        }
        var policies: [ComputePolicy] = [.only(.openblas), .all]
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.only(.opencl)) }
        let results = await ONNXConformance.runSuites(["light"], policies: policies, root: root)
        #expect(results.count == 9)
        for result in results {
            #expect(result.outcome == .passed, "\(result.name): \(result.outcome)")
        }
    }
}
