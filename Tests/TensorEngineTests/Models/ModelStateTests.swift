import Foundation
import Testing

@testable import TensorEngine

/// The GPT-style decoder fixture (make_onnx_decoder_fixtures.py): onnxruntime's logits for a prompt
/// and six cached steps, and for the uncached run over the whole sequence.
struct DecoderFixture {
    let url: URL
    let prompt: [Int32]
    let greedyTokens: [Int32]
    let uncachedSequence: [Int32]
    let stepLogits: ShapedArray<Float>  // [7, 50]
    let uncachedLogits: ShapedArray<Float>  // [1, 11, 50]

    init() throws {
        url = try ONNXFixture.url("decoder_tiny.onnx")
        let json = try Data(contentsOf: try ONNXFixture.url("decoder_reference.json"))
        guard let reference = try JSONSerialization.jsonObject(with: json) as? [String: Any],
            let prompt = reference["prompt"] as? [Int], let greedy = reference["greedy_tokens"] as? [Int],
            let sequence = reference["uncached_sequence"] as? [Int]
        else { throw ONNXFixture.Missing(description: "decoder_reference.json lacks prompt or tokens") }
        self.prompt = prompt.map { Int32($0) }
        greedyTokens = greedy.map { Int32($0) }
        uncachedSequence = sequence.map { Int32($0) }
        stepLogits = try ONNXFixture.array("decoder_step_logits").evaluatedArray()
        uncachedLogits = try ONNXFixture.array("decoder_uncached_logits").evaluatedArray()
    }

    /// `input_ids [1, tokens]` as a provider.
    static func input(_ tokens: [Int32]) throws -> DictionaryFeatureProvider {
        let ids = try MultiArray(shape: [1, NSNumber(value: tokens.count)], dataType: .int32)
        for (index, token) in tokens.enumerated() { ids[index] = NSNumber(value: token) }
        return try DictionaryFeatureProvider(dictionary: ["input_ids": ids])
    }

    /// The last position's logits of an output, and its argmax.
    static func lastLogits(_ output: any FeatureProvider) throws -> (logits: [Float], token: Int32) {
        let logits = try #require(output.featureValue(for: "logits")?.shapedArrayValue(of: Float.self))
        let vocabulary = logits.shape.last ?? 0
        let last = Array(logits.scalars.suffix(vocabulary))
        let token = last.indices.max { last[$0] < last[$1] } ?? -1
        return (last, Int32(token))
    }
}

/// The seed's MLState audio-classifier actor with the `ML` prefixes dropped, classifying the next
/// token of a sequence with the decoder's cache as its accumulated context.
actor StreamClassifier {
    private let model: Model
    private var state: State?

    init(model: Model) {
        self.model = model
    }

    func beginSession() {
        state = model.makeState()
    }

    func classify(features: MultiArray) async throws -> String {
        guard let state else {
            throw ClassifierError.noActiveSession
        }
        let input = try DictionaryFeatureProvider(dictionary: [
            "input_ids": FeatureValue(multiArray: features)
        ])
        let output = try await model.prediction(from: input, using: state)
        return "token \(try DecoderFixture.lastLogits(output).token)"
    }

    func endSession() {
        state = nil
    }
}

enum ClassifierError: Error {
    case noActiveSession
}

@Suite("Stateful models") struct ModelStateTests {
    @Test func describesTheCacheAsState() async throws {
        let fixture = try DecoderFixture()
        let model = try await Model.load(contentsOf: fixture.url)
        let description = model.modelDescription
        #expect(description.inputDescriptions.map(\.name) == ["input_ids"])
        #expect(description.outputDescriptions.map(\.name) == ["logits"])
        #expect(
            Set(description.stateDescriptionsByName.keys)
                == Set((0..<2).flatMap { ["past_key_values.\($0).key", "past_key_values.\($0).value"] }))
        #expect(description.stateDescriptions.allSatisfy { $0.type == .state })
        let onnx = try #require(model.implementation as? ONNXModel)
        #expect(onnx.statePairs.contains(StatePair(output: "present.1.value", input: "past_key_values.1.value")))
    }

    /// Token by token with a state, on every policy: each step's logits match onnxruntime's, and the
    /// greedy tokens match; the cache holds the whole sequence afterwards.
    @Test func cachedStepsMatchOnnxruntime() async throws {
        let fixture = try DecoderFixture()
        let model = try Model(contentsOf: fixture.url)
        for policy in ONNXFixture.policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let state = model.makeState()
            var tokens: [Int32] = []
            var input = fixture.prompt
            for step in 0..<7 {
                let output = try await model.prediction(from: try DecoderFixture.input(input), using: state, options: options)
                #expect(output.featureNames == ["logits"])
                let (logits, token) = try DecoderFixture.lastLogits(output)
                let reference = fixture.stepLogits[step].scalars
                let difference = zip(logits, reference).map { Swift.abs($0 - $1) }.max() ?? 1
                #expect(difference <= 1e-4, "\(policy) step \(step): \(difference)")
                tokens.append(token)
                input = [token]
            }
            #expect(tokens == fixture.greedyTokens, "\(policy)")
            var cacheShape: [Int] = []
            state.withMultiArray(for: "past_key_values.0.key") { cacheShape = $0.intShape }
            #expect(cacheShape == [1, 4, fixture.prompt.count + 6, 8])
        }
    }

    /// The cache grows in place: every step appends to the buffer the last one left (a new buffer
    /// only when the capacity doubles), and on a device the cache stays there between steps.
    @Test func cacheGrowsInPlaceOnItsDevice() async throws {
        let fixture = try DecoderFixture()
        let model = try Model(contentsOf: fixture.url)
        var policies: [ComputePolicy] = [.only(.naive), .cpuOnly]
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.only(.opencl)) }
        for policy in policies {
            let options = PredictionOptions()
            options.computePolicy = policy
            let state = model.makeState()
            var input = fixture.prompt
            var buffers: [ObjectIdentifier] = []
            for step in 0..<14 {
                let output = try await model.prediction(from: try DecoderFixture.input(input), using: state, options: options)
                if step < fixture.greedyTokens.count {
                    let (logits, token) = try DecoderFixture.lastLogits(output)
                    let difference = zip(logits, fixture.stepLogits[step].scalars).map { Swift.abs($0 - $1) }.max() ?? 1
                    #expect(difference <= 1e-4, "\(policy) step \(step): \(difference)")
                    #expect(token == fixture.greedyTokens[step])
                }
                input = [try DecoderFixture.lastLogits(output).token]
                let held = try #require(state.held("past_key_values.1.value")?.node?.storedResult)
                #expect(held.shape == [1, 4, fixture.prompt.count + step, 8])
                if buffers.last != ObjectIdentifier(held.buffer) { buffers.append(ObjectIdentifier(held.buffer)) }
                if policy == .only(.opencl) { #expect(held.memorySpace != .host, "step \(step): the cache left the device") }
            }
            // Lengths 5...18: capacity 16 from the prompt, 32 from length 17.
            #expect(buffers.count == 2, "\(policy): \(buffers.count) buffers")
            let final = try #require(state.held("past_key_values.1.value")?.node?.storedResult)
            #expect(final.buffer.growth?.capacityShape == [1, 4, 32, 8])
            // Read back as a row-major host tensor.
            let copy = try #require(state.tensor(for: "past_key_values.1.value"))
            #expect(copy.shape == [1, 4, 18, 8])
            #expect(copy.node?.storedResult?.memorySpace == .host)
            #expect(copy.node?.storedResult?.layout.isRowMajor(shape: [1, 4, 18, 8]) == true)
        }
    }

    /// The whole sequence at once, without a state (a fresh one each prediction), matches the
    /// cached steps' logits position by position.
    @Test func uncachedRunMatchesTheCachedSteps() async throws {
        let fixture = try DecoderFixture()
        let model = try Model(contentsOf: fixture.url)
        let output = try await model.prediction(from: try DecoderFixture.input(fixture.uncachedSequence))
        let logits = try #require(output.featureValue(for: "logits")?.shapedArrayValue(of: Float.self))
        #expect(logits.shape == fixture.uncachedLogits.shape)
        let difference = zip(logits.scalars, fixture.uncachedLogits.scalars).map { Swift.abs($0 - $1) }.max() ?? 1
        #expect(difference <= 1e-4)
        let vocabulary = logits.shape[2]
        for step in 0..<7 {
            let row = Array(logits.scalars[(fixture.prompt.count - 1 + step) * vocabulary..<(fixture.prompt.count + step) * vocabulary])
            let token = Int32(row.indices.max { row[$0] < row[$1] } ?? -1)
            #expect(token == fixture.greedyTokens[step], "position \(fixture.prompt.count - 1 + step)")
        }
    }

    @Test func seedStatefulActorPattern() async throws {
        let fixture = try DecoderFixture()
        let classifier = StreamClassifier(model: try await Model.load(contentsOf: fixture.url))
        let prompt = try MultiArray(shape: [1, NSNumber(value: fixture.prompt.count)], dataType: .int32)
        for (index, token) in fixture.prompt.enumerated() { prompt[index] = NSNumber(value: token) }
        await #expect(throws: ClassifierError.self) { try await classifier.classify(features: prompt) }
        await classifier.beginSession()
        #expect(try await classifier.classify(features: prompt) == "token \(fixture.greedyTokens[0])")
        let next = try MultiArray([fixture.greedyTokens[0]])
        let step = try MultiArray(shape: [1, 1], dataType: .int32)
        step[0] = next[0]
        #expect(try await classifier.classify(features: step) == "token \(fixture.greedyTokens[1])")
        await classifier.endSession()
        await classifier.beginSession()  // a new session starts over
        #expect(try await classifier.classify(features: prompt) == "token \(fixture.greedyTokens[0])")
    }

    @Test func stateWritesAndBadNamesAreSafe() throws {
        let fixture = try DecoderFixture()
        let model = try Model(contentsOf: fixture.url)
        let state = model.makeState()
        var shape: [Int] = []
        state.withMultiArray(for: "past_key_values.1.value") { shape = $0.intShape }
        #expect(shape == [1, 4, 0, 8])  // an empty cache before the first step
        var unknown: [Int] = []
        state.withMultiArray(for: "no such state") { unknown = $0.intShape }
        #expect(unknown == [0])
        _ = try model.prediction(from: try DecoderFixture.input(fixture.prompt), using: state)
        state.withMultiArray(for: "past_key_values.0.key") { array in
            for index in 0..<array.count { array[index] = 0 }
        }
        let zeroed = try #require(state.tensor(for: "past_key_values.0.key"))
        #expect(try MultiArray(zeroed)[0].floatValue == 0)
        let stateless = try Model(contentsOf: try ONNXFixture.url("tiny_mlp.onnx"))
        #expect(throws: ModelError.self) {
            try stateless.prediction(from: DictionaryFeatureProvider([:]), using: stateless.makeState())
        }
    }
}
