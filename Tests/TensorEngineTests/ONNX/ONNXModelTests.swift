import Foundation
import Testing

@testable import TensorEngine

/// Where the ONNX tests find their fixtures and downloaded models.
enum ONNXFixture {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    static func url(_ name: String) throws -> URL {
        guard let folder = Bundle.module.url(forResource: "onnx", withExtension: nil, subdirectory: "Fixtures") else {
            throw Missing(description: "Fixtures/onnx is not in the test bundle")
        }
        return folder.appendingPathComponent(name)
    }

    /// A fixture `.npy`, in its own element type (`int64` token ids stay `Int64`).
    static func array(_ name: String) throws -> Tensor { try Tensor(npyFile: try url(name + ".npy")) }

    /// `$TENSORENGINE_ONNX_MODEL_DIR/model.onnx`, else `~/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2/model.onnx`
    /// (scripts/fetch-onnx-model.sh). Throws, failing the test, when absent.
    static func minilmL3() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let folder =
            environment["TENSORENGINE_ONNX_MODEL_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                ".cache/tensorengine/models/paraphrase-MiniLM-L3-v2"
            ).path
        let url = URL(fileURLWithPath: folder).appendingPathComponent("model.onnx")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw Missing(description: "\(url.path) is missing; run scripts/fetch-onnx-model.sh")
        }
        return url
    }

    static func maximumDifference(_ a: Tensor, _ b: Tensor) async throws -> Float {
        let (x, y) = (try await a.shapedArray(of: Float.self), try await b.shapedArray(of: Float.self))
        #expect(x.shape == y.shape)
        return zip(x.scalars, y.scalars).map { Swift.abs($0 - $1) }.max() ?? 0
    }

    /// A prediction's outputs on every policy against `expected` (by output name), each element to
    /// within `tolerance`.
    static func expectOutputs(
        of model: ONNXModel, from inputs: [String: Tensor], toMatch expected: [String: ShapedArray<Float>],
        tolerance: Float
    ) async throws {
        for policy in policies {
            let outputs = try await model.prediction(from: inputs, policy: policy)
            for (name, want) in expected {
                let got = try await #require(outputs[name]).shapedArray(of: Float.self)
                #expect(got.shape == want.shape, "\(name) on \(policy)")
                let difference = zip(got.scalars, want.scalars).map { Swift.abs($0 - $1) }.max() ?? 0
                #expect(difference <= tolerance, "\(name) on \(policy): \(difference)")
            }
        }
    }

    /// The operators of a model's compute plan that run no engine operation of their own: those
    /// fused into another's.
    /// A model written to a temporary file (removed by the caller) from `nodes`, with float
    /// graph inputs of `shapes`.
    static func temporaryModel(
        _ prefix: String, opset: Int64, nodes: [TestNode], shapes: [(String, [Int])], outputs: [String]
    ) throws -> URL {
        let bytes = ONNXBytes.model(opset: opset, nodes: nodes, inputs: shapes, outputs: outputs)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString).onnx")
        try Data(bytes).write(to: url)
        return url
    }

    /// One tensor per named shape, of a fixed pattern in [-1, 1) that differs by position.
    static func patternedInputs(_ shapes: [(String, [Int])]) -> [String: Tensor] {
        var inputs: [String: Tensor] = [:]
        for (seed, (name, shape)) in shapes.enumerated() {
            let count = shape.reduce(1, *)
            inputs[name] = Tensor(shape: shape, scalars: (0..<count).map { Float(($0 * 37 + seed * 11) % 23) / 11 - 1 })
        }
        return inputs
    }

    static func fusedOperators(ofModelAt url: URL) async throws -> [String] {
        let plan = try await ComputePlan.load(contentsOf: url, configuration: ModelConfiguration())
        guard case .program(let program) = plan.modelStructure, let main = program.functions["main"] else {
            Issue.record("no main function")
            return []
        }
        return main.block.operations.filter { plan.deviceUsage(for: $0) == nil }.map(\.operatorName)
    }

    /// The policies a model runs under in the tests: each backend alone (openblas with the
    /// reference for the integer ops it does not claim), and the planner's choice.
    static var policies: [ComputePolicy] {
        var policies: [ComputePolicy] = [.only(.naive), .cpuOnly]
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.cpuAndGPU) }
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.only(.opencl)) }
        return policies + [.all]
    }
}

@Suite("ONNX models") struct ONNXModelTests {
    @Test func tinyModelsMatchOnnxruntime() async throws {
        for (name, input) in [("tiny_mlp", "x"), ("tiny_shape_subgraph", "x"), ("external_data", "x")] {
            let model = try ONNXModel(contentsOf: try ONNXFixture.url(name + ".onnx"))
            for policy in ONNXFixture.policies {
                let outputs = try await model.prediction(
                    from: [input: try ONNXFixture.array("\(name)_x")], policy: policy)
                let difference = try await ONNXFixture.maximumDifference(
                    try #require(outputs["y"]), try ONNXFixture.array("\(name)_y"))
                #expect(difference <= 1e-5, "\(name) on \(policy): \(difference)")
            }
        }
    }

    @Test func symbolicBatchSizesRunWithoutReloading() async throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"))
        let description = try #require(model.inputDescriptionsByName["x"])
        #expect(description.multiArrayConstraint?.shape == [.symbolic("batch"), .fixed(4)])
        #expect(description.multiArrayConstraint?.dataType == .float32)
        let x = try ONNXFixture.array("tiny_mlp_x")  // [2, 4]
        let expected = try await ONNXFixture.array("tiny_mlp_y").shapedArray(of: Float.self)
        for rows in [1, 2, 5] {
            // Each row of a batch is its own softmax: any batch of fixture rows predicts those rows.
            let picks = Tensor(shape: [rows], scalars: (0..<rows).map { Int32($0 % 2) })
            for _ in 0..<2 {  // the second prediction at a shape runs the prepared plan
                let y = try await model.prediction(from: ["x": x.gathering(atIndices: picks, alongAxis: 0)])["y"]
                let values = try await #require(y).shapedArray(of: Float.self)
                #expect(values.shape == [rows, 3])
                for row in 0..<rows {
                    for column in 0..<3 {
                        #expect(Swift.abs(values[scalarAt: row, column] - expected[scalarAt: row % 2, column]) <= 1e-5)
                    }
                }
            }
        }
    }

    @Test func everyUnsupportedNodeIsListed() throws {
        do {
            _ = try ONNXModel(contentsOf: try ONNXFixture.url("unsupported_ops.onnx"))
            Issue.record("a model with LpPool, GlobalLpPool and a custom op loaded")
        } catch let error as ModelError {
            #expect(error.kind == .unsupportedOperators)
            #expect(error.unsupportedNodes.map(\.name) == ["lppool_0", "pool_0", "lppool_1", "frobnicate_0"])
            #expect(error.unsupportedNodes.map(\.opType) == ["LpPool", "GlobalLpPool", "LpPool", "com.example.Frobnicate"])
            #expect(error.description.contains("LpPool 'lppool_0' (opset 13): not implemented"))
        }
    }

    @Test func inputsAreCheckedAgainstTheirDescriptions() async throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"))
        func rejects(_ inputs: [String: Tensor], _ mentions: String) {
            do {
                _ = try model.outputs(for: inputs)
                Issue.record("accepted \(inputs)")
            } catch {
                #expect(error.kind == .invalidInput)
                #expect(error.description.contains(mentions), "\(error)")
            }
        }
        rejects([:], "input 'x'")
        rejects(["x": Tensor(repeating: 0, shape: [2, 3], scalarType: Float.self)], "float [batch, 4]")
        rejects(["x": Tensor(repeating: 0, shape: [2, 4], scalarType: Int32.self)], "given int32")
        rejects(["x": Tensor(repeating: 0, shape: [8], scalarType: Float.self)], "given float32 [8]")
        // After a prediction at a shape has been prepared, an input carrying an error still fails.
        _ = try await model.prediction(from: ["x": Tensor(repeating: 0, shape: [1, 4], scalarType: Float.self)])
        await #expect(throws: ModelError.self) {
            _ = try await model.prediction(from: ["x": Tensor(repeating: 0, shape: [1, 4], scalarType: Float.self).reshaped(to: [3])])
        }
        // Float16 converts exactly to the model's float.
        let half = try model.outputs(for: ["x": Tensor(repeating: 0.5, shape: [1, 4], scalarType: Float16.self)])
        #expect(half["y"]?.shape == [1, 3])
    }

    @Test func thePlanOfAModelNamesItsNodes() throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.url("tiny_shape_subgraph.onnx"))
        let plan = try model.computePlan(inputShapes: ["x": [2, 3, 4]], policy: .cpuOnly)
        #expect(plan.operations.count == model.nodeCount)
        let folded = plan.operations.filter(\.isFoldedOnHost).map(\.opType)
        #expect(folded.contains("Shape") && folded.contains("Gather") && folded.contains("Concat"))
        let reduce = try #require(plan.operations.first { $0.opType == "ReduceSum" })
        #expect(reduce.deviceUsage != nil && !reduce.engineOperations.isEmpty)
        let weights = plan.operations.compactMap(\.estimatedCost?.weight).reduce(0, +)
        #expect(Swift.abs(weights - 1) < 1e-9)
        #expect(plan.text().contains("ReduceSum"))
        #expect(plan.json().contains("\"opType\": \"ReduceSum\""))
        #expect(plan.dot().hasPrefix("digraph model"))
    }

    @Test func npyInputsConvertOnlyWhereExact() throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.minilmL3())
        let ids = try #require(model.inputDescriptionsByName["input_ids"])
        #expect(ids.multiArrayConstraint?.modelElementType == "int64")
        let tensor = try Tensor(npyFile: try ONNXFixture.url("minilm_l3_b1_input_ids.npy"), converting: ids)
        #expect(tensor.dtype == .int64 && tensor.shape == [1, 9])
        let floats = try #require(
            ONNXModel(contentsOf: try ONNXFixture.url("tiny_mlp.onnx")).inputDescriptionsByName["x"])
        #expect(throws: ModelError.self) {
            _ = try Tensor(npyFile: try ONNXFixture.url("minilm_l3_b1_input_ids.npy"), converting: floats)
        }
    }

    /// The torch export of paraphrase-MiniLM-L3-v2 (opset 17, symbolic batch and sequence) against
    /// onnxruntime's outputs, on every policy, at two batch shapes on one loaded model.
    @Test func miniLML3MatchesOnnxruntime() async throws {
        let model = try ONNXModel(contentsOf: try ONNXFixture.minilmL3())
        #expect(model.opsetVersion == 17)
        for policy in ONNXFixture.policies {
            for batch in ["b1", "b3"] {
                let inputs = [
                    "input_ids": try ONNXFixture.array("minilm_l3_\(batch)_input_ids"),
                    "attention_mask": try ONNXFixture.array("minilm_l3_\(batch)_attention_mask"),
                ]
                for _ in 0..<2 {
                    let outputs = try await model.prediction(from: inputs, policy: policy)
                    for (name, file) in [("onnx::Shape_422", "onnx__Shape_422"), ("461", "461")] {
                        let reference = try ONNXFixture.array("minilm_l3_\(batch)_\(file)")
                        let difference = try await ONNXFixture.maximumDifference(try #require(outputs[name]), reference)
                        #expect(difference <= 1e-4, "\(batch) \(name) on \(policy): \(difference)")
                    }
                }
            }
        }
    }
}

/// The ONNX export of all-MiniLM-L6-v2 beside its safetensors weights, if it was made.
let exportedMiniLML6: URL? = {
    guard let folder = try? ModelFixture.folder() else { return nil }
    let url = folder.appendingPathComponent("model.onnx")
    return FileManager.default.fileExists(atPath: url.path) ? url : nil
}()

/// all-MiniLM-L6-v2 exported to ONNX by `scripts/export_minilm_onnx.py` (torch's exporter) against
/// onnxruntime's hidden states and against the hand-written ``BERTEncoder`` on the same token ids.
/// The export needs torch, which CI does not install (`scripts/fetch-minilm-onnx.sh` says how to
/// make it); without the file this suite is reported as skipped, never passed.
@Suite(
    "ONNX MiniLM-L6 export",
    .enabled(if: exportedMiniLML6 != nil, "model.onnx not exported (scripts/fetch-minilm-onnx.sh)"))
struct ONNXMiniLML6Tests {
    static var exportedModel: URL? { exportedMiniLML6 }

    @Test func matchesOnnxruntimeAndTheHandWrittenEncoder() async throws {
        let model = try ONNXModel(contentsOf: try #require(Self.exportedModel))
        let ids = try ONNXFixture.array("minilm_l6_input_ids")  // [4, 12], Int64
        let mask = try ONNXFixture.array("minilm_l6_attention_mask")
        let types = try ONNXFixture.array("minilm_l6_token_type_ids")
        let reference = try ONNXFixture.array("minilm_l6_last_hidden_state")
        let encoder = try BERTEncoder(folder: try ModelFixture.folder())
        // The hand-written encoder takes the export's Int64 ids as they are.
        let handWritten = try await encoder.hiddenStates(ids: ids, mask: mask.cast(to: Float.self))
            .shapedArray(of: Float.self)
        let maskValues = try await mask.cast(to: Int32.self).shapedArray(of: Int32.self)
        for policy in ONNXFixture.policies {
            let outputs = try await model.prediction(
                from: ["input_ids": ids, "attention_mask": mask, "token_type_ids": types], policy: policy)
            let states = try #require(outputs["last_hidden_state"])
            let difference = try await ONNXFixture.maximumDifference(states, reference)
            #expect(difference <= 1e-4, "onnxruntime vs \(policy): \(difference)")
            // Against the hand-written encoder at real tokens (padding carries no meaning).
            let values = try await states.shapedArray(of: Float.self)
            var worst: Float = 0
            for row in 0..<4 {
                for token in 0..<12 where maskValues[scalarAt: row, token] == 1 {
                    for unit in 0..<384 {
                        worst = Swift.max(
                            worst,
                            Swift.abs(values[scalarAt: row, token, unit] - handWritten[scalarAt: row, token, unit]))
                    }
                }
            }
            #expect(worst <= 1e-4, "BERTEncoder vs \(policy): \(worst)")
        }
    }
}
