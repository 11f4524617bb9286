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

    /// `Relu` and `Clip` after a `Conv` run as the convolution's epilogue (the plan shows them
    /// fused), with the results of the unfused ops recorded through the tensor API on the
    /// reference; a convolution whose result is also a graph output keeps its activation apart.
    @Test func activationsFuseIntoTheirConvolutions() async throws {
        let nodes = [
            TestNode(op: "Conv", inputs: ["x", "w", "b"], outputs: ["c"], attributes: [("pads", .ints([1, 1, 1, 1]))]),
            TestNode(op: "Relu", inputs: ["c"], outputs: ["r"]),
            TestNode(op: "Conv", inputs: ["r", "v"], outputs: ["d"], attributes: [("strides", .ints([2, 2]))]),
            TestNode(
                op: "Clip", inputs: ["d"], outputs: ["y"], attributes: [("min", .float(-0.25)), ("max", .float(0.5))]),
            TestNode(op: "Conv", inputs: ["x", "v2"], outputs: ["kept"]),
            TestNode(op: "Relu", inputs: ["kept"], outputs: ["z"]),
        ]
        // Opset 6: Clip's bounds are attributes.
        let bytes = ONNXBytes.model(
            opset: 6, nodes: nodes,
            inputs: [("x", [1, 2, 7, 6]), ("w", [4, 2, 3, 3]), ("b", [4]), ("v", [3, 4, 3, 3]), ("v2", [2, 2, 1, 1])],
            outputs: ["y", "z", "kept"])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fusion-\(UUID().uuidString).onnx")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        func values(_ shape: [Int], seed: Int) -> Tensor {
            let count = shape.reduce(1, *)
            return Tensor(shape: shape, scalars: (0..<count).map { Float(($0 * 37 + seed * 11) % 23) / 11 - 1 })
        }
        let (x, w, b) = (values([1, 2, 7, 6], seed: 1), values([4, 2, 3, 3], seed: 2), values([4], seed: 3))
        let (v, v2) = (values([3, 4, 3, 3], seed: 4), values([2, 2, 1, 1], seed: 5))
        let inputs = ["x": x, "w": w, "b": b, "v": v, "v2": v2]
        let r = x.convolution(weight: w, bias: b, padding: .explicit([(1, 1), (1, 1)])).relu()
        let y = r.convolution(weight: v, strides: [2, 2]).clamped(to: -0.25...0.5)
        let kept = x.convolution(weight: v2)
        let expected = try await withComputePolicy(.only(.naive)) {
            ["y": try await y.shapedArray(of: Float.self), "z": try await kept.relu().shapedArray(of: Float.self),
             "kept": try await kept.shapedArray(of: Float.self)]
        }
        // Both bounds bite.
        let bounded = try #require(expected["y"]).scalars
        #expect(bounded.contains(0.5) && bounded.contains(-0.25))
        try await ONNXFixture.expectOutputs(of: model, from: inputs, toMatch: expected, tolerance: 1e-5)
        #expect(try await ONNXFixture.fusedOperators(ofModelAt: url) == ["Relu", "Clip"])
    }

    /// An `Add` or `Sum` of a `Conv`'s result and a shortcut of its shape runs in the
    /// convolution's epilogue, with a `Relu` after it (the plan shows both fused), against the
    /// unfused ops recorded through the tensor API on the reference; a shortcut that broadcasts,
    /// or a convolution whose result is also a graph output, keeps its sum apart.
    @Test func residualSumsFuseIntoTheirConvolutions() async throws {
        let nodes = [
            TestNode(op: "Conv", inputs: ["x", "w", "b"], outputs: ["c"], attributes: [("pads", .ints([1, 1, 1, 1]))]),
            TestNode(op: "Add", inputs: ["x", "c"], outputs: ["s"]),
            TestNode(op: "Relu", inputs: ["s"], outputs: ["y"]),
            TestNode(op: "Conv", inputs: ["y", "v"], outputs: ["d"]),
            TestNode(op: "Conv", inputs: ["x", "v2"], outputs: ["e"]),
            TestNode(op: "Sum", inputs: ["d", "e"], outputs: ["z"]),
            TestNode(op: "Conv", inputs: ["x", "v"], outputs: ["f"]),
            TestNode(op: "Add", inputs: ["f", "row"], outputs: ["g"]),
            TestNode(op: "Conv", inputs: ["x", "v2"], outputs: ["kept"]),
            TestNode(op: "Add", inputs: ["kept", "x"], outputs: ["h"]),
        ]
        let shapes = [
            ("x", [1, 4, 7, 6]), ("w", [4, 4, 3, 3]), ("b", [4]), ("v", [4, 4, 1, 1]), ("v2", [4, 4, 1, 1]),
            ("row", [6]),
        ]
        let url = try ONNXFixture.temporaryModel(
            "residual", opset: 13, nodes: nodes, shapes: shapes, outputs: ["z", "g", "h", "kept"])
        defer { try? FileManager.default.removeItem(at: url) }
        let model = try ONNXModel(contentsOf: url)
        let inputs = ONNXFixture.patternedInputs(shapes)
        let (x, v, v2) = (try #require(inputs["x"]), try #require(inputs["v"]), try #require(inputs["v2"]))
        let c = x.convolution(
            weight: try #require(inputs["w"]), bias: inputs["b"], padding: .explicit([(1, 1), (1, 1)]))
        let y = (x + c).relu()
        let z = y.convolution(weight: v) + x.convolution(weight: v2)
        let g = x.convolution(weight: v) + (try #require(inputs["row"]))
        let kept = x.convolution(weight: v2)
        let expected = try await withComputePolicy(.only(.naive)) {
            ["z": try await z.shapedArray(of: Float.self), "g": try await g.shapedArray(of: Float.self),
             "h": try await (kept + x).shapedArray(of: Float.self), "kept": try await kept.shapedArray(of: Float.self)]
        }
        // The bound after the residual bites.
        #expect(try await y.shapedArray(of: Float.self).scalars.contains(0))
        try await ONNXFixture.expectOutputs(of: model, from: inputs, toMatch: expected, tolerance: 1e-5)
        #expect(try await ONNXFixture.fusedOperators(ofModelAt: url) == ["Add", "Relu", "Sum"])
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
