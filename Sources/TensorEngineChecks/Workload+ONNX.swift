import Foundation
import TensorEngine

/// An ONNX model workload: the `minilm-*` sentences tokenized once (untimed, with the model's
/// uncased BERT vocabulary), then each run is one ``ONNXModel/prediction(from:policy:)`` with every
/// output read back.
package struct ONNXWorkload: Sendable {
    /// Which export runs.
    package enum Export: String, Sendable {
        /// paraphrase-MiniLM-L3-v2 (a torch 2.3 export, from PyPI; scripts/fetch-onnx-model.sh).
        case miniLML3 = "l3"
        /// all-MiniLM-L6-v2 exported by scripts/export_minilm_onnx.py (needs torch).
        case miniLML6 = "l6"

        /// Where the model file is.
        package var url: URL {
            let environment = ProcessInfo.processInfo.environment
            switch self {
            case .miniLML3:
                let folder =
                    environment["TENSORENGINE_ONNX_MODEL_DIR"].flatMap { $0.isEmpty ? nil : $0 }
                    ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                        ".cache/tensorengine/models/paraphrase-MiniLM-L3-v2"
                    ).path
                return URL(fileURLWithPath: folder).appendingPathComponent("model.onnx")
            case .miniLML6:
                return SentenceEmbedder.defaultFolder.appendingPathComponent("model.onnx")
            }
        }

        var howToGet: String {
            switch self {
            case .miniLML3: "run scripts/fetch-onnx-model.sh"
            case .miniLML6: "run scripts/fetch-minilm-onnx.sh (the export needs torch)"
            }
        }
    }

    package let export: Export
    package let sentences: [String]

    /// The model and its inputs (the tokenizer is all-MiniLM-L6-v2's, the same uncased vocabulary);
    /// throws ``ONNXModelMissing`` when the model file is absent.
    package func load() throws -> (ONNXModel, [String: Tensor]) {
        guard FileManager.default.fileExists(atPath: export.url.path) else {
            throw ONNXModelMissing(url: export.url, remedy: export.howToGet)
        }
        let model = try ONNXModel(contentsOf: export.url)
        let tokenizer = try WordPieceTokenizer(folder: SentenceEmbedder.defaultFolder)
        let batch = tokenizer.encodeBatch(sentences)
        var inputs: [String: Tensor] = ["input_ids": batch.ids, "attention_mask": batch.mask.cast(to: Int32.self)]
        if model.inputFeatureNames.contains("token_type_ids") {
            inputs["token_type_ids"] = Tensor(zerosOf: .int32, shape: batch.ids.shape)
        }
        try Tensor.evaluateNow(Array(inputs.values))
        return (model, inputs)
    }
}

/// An ONNX workload's model file is absent.
package struct ONNXModelMissing: Error, CustomStringConvertible {
    package let url: URL
    package let remedy: String
    package var description: String { "\(url.path) not found; \(remedy)" }
}

extension Workload {
    /// A MiniLM ONNX export on the `minilm-*` sentences.
    static func onnxMiniLM(_ export: ONNXWorkload.Export, _ sentences: MiniLMSentences, quick: Bool) -> Workload {
        let texts = sentences.sentences
        let layers = export == .miniLML3 ? 3 : 6
        let tokensPerSentence = sentences == .single ? 12 : 20
        let layerParameters = 4 * 384 * 384 + 2 * 384 * 1536
        let flops = 2.0 * Double(texts.count * tokensPerSentence) * Double(layers) * Double(layerParameters)
        let model = export == .miniLML3 ? "paraphrase-MiniLM-L3-v2" : "all-MiniLM-L6-v2"
        return Workload(
            name: "onnx-minilm-\(export.rawValue)-b\(texts.count)",
            summary:
                "\(model) ONNX export on \(texts.count) tokenized sentence\(texts.count == 1 ? "" : "s"), every output read back",
            quick: quick, reference: .none, essentialBytes: layers * layerParameters * 4, flops: flops,
            body: .onnxModel(ONNXWorkload(export: export, sentences: texts)))
    }
}
