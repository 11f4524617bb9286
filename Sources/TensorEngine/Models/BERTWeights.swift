import Foundation

/// The parameters of one BERT encoder layer; linear weights are `[out, in]` as PyTorch stores them.
struct BERTLayerWeights: Sendable {
    var query: Linear
    var key: Linear
    var value: Linear
    var attentionOutput: Linear
    var attentionNorm: Norm
    var intermediate: Linear
    var output: Linear
    var outputNorm: Norm

    struct Linear: Sendable {
        var weight: Tensor
        var bias: Tensor
    }

    struct Norm: Sendable {
        var scale: Tensor
        var bias: Tensor
    }
}

/// Every parameter of a BERT encoder, loaded from a safetensors file and checked against the
/// configuration's shapes.
struct BERTWeights: Sendable {
    var wordEmbeddings: Tensor
    var positionEmbeddings: Tensor
    var tokenTypeEmbeddings: Tensor
    var embeddingNorm: BERTLayerWeights.Norm
    var layers: [BERTLayerWeights]

    /// Loads the weights, accepting names with or without a `bert.` prefix.
    init(file: SafetensorsFile, configuration c: BERTConfiguration) throws(FileFormatError) {
        let prefix = file.entry(named: "embeddings.word_embeddings.weight") == nil
            && file.entry(named: "bert.embeddings.word_embeddings.weight") != nil ? "bert." : ""
        func load(_ name: String, _ shape: [Int]) throws(FileFormatError) -> Tensor {
            let tensor = try file.tensor(named: prefix + name)
            guard tensor.shape == shape, tensor.dtype == .float32 || tensor.dtype == .float16 else {
                throw FileFormatError(.invalidShape, format: "safetensors", message: "tensor '\(prefix + name)' is \(tensor.dtype) \(describe(tensor.shape)), but the configuration needs float \(describe(shape))")
            }
            return tensor.dtype == .float32 ? tensor : tensor.cast(to: Float.self)
        }
        func linear(_ name: String, _ output: Int, _ input: Int) throws(FileFormatError) -> BERTLayerWeights.Linear {
            BERTLayerWeights.Linear(weight: try load(name + ".weight", [output, input]), bias: try load(name + ".bias", [output]))
        }
        func norm(_ name: String) throws(FileFormatError) -> BERTLayerWeights.Norm {
            BERTLayerWeights.Norm(scale: try load(name + ".weight", [c.hiddenSize]), bias: try load(name + ".bias", [c.hiddenSize]))
        }
        let h = c.hiddenSize
        wordEmbeddings = try load("embeddings.word_embeddings.weight", [c.vocabularySize, h])
        positionEmbeddings = try load("embeddings.position_embeddings.weight", [c.maximumPositions, h])
        tokenTypeEmbeddings = try load("embeddings.token_type_embeddings.weight", [c.tokenTypeCount, h])
        embeddingNorm = try norm("embeddings.LayerNorm")
        var layers: [BERTLayerWeights] = []
        for index in 0..<c.layerCount {
            let base = "encoder.layer.\(index)."
            layers.append(BERTLayerWeights(
                query: try linear(base + "attention.self.query", h, h),
                key: try linear(base + "attention.self.key", h, h),
                value: try linear(base + "attention.self.value", h, h),
                attentionOutput: try linear(base + "attention.output.dense", h, h),
                attentionNorm: try norm(base + "attention.output.LayerNorm"),
                intermediate: try linear(base + "intermediate.dense", c.intermediateSize, h),
                output: try linear(base + "output.dense", h, c.intermediateSize),
                outputNorm: try norm(base + "output.LayerNorm")))
        }
        self.layers = layers
    }
}
