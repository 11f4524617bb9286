import Foundation
import Testing
@testable import TensorEngine

@Suite("BERT loading") struct BERTLoadingTests {
    func folder(config: String) throws -> URL {
        let url = temporaryURL("model")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(config.utf8).write(to: url.appendingPathComponent("config.json"))
        return url
    }

    @Test func readsTheMiniLMConfiguration() throws {
        let configuration = try BERTConfiguration(url: try ModelFixture.folder().appendingPathComponent("config.json"))
        #expect(configuration.hiddenSize == 384)
        #expect(configuration.layerCount == 6)
        #expect(configuration.headCount == 12)
        #expect(configuration.headSize == 32)
        #expect(configuration.intermediateSize == 1536)
        #expect(configuration.vocabularySize == 30522)
        #expect(configuration.layerNormEpsilon == 1e-12)
    }

    @Test(arguments: [
        ("{", FileFormatError.Kind.badJSON),
        (#"{"hidden_size": 384}"#, .missingEntry),
        (#"{"vocab_size": 10, "hidden_size": 10, "num_hidden_layers": 1, "num_attention_heads": 3, "intermediate_size": 4}"#, .badHeader),
        (#"{"vocab_size": -1, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 4}"#, .badHeader),
        (#"{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 4, "hidden_act": "relu"}"#, .unsupportedDType),
    ])
    func rejectsBadConfiguration(_ config: String, _ kind: FileFormatError.Kind) throws {
        let url = try folder(config: config)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect { try BERTConfiguration(url: url.appendingPathComponent("config.json")) } throws: { ($0 as? FileFormatError)?.kind == kind }
    }

    @Test func rejectsWeightsThatDoNotMatchTheConfiguration() throws {
        let url = try folder(config: #"{"vocab_size": 10, "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 4}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        let header = #"{"bert.embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [10, 4], "data_offsets": [0, 160]}}"#
        try safetensorsBytes(header: header, data: Array(repeating: 0, count: 160)).write(to: url.appendingPathComponent("model.safetensors"))
        #expect { try BERTEncoder(folder: url) } throws: { ($0 as? FileFormatError)?.kind == .invalidShape }
        try safetensorsBytes(header: #"{"other": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}"#, data: [0, 0, 0, 0]).write(to: url.appendingPathComponent("model.safetensors"))
        #expect { try BERTEncoder(folder: url) } throws: { ($0 as? FileFormatError)?.kind == .missingEntry }
    }

    @Test func usesTheMappedMiniLMWeightsWithoutCopying() throws {
        let encoder = try BERTEncoder(folder: try ModelFixture.folder())
        #expect(encoder.weights.wordEmbeddings.isBorrowingMemory)
        #expect(encoder.weights.layers.allSatisfy { $0.intermediate.weight.isBorrowingMemory && $0.outputNorm.scale.isBorrowingMemory })
    }

    @Test func missingModelFolderIsATypedError() {
        #expect(throws: FileFormatError.self) { try SentenceEmbedder(folder: URL(fileURLWithPath: "/nonexistent/model")) }
    }

    @Test func rejectsSequencesLongerThanThePositionTable() throws {
        let encoder = try BERTEncoder(folder: try ModelFixture.folder())
        let ids = Tensor(zeros: [1, 513], scalarType: Int32.self)
        let result = encoder.hiddenStates(ids: ids, mask: Tensor(ones: [1, 513]))
        #expect(result.error?.kind == .invalidArgument)
    }
}
