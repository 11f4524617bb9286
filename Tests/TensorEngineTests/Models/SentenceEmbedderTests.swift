import Foundation
import Testing
@testable import TensorEngine

/// Cosine similarity and largest absolute difference of two vectors.
func compare(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> (cosine: Double, maxDifference: Float) {
    var (dot, na, nb) = (0.0, 0.0, 0.0)
    var worst: Float = 0
    for (x, y) in zip(a, b) {
        dot += Double(x) * Double(y)
        na += Double(x) * Double(x)
        nb += Double(y) * Double(y)
        worst = Swift.max(worst, Swift.abs(x - y))
    }
    return (dot / Swift.max((na * nb).squareRoot(), 1e-30), worst)
}

/// The reference sentences whose embeddings a policy is checked on: all of them, except on the
/// naive backend alone, whose plain loops need about 0.1 s per token in a release build and 0.8 s
/// in a debug one (all 24 reference sentences, 1 400 padded tokens, would take minutes): it is
/// checked on the ten of at most 13 tokens (accents and CJK among them).
func referenceSubset(for policy: ComputePolicy, _ reference: ModelFixture.Reference) -> [Int] {
    policy == .only(.naive) ? reference.token_ids.indices.filter { reference.token_ids[$0].count <= 13 } : Array(reference.token_ids.indices)
}

/// Every policy that can run here: each available backend alone, and the planner's choice.
func availablePolicies() -> [ComputePolicy] {
    Engine.shared.backends.map { ComputePolicy.only($0.id) } + (Engine.shared.backends.count > 1 ? [.all] : [])
}

@Suite("SentenceEmbedder", .serialized) struct SentenceEmbedderTests {
    static let embedder: Result<SentenceEmbedder, any Error> = Result { try SentenceEmbedder(folder: try ModelFixture.folder()) }

    @Test(arguments: availablePolicies())
    func matchesSentenceTransformersEmbeddings(policy: ComputePolicy) async throws {
        let embedder = try SentenceEmbedderTests.embedder.get()
        let reference = try ModelFixture.reference()
        let expected = try ModelFixture.embeddings()
        #expect(expected.shape == [reference.sentences.count, 384])
        let subset = referenceSubset(for: policy, reference)
        let start = ContinuousClock.now
        let actual = try await embedder.embed(subset.map { reference.sentences[$0] }, policy: policy)
        let elapsed = ContinuousClock.now - start
        #expect(actual.shape == [subset.count, 384])
        var worstCosine = 1.0
        var worstDifference: Float = 0
        for (row, index) in subset.enumerated() {
            let (cosine, difference) = compare(actual.scalars[row * 384..<(row + 1) * 384], expected.scalars[index * 384..<(index + 1) * 384])
            worstCosine = Swift.min(worstCosine, cosine)
            worstDifference = Swift.max(worstDifference, difference)
            #expect(cosine >= 0.9999 && difference <= 1e-4, "\(policy) sentence \(index) \(reference.sentences[index].prefix(40).debugDescription): cosine \(cosine), max |diff| \(difference)")
        }
        print("SentenceEmbedder \(policy): \(subset.count) sentences in \(elapsed); worst cosine \(worstCosine), worst max |diff| \(worstDifference)")
    }

    /// Each reference sentence embedded alone, so that sentences of one token count share the
    /// plan prepared by the first of them (run again with the others' ids and mask): every one
    /// still matches its own sentence-transformers embedding, not the first one's.
    @Test(arguments: availablePolicies().filter { $0 != .only(.naive) })
    func preparedPlansTakeEachBatchsOwnTokens(policy: ComputePolicy) async throws {
        let embedder = try SentenceEmbedder(folder: try ModelFixture.folder())
        let reference = try ModelFixture.reference()
        let expected = try ModelFixture.embeddings()
        let counts = reference.token_ids.map(\.count)
        let shared = Set(counts.filter { count in counts.filter { $0 == count }.count > 1 })
        try #require(!shared.isEmpty, "the reference needs two sentences of one token count")
        for (index, sentence) in reference.sentences.enumerated() {
            let actual = try await embedder.embed([sentence], policy: policy)
            let (cosine, difference) = compare(actual.scalars[...], expected.scalars[index * 384..<(index + 1) * 384])
            #expect(
                cosine >= 0.9999 && difference <= 1e-4,
                "\(policy) sentence \(index) (\(counts[index]) tokens): cosine \(cosine), max |diff| \(difference)")
        }
    }

    @Test func predictionsShareOneBatchAndMatchEmbed() async throws {
        let embedder = try SentenceEmbedderTests.embedder.get()
        let model = Model(implementation: embedder)
        let texts = ["A man is eating food.", "Hi"]
        let outputs = try await model.predictions(from: texts.map { DictionaryFeatureProvider([SentenceEmbedder.textFeature: .string($0)]) })
        #expect(outputs.count == 2)
        let direct = try await embedder.embed(texts, policy: .only(.naive))
        for (row, output) in outputs.enumerated() {
            #expect(output.featureNames == Set(model.modelDescription.outputDescriptionsByName.keys))
            let tensor = try #require(output.featureValue(for: SentenceEmbedder.embeddingFeature)?.tensorValue)
            let values = try await tensor.shapedArray(of: Float.self).scalars
            let (cosine, difference) = compare(values[...], direct.scalars[row * 384..<(row + 1) * 384])
            #expect(cosine > 0.99999 && difference < 1e-5)
            let ids = try await #require(output.featureValue(for: SentenceEmbedder.tokenIDsFeature)?.tensorValue).shapedArray(of: Int32.self)
            #expect(ids.scalars == embedder.tokenizer.encode(texts[row]))
        }
        await #expect(throws: ModelInputError.self) { try await model.prediction(from: DictionaryFeatureProvider(tensors: [:])) }
    }
}
