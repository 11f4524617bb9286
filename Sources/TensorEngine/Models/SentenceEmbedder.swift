import Foundation

/// Sentence embeddings from a BERT model folder in sentence-transformers' layout (such as
/// all-MiniLM-L6-v2): WordPiece tokenization, the encoder, mean pooling over the attention mask
/// and L2 normalization.
///
/// Sentences are batched internally: sorted by token count so each batch pads little, then
/// returned in the caller's order.
///
/// ```swift
/// let embedder = try SentenceEmbedder(folder: modelFolder)
/// let vectors = try await embedder.embed(["A man is eating food.", "Someone eats."])   // [2, 384]
/// ```
public struct SentenceEmbedder: ModelImplementation {
    /// The tokenizer, from `vocab.txt` and the folder's configuration files.
    public let tokenizer: WordPieceTokenizer
    /// The encoder, from `config.json` and `model.safetensors`.
    public let encoder: BERTEncoder
    /// The most sentences evaluated in one batch.
    public var batchSize: Int
    /// The encoder's plans by batch shape and policy (``computedEmbeddings(of:policy:)``).
    private let preparedBatches = PreparedPredictions()

    /// The input feature: one sentence, a string.
    public static let textFeature = "text"
    /// The output feature: the sentence's normalized embedding, a `Float` tensor `[hiddenSize]`.
    public static let embeddingFeature = "embedding"
    /// The output feature: the sentence's token ids, an `Int32` tensor.
    public static let tokenIDsFeature = "token_ids"

    /// Where the model is looked for by default: `$TENSORENGINE_MODEL_DIR`, else
    /// `~/.cache/tensorengine/models/all-MiniLM-L6-v2` (where `scripts/fetch-model.sh` puts it).
    public static var defaultFolder: URL {
        if let path = ProcessInfo.processInfo.environment["TENSORENGINE_MODEL_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
            ".cache/tensorengine/models/all-MiniLM-L6-v2")
    }

    /// Loads the tokenizer and the encoder from a model folder.
    public init(folder: URL, batchSize: Int = 32) throws(FileFormatError) {
        self.tokenizer = try WordPieceTokenizer(folder: folder)
        self.encoder = try BERTEncoder(folder: folder)
        self.batchSize = Swift.max(1, batchSize)
        guard tokenizer.maximumLength <= encoder.configuration.maximumPositions else {
            throw FileFormatError(
                .badHeader, format: "sentence_bert_config.json", path: folder.path,
                message:
                    "max_seq_length \(tokenizer.maximumLength) exceeds the model's \(encoder.configuration.maximumPositions) positions"
            )
        }
    }

    /// The width of an embedding.
    public var dimension: Int { encoder.configuration.hiddenSize }

    /// The embeddings of a tokenized batch, `[batch.count, dimension]` (lazy).
    public func embeddings(of batch: TokenizedBatch) -> Tensor {
        encoder.sentenceEmbeddings(ids: batch.ids, mask: batch.mask)
    }

    /// Embeds sentences, `[sentences.count, dimension]`, in batches of at most ``batchSize``.
    ///
    /// - Parameter policy: the compute policy; by default the task-local one, else
    ///   `TENSORENGINE_POLICY`, else `.all`.
    public func embed(_ sentences: [String], policy: ComputePolicy? = nil) async throws(TensorError) -> ShapedArray<
        Float
    > {
        let chosen: ComputePolicy
        if let policy { chosen = policy } else { chosen = try Engine.currentPolicy() }
        let sequences = sentences.map(tokenizer.encode)
        let order = sequences.indices.sorted { (sequences[$0].count, $0) > (sequences[$1].count, $1) }
        var rows = [Float](repeating: 0, count: sentences.count * dimension)
        for start in stride(from: 0, to: order.count, by: batchSize) {
            let members = Array(order[start..<Swift.min(start + batchSize, order.count)])
            let batch = TokenizedBatch(sequences: members.map { sequences[$0] }, paddingID: tokenizer.paddingID)
            let result = try computedEmbeddings(of: batch, policy: chosen)
            let values = try await result.shapedArray(of: Float.self).scalars
            for (row, sentence) in members.enumerated() {
                rows.replaceSubrange(
                    sentence * dimension..<(sentence + 1) * dimension,
                    with: values[row * dimension..<(row + 1) * dimension])
            }
        }
        return ShapedArray(unchecked: rows, shape: [sentences.count, dimension])
    }

    /// The input `text` (a string) and the outputs `embedding` (`Float [hiddenSize]`) and
    /// `token_ids` (`Int32 [tokens]`).
    public var modelDescription: ModelDescription {
        let tokens = MultiArrayConstraint(shape: [.symbolic("tokens")], modelElementType: "int32", dataType: .int32)
        let embedding = MultiArrayConstraint(shape: [.fixed(dimension)], modelElementType: "float", dataType: .float32)
        return ModelDescription(
            inputs: [FeatureDescription(name: SentenceEmbedder.textFeature, type: .string)],
            outputs: [
                FeatureDescription(
                    name: SentenceEmbedder.embeddingFeature, type: .multiArray, multiArrayConstraint: embedding),
                FeatureDescription(
                    name: SentenceEmbedder.tokenIDsFeature, type: .multiArray, multiArrayConstraint: tokens),
            ])
    }

    /// The embedding and token ids of the input's `text`.
    public func prediction(from input: any FeatureProvider, policy: ComputePolicy) throws -> any FeatureProvider {
        try predictions(from: [input], policy: policy)[0]
    }

    /// Predictions for several inputs in batched evaluations of at most ``batchSize`` under
    /// `policy`; each output's embedding is its row of its batch's result.
    public func predictions(from inputs: [any FeatureProvider], policy: ComputePolicy) throws -> [any FeatureProvider] {
        var texts: [String] = []
        for input in inputs {
            guard let value = input.featureValue(for: SentenceEmbedder.textFeature), case .string(let text) = value
            else {
                throw ModelInputError(
                    featureName: SentenceEmbedder.textFeature, message: "a string feature named 'text' is required")
            }
            texts.append(text)
        }
        var outputs: [any FeatureProvider] = []
        for start in stride(from: 0, to: texts.count, by: batchSize) {
            let batch = tokenizer.encodeBatch(Array(texts[start..<Swift.min(start + batchSize, texts.count)]))
            let all = try computedEmbeddings(of: batch, policy: policy)
            for (row, ids) in batch.sequences.enumerated() {
                outputs.append(
                    DictionaryFeatureProvider([
                        SentenceEmbedder.tokenIDsFeature: .tensor(Tensor(ids)),
                        SentenceEmbedder.embeddingFeature: .tensor(all[row]),
                    ]))
            }
        }
        return outputs
    }

    /// The names the encoder's inputs are kept under in a prepared plan.
    private static let idsInput = "ids", maskInput = "mask"

    /// The embeddings of `batch`, `[batch.count, dimension]`, computed. The first batch of a shape
    /// (sentences × padded length) records the encoder's graph, plans it and keeps the plan; later
    /// batches of that shape bind their ids and mask to the kept plan and run its steps, neither
    /// recording nor planning the graph of some 340 operations again (that bookkeeping was 0.3 ms
    /// of a one-sentence embedding's 1.85 ms).
    func computedEmbeddings(of batch: TokenizedBatch, policy: ComputePolicy) throws(TensorError) -> Tensor {
        let (ids, mask) = (batch.ids, batch.mask)
        let inputs = [Self.idsInput: ids, Self.maskInput: mask]
        let key = PreparedPredictions.Key(inputs: inputs, policy: policy)
        if let prepared = preparedBatches[key], let result = try prepared.run(inputs)[Self.embeddingFeature] {
            return result
        }
        let result = encoder.sentenceEmbeddings(ids: ids, mask: mask)
        if let error = result.error { throw error }
        guard let node = result.node, node.storedResult == nil else { return result }
        let (plan, _, _) = try Tensor.runKeepingPlan([node], policy: policy)
        preparedBatches.keep(plan, for: key, inputs: inputs, targetNames: [Self.embeddingFeature], outputs: [:])
        return result
    }
}
