import Foundation
import Testing

@testable import TensorEngine

/// The seed's model manager with the `ML` prefixes dropped: an actor that compiles, caches and
/// shares models (the bundle lookups become a folder of source models).
actor ModelManager {
    private var loadedModels: [String: Model] = [:]
    private let cacheDirectory: URL
    private let sourceDirectory: URL

    init(sourceDirectory: URL, cacheDirectory: URL) {
        self.sourceDirectory = sourceDirectory
        self.cacheDirectory = cacheDirectory
        try? FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
    }

    func model(named name: String, configuration: ModelConfiguration = .init()) async throws -> Model {
        if let cached = loadedModels[name] {
            return cached
        }
        let compiledURL = try await compiledModelURL(for: name)
        let model = try await Model.load(contentsOf: compiledURL, configuration: configuration)
        loadedModels[name] = model
        return model
    }

    func unloadModel(named name: String) {
        loadedModels.removeValue(forKey: name)
    }

    func unloadAll() {
        loadedModels.removeAll()
    }

    private func compiledModelURL(for name: String) async throws -> URL {
        let cachedURL = cacheDirectory.appendingPathComponent("\(name).mlmodelc")
        if FileManager.default.fileExists(atPath: cachedURL.path) {
            return cachedURL
        }
        // Compile from .mlpackage (or an ONNX file) and cache
        guard
            let packageURL = ["mlpackage", "onnx"].map({ sourceDirectory.appendingPathComponent("\(name).\($0)") })
                .first(where: { FileManager.default.fileExists(atPath: $0.path) })
        else {
            throw ModelManagerError.modelNotFound(name)
        }
        let tempCompiledURL = try await Model.compileModel(at: packageURL)
        if FileManager.default.fileExists(atPath: cachedURL.path) {
            try FileManager.default.removeItem(at: cachedURL)
        }
        try FileManager.default.moveItem(at: tempCompiledURL, to: cachedURL)
        return cachedURL
    }
}

enum ModelManagerError: Error {
    case modelNotFound(String)
}

/// The seed's manual provider: an image as a multi-array and a threshold as a double.
final class CustomImageInput: FeatureProvider {
    let image: MultiArray
    let confidenceThreshold: Double

    var featureNames: Set<String> {
        ["x", "confidence_threshold"]
    }

    func featureValue(for featureName: String) -> FeatureValue? {
        switch featureName {
        case "x":
            return FeatureValue(multiArray: image)
        case "confidence_threshold":
            return FeatureValue(double: confidenceThreshold)
        default:
            return nil
        }
    }

    init(image: MultiArray, confidenceThreshold: Double = 0.5) {
        self.image = image
        self.confidenceThreshold = confidenceThreshold
    }
}

@Suite("Core ML's model API") struct ModelAPITests {
    static func tinyInput() throws -> MultiArray {
        let x = try Tensor(npyFile: try ONNXFixture.url("tiny_mlp_x.npy")).evaluatedArray()
        return MultiArray(x)
    }

    static func tinyReference() throws -> [Float] {
        try Tensor(npyFile: try ONNXFixture.url("tiny_mlp_y.npy")).evaluatedArray().scalars
    }

    static func maximumDifference(_ a: [Float], _ b: [Float]) -> Float {
        #expect(a.count == b.count)
        return zip(a, b).map { Swift.abs($0 - $1) }.max() ?? 0
    }

    @Test func loadDescribeAndPredictInEveryForm() async throws {
        let config = ModelConfiguration()
        config.computeUnits = .cpuOnly
        let url = try ONNXFixture.url("tiny_mlp.onnx")
        let model = try await Model.load(contentsOf: url, configuration: config)
        config.computeUnits = .all  // the model keeps its own copy
        #expect(model.configuration.computeUnits == .cpuOnly)
        let description = model.modelDescription
        #expect(description.inputDescriptionsByName.count == 1)
        let x = try #require(description.inputDescriptionsByName["x"]?.multiArrayConstraint)
        #expect(x.shape == [.symbolic("batch"), .fixed(4)])
        #expect(x.dataType == .float32)
        #expect(description.outputDescriptionsByName["y"]?.type == .multiArray)
        #expect(description.stateDescriptionsByName.isEmpty)
        let reference = try Self.tinyReference()

        let input = CustomImageInput(image: try Self.tinyInput(), confidenceThreshold: 0.7)
        func predictOnThisThread() throws -> any FeatureProvider { try model.prediction(from: input) }
        let synchronous = try predictOnThisThread()
        let values = try #require(synchronous.featureValue(for: "y")?.shapedArrayValue(of: Float.self))
        #expect(values.shape == [2, 3])
        #expect(Self.maximumDifference(values.scalars, reference) < 1e-5)

        for policy in ONNXFixture.policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let output = try await model.prediction(from: input, options: options)
            let array = try #require(output.featureValue(for: "y")?.multiArrayValue)
            let scalars = array.withUnsafeBufferPointer(ofType: Float.self) { Array($0) }
            #expect(Self.maximumDifference(scalars, reference) < 1e-5, "\(policy)")
        }
        let tensors = try await model.prediction(from: ["x": Tensor(try Self.tinyInput())])
        let y = try await #require(tensors["y"]).shapedArray(of: Float.self)
        #expect(Self.maximumDifference(y.scalars, reference) < 1e-5)
        let synchronousModel = try Model(contentsOf: url)
        #expect(synchronousModel.modelDescription.outputDescriptions.map(\.name) == ["y"])
    }

    @Test func inputsThatDoNotConvertExactlyAreTypedErrorsNamingTheFeature() throws {
        let model = try Model(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"))
        func failure(_ value: FeatureValue) -> String {
            do {
                _ = try model.prediction(from: DictionaryFeatureProvider(["x": value]))
                return "no error"
            } catch let error as ModelError {
                #expect(error.kind == .invalidInput)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let ints = failure(FeatureValue(multiArray: try MultiArray(shape: [2, 4], dataType: .int32)))
        #expect(ints.contains("'x'") && ints.contains("float") && ints.contains("int32"), "\(ints)")
        let doubles = failure(FeatureValue(multiArray: try MultiArray(shape: [2, 4], dataType: .double)))
        #expect(doubles.contains("double"), "\(doubles)")
        let shape = failure(FeatureValue(multiArray: try MultiArray(shape: [2, 5], dataType: .float32)))
        #expect(shape.contains("[2, 5]") && shape.contains("[batch, 4]"), "\(shape)")
        #expect(failure(FeatureValue(string: "text")).contains("string"))
        // Float16 converts exactly to a float input.
        let halves = try MultiArray(shape: [1, 4], dataType: .float16)
        let output = try model.prediction(from: DictionaryFeatureProvider(["x": FeatureValue(multiArray: halves)]))
        #expect(output.featureValue(for: "y")?.multiArrayValue?.shape == [1, 3])
        #expect(throws: ModelError.self) { try model.prediction(from: DictionaryFeatureProvider([:])) }
        #expect(throws: (any Error).self) { try Model(contentsOf: URL(fileURLWithPath: "/nonexistent/model.onnx")) }
        let package = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString).mlpackage")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: package) }
        #expect(throws: FileFormatError.self) { try Model(contentsOf: package) }  // no Manifest.json
        let config = ModelConfiguration()
        config.functionName = "prefill"
        #expect(throws: ModelError.self) { try Model(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"), configuration: config) }
    }

    @Test func seedModelManagerCompilesCachesAndShares() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("model-manager-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let source = try ONNXFixture.url("tiny_mlp.onnx").deletingLastPathComponent()
        let manager = ModelManager(sourceDirectory: source, cacheDirectory: root.appendingPathComponent("CompiledModels"))
        let first = try await manager.model(named: "tiny_mlp")
        let again = try await manager.model(named: "tiny_mlp")
        #expect(first === again)
        await manager.unloadAll()
        let reloaded = try await manager.model(named: "tiny_mlp")  // from the compiled cache folder
        #expect(reloaded !== first)
        let compiled = root.appendingPathComponent("CompiledModels/tiny_mlp.mlmodelc")
        #expect(FileManager.default.fileExists(atPath: compiled.appendingPathComponent("weights.bin").path))
        let output = try await reloaded.prediction(from: CustomImageInput(image: try Self.tinyInput()))
        let values = try #require(output.featureValue(for: "y")?.shapedArrayValue(of: Float.self))
        #expect(Self.maximumDifference(values.scalars, try Self.tinyReference()) < 1e-5)
        await #expect(throws: ModelManagerError.self) { try await manager.model(named: "missing") }
    }

    @Test func compiledModelsKeepWeightsAlignedAndPredictTheSame() async throws {
        let source = try ONNXFixture.url("resnet_tiny.onnx")
        let compiled = try await Model.compileModel(at: source)
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let original = try Model(contentsOf: source)
        let prepared = try Model(contentsOf: compiled)
        let onnx = try #require(prepared.implementation as? ONNXModel)
        #expect(onnx.nodeCount == (original.implementation as? ONNXModel)?.nodeCount)
        let input = try Tensor(npyFile: try ONNXFixture.url("resnet_tiny_input.npy"))
        let a = try await original.prediction(from: ["input": input])
        let b = try await prepared.prediction(from: ["input": input])
        for (name, tensor) in a {
            let x = try await tensor.shapedArray(of: Float.self).scalars
            let y = try await #require(b[name]).shapedArray(of: Float.self).scalars
            #expect(x == y, "\(name)")
        }
        // Compiling the same content again reuses the cache.
        let again = try await Model.compileModel(at: source)
        defer { try? FileManager.default.removeItem(at: again.deletingLastPathComponent()) }
        #expect(try Data(contentsOf: again.appendingPathComponent("model.onnx"))
            == Data(contentsOf: compiled.appendingPathComponent("model.onnx")))
    }

    @Test func contentHashesAreSHA256() {
        func digest(_ bytes: [UInt8]) -> String {
            var hasher = SHA256()
            bytes.withUnsafeBytes { hasher.update($0) }
            return hasher.hexDigest()
        }
        #expect(digest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(digest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Fed in pieces that straddle blocks: one million 'a's (FIPS 180-2's third example).
        var hasher = SHA256()
        let piece = [UInt8](repeating: 0x61, count: 999)
        for _ in 0..<1001 { piece.withUnsafeBytes { hasher.update($0) } }
        [UInt8](repeating: 0x61, count: 1).withUnsafeBytes { hasher.update($0) }
        #expect(hasher.hexDigest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// A model whose weights are already external data compiles too: the bytes move into
    /// `weights.bin`.
    @Test func compilingExternalDataMovesItIntoTheWeightsFile() async throws {
        let compiled = try await Model.compileModel(at: try ONNXFixture.url("external_data.onnx"))
        defer { try? FileManager.default.removeItem(at: compiled.deletingLastPathComponent()) }
        let weights = try Data(contentsOf: compiled.appendingPathComponent("weights.bin"))
        #expect(weights.count == 48)
        let model = try Model(contentsOf: compiled)
        let x = try ONNXFixture.array("external_data_x")
        let y = try await #require(try await model.prediction(from: ["x": x])["y"]).shapedArray(of: Float.self)
        let reference = try ONNXFixture.array("external_data_y").evaluatedArray()
        #expect(Self.maximumDifference(y.scalars, reference.scalars) < 1e-5)
    }

    /// The seed's MLComputePlan walk with the `ML` prefixes dropped, over a real CNN.
    @Test func seedComputePlanWalkPrintsTheModelsOperations() async throws {
        let url = try ONNXFixture.url("resnet_tiny.onnx")
        let config = ModelConfiguration()
        config.computeUnits = .all
        let computePlan = try await ComputePlan.load(contentsOf: url, configuration: config)

        guard case let .program(program) = computePlan.modelStructure,
            let mainFunction = program.functions["main"]
        else {
            Issue.record("Model is not an ML program or has no main function")
            return
        }
        var lines: [String] = []
        var weights = 0.0
        for operation in mainFunction.block.operations {
            let opName = operation.operatorName
            if let deviceUsage = computePlan.deviceUsage(for: operation) {
                lines.append("  \(opName): \(deviceUsage.preferredComputeDevice)")
            }
            if let cost = computePlan.estimatedCost(of: operation) {
                lines.append("    Estimated weight: \(cost.weight)")
                weights += cost.weight
            }
        }
        let convolutions = mainFunction.block.operations.filter { $0.operatorName == "Conv" }
        #expect(convolutions.count >= 10)
        #expect(convolutions.allSatisfy { computePlan.deviceUsage(for: $0) != nil })
        #expect(convolutions.first?.inputs["input1"]?.bindings.count == 1)
        #expect(abs(weights - 1) < 1e-6, "weights sum to \(weights)")
        #expect(lines.contains { $0.contains("Conv: cpu") || $0.contains("Conv: gpu") })
        #expect(mainFunction.inputs.first?.shape == [1, 3, 32, 32])
    }

    /// The seed's streaming pattern: an `AsyncStream` of inputs to an `AsyncStream` of outputs.
    @Test func seedStreamingPredictions() async throws {
        let model = try await Model.load(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"))
        let input = try Self.tinyInput()
        let frames = AsyncStream<MultiArray> { continuation in
            for _ in 0..<5 { continuation.yield(input) }
            continuation.finish()
        }
        func classifyFrames(_ frames: AsyncStream<MultiArray>) async throws -> AsyncStream<String> {
            return AsyncStream { continuation in
                Task {
                    for await frame in frames {
                        let input = try DictionaryFeatureProvider(dictionary: [
                            "x": FeatureValue(multiArray: frame)
                        ])
                        let output = try await model.prediction(from: input)
                        let label = output.featureValue(for: "y")?.shapedArrayValue(of: Float.self)
                            .map { $0.scalars.prefix(3).firstIndex(of: $0.scalars.prefix(3).max() ?? 0) ?? -1 }
                        continuation.yield("class \(label ?? -1)")
                    }
                    continuation.finish()
                }
            }
        }
        var labels: [String] = []
        for await label in try await classifyFrames(frames) { labels.append(label) }
        #expect(labels == Array(repeating: "class 0", count: 5))
    }
}

extension Tensor {
    /// The tensor's values, evaluated on the calling thread (test support).
    func evaluatedArray() throws -> ShapedArray<Float> {
        guard let array = FeatureValue.tensor(self).shapedArrayValue(of: Float.self) else {
            throw ONNXFixture.Missing(description: "the tensor did not evaluate to Float values")
        }
        return array
    }
}
