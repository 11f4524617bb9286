import Foundation
import Testing
@testable import TensorEngine

/// Where the model tests find all-MiniLM-L6-v2 and its reference outputs.
enum ModelFixture {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The model folder: `$TENSORENGINE_MODEL_DIR`, else `~/.cache/tensorengine/models/all-MiniLM-L6-v2`.
    /// Throws (failing the test, never skipping it) when the model is absent.
    static func folder() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["TENSORENGINE_MODEL_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/tensorengine/models/all-MiniLM-L6-v2").path
        let url = URL(fileURLWithPath: path)
        for file in ["config.json", "model.safetensors", "vocab.txt"] where !FileManager.default.fileExists(atPath: url.appendingPathComponent(file).path) {
            throw Missing(description: "all-MiniLM-L6-v2 is missing (\(file) not found in \(path)); run scripts/fetch-model.sh to fetch it (or set TENSORENGINE_MODEL_DIR)")
        }
        return url
    }

    /// The reference sentences and token ids written by `Fixtures/make_minilm_reference.py`.
    struct Reference: Decodable {
        var sentences: [String]
        var token_ids: [[Int32]]
        var max_seq_length: Int
    }

    static func reference() throws -> Reference {
        guard let url = Bundle.module.url(forResource: "minilm_reference", withExtension: "json", subdirectory: "Fixtures") else {
            throw Missing(description: "Fixtures/minilm_reference.json is not in the test bundle")
        }
        return try JSONDecoder().decode(Reference.self, from: Data(contentsOf: url))
    }

    /// The reference embeddings, `[n, 384]`.
    static func embeddings() throws -> ShapedArray<Float> {
        guard let url = Bundle.module.url(forResource: "minilm_embeddings", withExtension: "npy", subdirectory: "Fixtures") else {
            throw Missing(description: "Fixtures/minilm_embeddings.npy is not in the test bundle")
        }
        return try ShapedArray<Float>(npyFile: url)
    }
}
