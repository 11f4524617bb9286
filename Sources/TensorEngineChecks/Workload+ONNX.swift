import Foundation
import TensorEngine

/// An ONNX model workload: its inputs made once (untimed: the `minilm-*` sentences tokenized with
/// the model's uncased BERT vocabulary, or an image), then each run is one
/// ``ONNXModel/prediction(from:policy:)`` with every output read back.
package struct ONNXWorkload: Sendable {
    /// Which export runs.
    package enum Export: Sendable, Hashable {
        /// paraphrase-MiniLM-L3-v2 (a torch 2.3 export, from PyPI; scripts/fetch-onnx-model.sh).
        case miniLML3
        /// all-MiniLM-L6-v2 exported by scripts/export_minilm_onnx.py (needs torch).
        case miniLML6
        /// `bench/models/NAME.onnx`, written by bench/make_models.py (committed).
        case bench(String)
        /// ONNX's light model `light/light_NAME.onnx` (scripts/fetch-onnx-tests.sh).
        case light(String)
        /// A test fixture `Tests/TensorEngineTests/Fixtures/onnx/NAME.onnx` (committed).
        case fixture(String)

        /// The export's part of a workload name (`l3`, `conv3x3-64`, `light-resnet50`).
        package var key: String {
            switch self {
            case .miniLML3: "l3"
            case .miniLML6: "l6"
            case .bench(let name): name
            case .light(let name): "light-\(name)"
            case .fixture(let name): name
            }
        }

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
            case .bench(let name):
                // From the current directory (the repository root), else beside these sources.
                let relative = "bench/models/\(name).onnx"
                if FileManager.default.fileExists(atPath: relative) { return URL(fileURLWithPath: relative) }
                return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent(relative)
            case .light(let name):
                return ONNXConformance.directory().appendingPathComponent("light/light_\(name).onnx")
            case .fixture(let name):
                let relative = "Tests/TensorEngineTests/Fixtures/onnx/\(name).onnx"
                if FileManager.default.fileExists(atPath: relative) { return URL(fileURLWithPath: relative) }
                return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent(relative)
            }
        }

        var howToGet: String {
            switch self {
            case .miniLML3: "run scripts/fetch-onnx-model.sh"
            case .miniLML6: "run scripts/fetch-minilm-onnx.sh (the export needs torch)"
            case .bench: "run bench/make_models.py"
            case .light: "run scripts/fetch-onnx-tests.sh"
            case .fixture: "run the fixture script beside it in Tests/TensorEngineTests/Fixtures/onnx"
            }
        }
    }

    /// What the model is fed.
    package enum Inputs: Sendable {
        /// Sentences, tokenized (the tokenizer is all-MiniLM-L6-v2's, the same uncased vocabulary).
        case sentences([String])
        /// Each input standard normal (seeded), in its declared shape.
        case normal
        /// ONNX's runner inputs for the light models: `arange(n) / n` in the declared shape.
        case ramp
        /// `tokens` greedy tokens after a cache of `prefix` tokens, through a stateful model's
        /// `State`: one token is the same step each run; more make every step a new cache length,
        /// as a generation does.
        case decoderStep(prefix: Int, tokens: Int)
    }

    /// How a batch-provider row feeds its sentences: one provider per sentence through
    /// `Model.predictions(from:)` (stacked into one evaluation), or one `prediction(from:)` each.
    package enum Batching: Sendable, Hashable {
        /// `predictions(from: ArrayBatchProvider)`: stacked, padded under the mask, split back.
        case stacked
        /// One `prediction(from:)` per sentence, in order.
        case oneByOne
    }

    package let export: Export
    package let inputs: Inputs
    /// For a row of Core ML's batch API, how the sentences are fed; `nil` for one tensor batch.
    package var batching: Batching? = nil

    /// The sentences tokenized one by one, each a provider of `input_ids` and `attention_mask`
    /// `[1, tokens]` (and zero `token_type_ids` when the model reads them).
    package func sentenceProviders(for model: ONNXModel) throws -> [DictionaryFeatureProvider] {
        guard case .sentences(let texts) = inputs else { return [] }
        let tokenizer = try WordPieceTokenizer(folder: SentenceEmbedder.defaultFolder)
        return try texts.map { text in
            let ids = tokenizer.encode(text)
            var tensors = [
                "input_ids": Tensor(ids).reshaped(to: [1, ids.count]),
                "attention_mask": Tensor(repeating: Int32(1), shape: [1, ids.count]),
            ]
            if model.inputFeatureNames.contains("token_type_ids") {
                tensors["token_type_ids"] = Tensor(zerosOf: .int32, shape: [1, ids.count])
            }
            tensors = Self.typed(tensors, for: model)
            try Tensor.evaluateNow(Array(tensors.values))
            return DictionaryFeatureProvider(tensors: tensors)
        }
    }

    /// The model and its inputs; throws ``ONNXModelMissing`` when the model file is absent.
    package func load() throws -> (ONNXModel, [String: Tensor]) {
        guard FileManager.default.fileExists(atPath: export.url.path) else {
            throw ONNXModelMissing(url: export.url, remedy: export.howToGet)
        }
        let model = try ONNXModel(contentsOf: export.url)
        let sentences: [String]
        switch inputs {
        case .sentences(let texts): sentences = texts
        case .decoderStep(let prefix, _):
            // The step's graph: one token after `prefix` cached ones (zeros: planning needs shapes).
            var feeds: [String: Tensor] = [:]
            for description in model.inputDescriptions {
                let stateful = model.statePairs.contains { $0.input == description.name }
                let type = description.multiArrayConstraint?.dataType ?? .float32
                let shape = (description.multiArrayConstraint?.shape ?? []).enumerated().map { axis, dimension in
                    if case .fixed(let size) = dimension { return size }
                    return stateful && axis == 2 ? prefix : 1
                }
                feeds[description.name] = Tensor(zerosOf: type, shape: shape)
            }
            try Tensor.evaluateNow(Array(feeds.values))
            return (model, feeds)
        case .normal, .ramp:
            let ramp = if case .ramp = inputs { true } else { false }
            let feeds = ONNXConformance.runnerInputs(of: model, ramp: ramp)
            try Tensor.evaluateNow(Array(feeds.values))
            return (model, feeds)
        }
        let tokenizer = try WordPieceTokenizer(folder: SentenceEmbedder.defaultFolder)
        let batch = tokenizer.encodeBatch(sentences)
        var inputs: [String: Tensor] = ["input_ids": batch.ids, "attention_mask": batch.mask.cast(to: Int32.self)]
        if model.inputFeatureNames.contains("token_type_ids") {
            inputs["token_type_ids"] = Tensor(zerosOf: .int32, shape: batch.ids.shape)
        }
        inputs = Self.typed(inputs, for: model)
        try Tensor.evaluateNow(Array(inputs.values))
        return (model, inputs)
    }

    /// Token tensors in the model's own integer type (an export's `int64`), made once here so
    /// that a timed prediction gets what onnxruntime gets and converts nothing.
    private static func typed(_ tensors: [String: Tensor], for model: ONNXModel) -> [String: Tensor] {
        tensors.reduce(into: [:]) { typed, entry in
            let wanted = model.inputDescriptionsByName[entry.key]?.multiArrayConstraint?.dataType
            typed[entry.key] = wanted == .int64 && entry.value.dtype == .int32 ? entry.value.cast(to: Int64.self) : entry.value
        }
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
            name: "onnx-minilm-\(export.key)-b\(texts.count)",
            summary:
                "\(model) ONNX export on \(texts.count) tokenized sentence\(texts.count == 1 ? "" : "s"), every output read back",
            quick: quick, reference: .none, essentialBytes: layers * layerParameters * 4, flops: flops,
            body: .onnxModel(ONNXWorkload(export: export, inputs: .sentences(texts))))
    }

    /// paraphrase-MiniLM-L3-v2 through Core ML's batch API on the 32 `minilm-b32` sentences, one
    /// provider each: stacked into one evaluation, or predicted one by one (the pair of rows is
    /// the batching speedup).
    static func onnxModelBatch(_ batching: ONNXWorkload.Batching) -> Workload {
        let texts = MiniLMSentences.batch.sentences
        let layerParameters = 4 * 384 * 384 + 2 * 384 * 1536
        let flops = 2.0 * Double(texts.count * 20) * 3 * Double(layerParameters)
        let mode = batching == .stacked ? "batch" : "onebyone"
        var workload = ONNXWorkload(export: .miniLML3, inputs: .sentences(texts))
        workload.batching = batching
        return Workload(
            name: "model-\(mode)-l3-b\(texts.count)",
            summary: "paraphrase-MiniLM-L3-v2 through Model."
                + (batching == .stacked
                    ? "predictions(from:) on \(texts.count) providers (stacked into one evaluation)"
                    : "prediction(from:) on each of \(texts.count) providers"),
            quick: false, reference: .none, essentialBytes: 3 * layerParameters * 4, flops: flops,
            body: .onnxModel(workload))
    }

    /// One greedy step of the GPT-style decoder fixture through `Model.prediction(from:using:)`, in a
    /// generation that continues from run to run: each step's cache is one longer than the last,
    /// from `prefix` (made untimed) up to `prefix` + 199, then the generation starts over.
    static func decoderStep(prefix: Int) -> Workload {
        // Per layer: the 32×96, 32×32, 32×128 and 128×32 products of one token, and attention
        // over prefix + 1 keys; the head's 32×50 product.
        let layer = 2.0 * (32 * 96 + 32 * 32 + 32 * 128 + 128 * 32) + 4.0 * 32 * Double(prefix + 1)
        return Workload(
            name: "model-decoder-step-p\(prefix)",
            summary: "one greedy token of the GPT-style decoder fixture, a cache of \(prefix) to \(prefix + 199) growing, through a State",
            quick: false, reference: .none, essentialBytes: 2 * 2 * 4 * 8 * (prefix + 1) * 4,
            flops: 2 * layer + 2.0 * 32 * 50,
            body: .onnxModel(ONNXWorkload(export: .fixture("decoder_tiny"), inputs: .decoderStep(prefix: prefix, tokens: 1))))
    }

    /// The number of tokens one run of a generation row produces.
    package static let generatedTokens = 16

    /// A greedy generation of ``generatedTokens`` tokens by the decoder fixture after a KV cache of
    /// `prefix` tokens: each step's cache is one longer than the last (a new input shape), and each
    /// step reads its logits back to choose the next token, as a user's loop does.
    static func decoderGeneration(prefix: Int) -> Workload {
        let tokens = generatedTokens
        var flops = 0.0
        for step in 0..<tokens {
            flops += 2 * (2.0 * (32 * 96 + 32 * 32 + 32 * 128 + 128 * 32) + 4.0 * 32 * Double(prefix + step + 1))
            flops += 2.0 * 32 * 50
        }
        return Workload(
            name: "model-decoder-generate-p\(prefix)",
            summary: "\(tokens) greedy tokens of the GPT-style decoder fixture after a cache of \(prefix), through a State",
            quick: false, reference: .none, essentialBytes: tokens * 2 * 2 * 4 * 8 * (prefix + tokens) * 4, flops: flops,
            body: .onnxModel(
                ONNXWorkload(export: .fixture("decoder_tiny"), inputs: .decoderStep(prefix: prefix, tokens: tokens))))
    }

    /// A convolutional model on one image: `bench/models/NAME.onnx` on a standard normal input,
    /// or a light model on ONNX's runner input; FLOPs and bytes as bench/make_models.py
    /// counts them (2·outputs·C/groups·kernel per convolution; weights, input and output once).
    static func onnxImage(
        _ export: ONNXWorkload.Export, summary: String, flops: Double, bytes: Int, quick: Bool
    ) -> Workload {
        let inputs: ONNXWorkload.Inputs = if case .light = export { .ramp } else { .normal }
        return Workload(
            name: "onnx-\(export.key)", summary: summary, quick: quick, reference: .none, essentialBytes: bytes, flops: flops,
            body: .onnxModel(ONNXWorkload(export: export, inputs: inputs)))
    }

    /// The convolution workloads, each beside an onnxruntime row of bench/peers.py.
    static let convolutions: [Workload] = [
        onnxImage(
            .bench("conv3x3-64"), summary: "ONNX Conv 3×3 64→64, padding 1, on [1, 64, 56, 56], with bias",
            flops: 231_211_008, bytes: 1_753_344, quick: true),
        onnxImage(
            .bench("conv1x1-256"), summary: "ONNX Conv 1×1 256→64 on [1, 256, 56, 56], with bias",
            flops: 102_760_448, bytes: 4_079_872, quick: false),
        onnxImage(
            .bench("depthwise3x3-32"), summary: "ONNX depthwise Conv 3×3 (32 groups), padding 1, on [1, 32, 112, 112]",
            flops: 7_225_344, bytes: 3_212_544, quick: false),
        onnxImage(
            .bench("resnet-block-64"),
            summary: "ONNX ResNet basic block (conv-BN-relu-conv-BN-add-relu) on [1, 64, 56, 56]",
            flops: 462_422_016, bytes: 1_903_104, quick: false),
        onnxImage(
            .light("resnet50"), summary: "ONNX light ResNet50 (constant weights) on [1, 3, 224, 224]",
            flops: 8_174_272_512, bytes: 103_046_720, quick: false),
        onnxImage(
            .light("squeezenet"), summary: "ONNX light SqueezeNet (constant weights) on [1, 3, 224, 224]",
            flops: 698_303_872, bytes: 5_548_096, quick: false),
    ]
}
