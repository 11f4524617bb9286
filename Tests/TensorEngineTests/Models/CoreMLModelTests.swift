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

    static func array(_ name: String) throws -> Tensor { try Tensor(npyFile: try url(name + ".npy")) }

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

    /// An image input (Core ML feeds a pixel buffer) takes its pixels as a multi-array: the
    /// program scales them itself.
    @Test func imageInputsTakePixelsAsMultiArrays() async throws {
        let model = try Model(contentsOf: try CoreMLFixture.url("cnn_image.mlpackage"))
        let image = try #require(model.modelDescription.inputDescriptionsByName["image"])
        #expect(image.type == .image)
        #expect(image.multiArrayConstraint?.shape == [.fixed(1), .fixed(3), .fixed(16), .fixed(16)], "\(image)")
        let pixels = try MultiArray(try CoreMLFixture.array("cnn_image_input_image"))
        let output = try await model.prediction(from: try DictionaryFeatureProvider(dictionary: ["image": pixels]))
        let probs = try #require(output.featureValue(for: "probs")?.tensorValue)
        let difference = try await CoreMLFixture.maximumDifference(
            probs, try CoreMLFixture.array("cnn_image_output_probs"))
        #expect(difference <= 1e-4, "max difference \(difference)")
        try await CoreMLFixture.check("cnn_image", inputs: ["image"], outputs: ["probs", "features"], tolerance: 1e-4)
    }

    /// Open sizes (coremltools' `RangeDim`): described as open, fixed by each prediction's input,
    /// and a prediction at the default size and one at another size both run.
    @Test func openInputSizesAreFixedByThePrediction() async throws {
        let model = try Model(contentsOf: try CoreMLFixture.url("cnn_flexible.mlpackage"))
        let image = try #require(model.modelDescription.inputDescriptionsByName["image"])
        #expect(image.multiArrayConstraint?.shape == [.fixed(1), .fixed(3), .unknown, .unknown], "\(image)")
        try await CoreMLFixture.check(
            "cnn_flexible", inputs: ["image"], outputs: ["probs", "features"], tolerance: 1e-4)
        let square = try await model.prediction(from: ["image": try CoreMLFixture.array("cnn_input_image")])
        let probs = try #require(square["probs"])
        let difference = try await CoreMLFixture.maximumDifference(probs, try CoreMLFixture.array("cnn_output_probs"))
        #expect(difference <= 1e-4, "at 16 x 16: \(difference)")
    }

    /// Forty-six operation types from one module (gathers and scatters along an axis, batched
    /// products, one-hot, local response, group, instance and layer normalization, flips, sums,
    /// top-k, sorting, the padding modes, the activations, floor division, resampling, pixel
    /// shuffle...).
    @Test func operationMixMatchesTorch() async throws {
        let outputs = [
            "gathered", "scattered", "scatter_added", "bmm", "bmm_transposed", "one_hot", "lrn", "flipped", "cumsum",
            "topk_values", "argsort", "padded_reflect", "padded_replicate", "padded_constant", "unary", "max_values",
            "max_indices", "chunked", "rolled", "layer_norm", "group_norm", "instance_norm", "bilinear", "nearest",
            "pixel_shuffle",
        ]
        try await CoreMLFixture.check("ops_mix", inputs: ["x", "y"], outputs: outputs, tolerance: 1e-4)
    }

    /// Recurrent layers: an LSTM and a bidirectional one as MIL's `lstm`, and a GRU, which
    /// coremltools writes as a `while_loop` over its steps.
    @Test func recurrentLayersAndLoopsMatchTorch() async throws {
        try await CoreMLFixture.check(
            "lstm", inputs: ["x"], outputs: ["lstm_output", "lstm_h", "lstm_c", "gru_output", "bilstm_output"],
            tolerance: 1e-4)
    }

    /// Advanced indexing and index_put: `gather_nd` and `scatter_nd` (replacing and accumulating).
    @Test func indexingByCoordinatesMatchesTorch() async throws {
        try await CoreMLFixture.check(
            "scatter_gather_nd", inputs: ["x", "u"],
            outputs: ["gathered_pairs", "gathered_points", "gathered_mixed", "put", "put_accumulate", "put_rows", "masked"],
            tolerance: 1e-4)
    }

    @Test func encoderMatchesTorch() async throws {
        try await CoreMLFixture.check(
            "encoder", inputs: ["input_ids", "attention_mask"], outputs: ["last_hidden_state", "pooled"],
            tolerance: 1e-4)
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
        try await CoreMLFixture.check(
            "cnn_palettized", inputs: ["image"], outputs: ["probs", "features"], tolerance: 1e-4)
    }
}

@Suite("Core ML models: state, plans and errors") struct CoreMLModelStateTests {
    /// iOS 18's stateful program: an accumulator and a key/value cache written at a position
    /// read from the input, carried across four steps as torch carries its buffers.
    @Test func statefulProgramCarriesItsStateAcrossPredictions() async throws {
        let model = try await Model.load(contentsOf: try CoreMLFixture.url("stateful.mlpackage"))
        let states = model.modelDescription.stateDescriptionsByName
        #expect(Set(states.keys) == ["accumulator", "key_cache", "value_cache"])
        #expect(states["key_cache"]?.multiArrayConstraint?.shape == [.fixed(1), .fixed(6), .fixed(8)])
        for policy in ONNXFixture.policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let state = model.makeState()
            for step in 0..<4 {
                var features: [String: Any] = [:]
                for input in ["x", "token", "position"] {
                    features[input] = try MultiArray(try CoreMLFixture.array("stateful_step\(step)_input_\(input)"))
                }
                let output = try await model.prediction(
                    from: try DictionaryFeatureProvider(dictionary: features), using: state, options: options)
                for name in ["sum", "attended"] {
                    let result = try #require(output.featureValue(for: name)?.tensorValue)
                    let reference = try CoreMLFixture.array("stateful_step\(step)_output_\(name)")
                    let difference = try await CoreMLFixture.maximumDifference(result, reference)
                    #expect(difference <= 1e-3, "step \(step) \(name) on \(policy): max difference \(difference)")
                }
            }
            for name in ["accumulator", "key_cache", "value_cache"] {
                let stored = try #require(state.tensor(for: name))
                let difference = try await CoreMLFixture.maximumDifference(
                    stored, try CoreMLFixture.array("stateful_final_\(name)"))
                #expect(difference <= 1e-3, "state \(name) on \(policy): max difference \(difference)")
            }
        }
    }

    /// The seed's `MLComputePlan` walk over a Core ML model's program: MIL operations by their
    /// own names and types, parameters by name, each with a device and a cost.
    @Test func computePlanWalksTheProgram() async throws {
        let config = ModelConfiguration()
        config.computeUnits = .cpuOnly
        let url = try CoreMLFixture.url("cnn.mlpackage")
        let computePlan = try await ComputePlan.load(contentsOf: url, configuration: config)
        guard case .program(let program) = computePlan.modelStructure, let mainFunction = program.functions["main"]
        else {
            Issue.record("Model is not an ML program or has no main function")
            return
        }
        var weights = 0.0
        for operation in mainFunction.block.operations {
            if let cost = computePlan.estimatedCost(of: operation) { weights += cost.weight }
        }
        let convolutions = mainFunction.block.operations.filter { $0.operatorName == "conv" }
        #expect(convolutions.count == 3)
        for convolution in convolutions {
            #expect(computePlan.deviceUsage(for: convolution)?.preferredComputeDevice == .cpu(.openblas))
            #expect(convolution.inputs["x"]?.bindings.count == 1)
            #expect(convolution.inputs["weight"]?.bindings.count == 1)
        }
        let constants = mainFunction.block.operations.filter { $0.operatorName == "const" }
        #expect(!constants.isEmpty && constants.allSatisfy { computePlan.deviceUsage(for: $0) == nil })
        #expect(abs(weights - 1) < 1e-6, "weights sum to \(weights)")
        #expect(mainFunction.inputs.first?.shape == [1, 3, 16, 16])
        let model = try #require(try Model(contentsOf: url).implementation as? CoreMLModel)
        #expect(model.opset == "CoreML7" && model.specificationVersion == 8)
        let text = try model.computePlan(inputShapes: [:], policy: .cpuOnly).text()
        #expect(text.contains("conv") && text.contains("batch_norm"), "\(text)")
    }

    /// The seed's ModelManager with a Core ML package: compiled (checked, handed back as
    /// `NAME.mlmodelc`), moved into the cache folder, loaded from there, shared and reloaded.
    @Test func seedModelManagerCompilesAndCachesPackages() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("coreml-manager-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let source = try CoreMLFixture.url("cnn.mlpackage").deletingLastPathComponent()
        let manager = ModelManager(
            sourceDirectory: source, cacheDirectory: root.appendingPathComponent("CompiledModels"))
        let first = try await manager.model(named: "cnn")
        #expect(try await manager.model(named: "cnn") === first)
        await manager.unloadAll()
        let reloaded = try await manager.model(named: "cnn")  // from CompiledModels/cnn.mlmodelc
        #expect(reloaded !== first)
        let compiled = root.appendingPathComponent("CompiledModels/cnn.mlmodelc")
        #expect(FileManager.default.fileExists(atPath: compiled.appendingPathComponent("Manifest.json").path))
        let pixels = try MultiArray(try CoreMLFixture.array("cnn_input_image"))
        let output = try await reloaded.prediction(from: try DictionaryFeatureProvider(dictionary: ["image": pixels]))
        let probs = try #require(output.featureValue(for: "probs")?.tensorValue)
        let difference = try await CoreMLFixture.maximumDifference(probs, try CoreMLFixture.array("cnn_output_probs"))
        #expect(difference <= 1e-4)
        // A bare specification compiles into a package too.
        let tiny = try await Model.compileModel(
            at: try CoreMLFixture.url("classifier.mlmodel").deletingLastPathComponent()
                .appendingPathComponent("../fuzz/coreml/tiny_program.mlmodel").standardizedFileURL)
        defer { try? FileManager.default.removeItem(at: tiny.deletingLastPathComponent()) }
        #expect(tiny.lastPathComponent == "tiny_program.mlmodelc")
        #expect(try Model(contentsOf: tiny).modelDescription.outputDescriptionsByName["probs"] != nil)
    }

    /// Every operation the engine lacks is listed, not just the first: the encoder with its
    /// `gelu` and `tanh` operations renamed to types no opset has.
    @Test func unsupportedOperationsAreListedTogether() throws {
        let package = try Self.copy("encoder.mlpackage") { bytes in
            Self.replace(&bytes, "gelu", with: "gelx")
            Self.replace(&bytes, "tanh", with: "tanq")
        }
        defer { try? FileManager.default.removeItem(at: package.deletingLastPathComponent()) }
        do {
            _ = try Model(contentsOf: package)
            Issue.record("loading succeeded")
        } catch let error as ModelError {
            #expect(error.kind == .unsupportedOperators)
            #expect(error.unsupportedNodes.map(\.opType).sorted() == ["gelx", "gelx", "tanq"], "\(error)")
            #expect(error.unsupportedNodes.allSatisfy { $0.opsetVersion == 6 && !$0.name.isEmpty })
        }
    }

    @Test func otherModelKindsAndMalformedFilesAreTypedErrors() throws {
        do {
            _ = try Model(contentsOf: try CoreMLFixture.url("classifier.mlmodel"))
            Issue.record("a neural-network model loaded")
        } catch let error as ModelError {
            #expect(error.kind == .unsupportedType)
            #expect(error.message.contains("neural-network") && error.message.contains("mlprogram"), "\(error)")
        }
        let truncated = try Self.copy("encoder.mlpackage") { bytes in bytes.removeLast(bytes.count / 2) }
        defer { try? FileManager.default.removeItem(at: truncated.deletingLastPathComponent()) }
        #expect(throws: FileFormatError.self) { try Model(contentsOf: truncated) }
        // A weight file whose blob metadata lost its sentinel.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coreml-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let package = folder.appendingPathComponent("cnn.mlpackage")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: try CoreMLFixture.url("cnn.mlpackage"), to: package)
        let weights = package.appendingPathComponent("Data/com.apple.CoreML/weights/weight.bin")
        var data = try Data(contentsOf: weights)
        for index in stride(from: 64, to: data.count - 4, by: 1)
        where data[index..<(index + 4)].elementsEqual([0xEF, 0xBE, 0xAD, 0xDE]) {
            data[index] = 0
        }
        try data.write(to: weights)
        #expect(throws: ModelError.self) { try Model(contentsOf: package) }
        #expect(throws: (any Error).self) { try Model(contentsOf: folder.appendingPathComponent("missing.mlpackage")) }
        let config = ModelConfiguration()
        config.functionName = "prefill"
        #expect(throws: ModelError.self) {
            try Model(contentsOf: try CoreMLFixture.url("encoder.mlpackage"), configuration: config)
        }
    }

    /// A copy of a fixture package in a fresh folder, its specification's bytes changed by `edit`.
    static func copy(_ name: String, editing edit: (inout Data) -> Void) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coreml-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let package = folder.appendingPathComponent(name)
        try FileManager.default.copyItem(at: try CoreMLFixture.url(name), to: package)
        let specification = package.appendingPathComponent("Data/com.apple.CoreML/model.mlmodel")
        var bytes = try Data(contentsOf: specification)
        edit(&bytes)
        try bytes.write(to: specification)
        return package
    }

    /// Replaces every occurrence of a string by one of the same length (the message stays valid).
    static func replace(_ bytes: inout Data, _ old: String, with new: String) {
        let from = Array(old.utf8)
        let to = Array(new.utf8)
        var index = 0
        while index + from.count <= bytes.count {
            if bytes[index..<(index + from.count)].elementsEqual(from) {
                bytes.replaceSubrange(index..<(index + from.count), with: to)
                index += from.count
            } else {
                index += 1
            }
        }
    }
}
