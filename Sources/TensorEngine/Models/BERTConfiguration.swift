import Foundation

/// The hyper-parameters of a BERT encoder, as in a Hugging Face `config.json`.
public struct BERTConfiguration: Sendable, Hashable {
    /// The number of tokens in the vocabulary.
    public var vocabularySize: Int
    /// The width of every hidden state (384 for MiniLM-L6).
    public var hiddenSize: Int
    /// The number of encoder layers.
    public var layerCount: Int
    /// The number of attention heads; must divide ``hiddenSize``.
    public var headCount: Int
    /// The width of the feed-forward layer.
    public var intermediateSize: Int
    /// The number of position embeddings: the longest sequence the model accepts.
    public var maximumPositions: Int
    /// The number of token types (segments).
    public var tokenTypeCount: Int
    /// The epsilon of every layer norm.
    public var layerNormEpsilon: Float
    /// The feed-forward activation: exact or tanh-approximated GELU.
    public var activation: GELUApproximation

    /// Creates a configuration.
    public init(
        vocabularySize: Int, hiddenSize: Int, layerCount: Int, headCount: Int, intermediateSize: Int,
        maximumPositions: Int, tokenTypeCount: Int = 2, layerNormEpsilon: Float = 1e-12, activation: GELUApproximation = .none
    ) {
        self.vocabularySize = vocabularySize
        self.hiddenSize = hiddenSize
        self.layerCount = layerCount
        self.headCount = headCount
        self.intermediateSize = intermediateSize
        self.maximumPositions = maximumPositions
        self.tokenTypeCount = tokenTypeCount
        self.layerNormEpsilon = layerNormEpsilon
        self.activation = activation
    }

    /// Reads `config.json`; throws a ``FileFormatError`` for missing or invalid fields, an
    /// activation other than GELU, or a head count that does not divide the hidden size.
    public init(url: URL) throws(FileFormatError) {
        let object = try JSONFile.object(url)
        func fail(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
            FileFormatError(kind, format: "config.json", path: url.path, message: message)
        }
        func positive(_ key: String, default fallback: Int? = nil) throws(FileFormatError) -> Int {
            guard let value = JSONFile.integer(object[key]) ?? (object[key] == nil ? fallback : nil) else {
                throw fail(object[key] == nil ? .missingEntry : .badHeader, "'\(key)' must be a positive integer")
            }
            guard value > 0, value <= 1 << 24 else { throw fail(.badHeader, "'\(key)' is \(value), outside 1...\(1 << 24)") }
            return value
        }
        let activation: GELUApproximation
        switch object["hidden_act"] as? String ?? "gelu" {
        case "gelu": activation = .none
        case "gelu_new", "gelu_pytorch_tanh": activation = .tanh
        case let other: throw fail(.unsupportedDType, "activation '\(other)' is not supported (gelu, gelu_new, gelu_pytorch_tanh are)")
        }
        if let type = object["position_embedding_type"] as? String, type != "absolute" {
            throw fail(.unsupportedDType, "position embeddings of type '\(type)' are not supported")
        }
        self.init(
            vocabularySize: try positive("vocab_size"), hiddenSize: try positive("hidden_size"),
            layerCount: try positive("num_hidden_layers"), headCount: try positive("num_attention_heads"),
            intermediateSize: try positive("intermediate_size"), maximumPositions: try positive("max_position_embeddings", default: 512),
            tokenTypeCount: try positive("type_vocab_size", default: 2),
            layerNormEpsilon: Float(JSONFile.number(object["layer_norm_eps"]) ?? 1e-12), activation: activation)
        guard hiddenSize % headCount == 0 else {
            throw fail(.badHeader, "num_attention_heads \(headCount) does not divide hidden_size \(hiddenSize)")
        }
        guard layerNormEpsilon.isFinite, layerNormEpsilon >= 0 else { throw fail(.badHeader, "layer_norm_eps must be finite and non-negative") }
    }

    /// The width of one attention head.
    public var headSize: Int { hiddenSize / headCount }
}
