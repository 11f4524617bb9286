import Foundation

/// A BERT encoder built from ``Tensor`` ops: token, position and token-type embeddings, then
/// layers of multi-head self-attention (with the attention mask added as a large negative bias)
/// and GELU feed-forward blocks, each followed by a residual layer norm.
///
/// Nothing runs while the graph is built: ``hiddenStates(ids:mask:)`` and
/// ``sentenceEmbeddings(ids:mask:)`` return lazy tensors that run when materialized, on whatever
/// backends the compute policy allows.
///
/// ```swift
/// let encoder = try BERTEncoder(folder: modelFolder)
/// let batch = tokenizer.encodeBatch(["A man is eating food."])
/// let embeddings = encoder.sentenceEmbeddings(ids: batch.ids, mask: batch.mask)   // [1, 384]
/// ```
public struct BERTEncoder: Sendable {
    /// The model's hyper-parameters.
    public let configuration: BERTConfiguration
    let weights: BERTWeights
    /// The bias added to attention scores at padded positions: large enough that their softmax
    /// weight is exactly zero, small enough to stay finite when added to any score.
    static let maskedScoreBias: Float = -1e9

    /// Loads `config.json` and `model.safetensors` from a Hugging Face model folder. The
    /// safetensors file is memory-mapped; weights stored 64-byte aligned are used in place.
    public init(folder: URL) throws(FileFormatError) {
        let configuration = try BERTConfiguration(url: folder.appendingPathComponent("config.json"))
        let file = try SafetensorsFile(url: folder.appendingPathComponent("model.safetensors"))
        try self.init(configuration: configuration, weights: file)
    }

    /// Loads the weights from an open safetensors file (tensor names with or without `bert.`),
    /// checking every shape against the configuration.
    public init(configuration: BERTConfiguration, weights file: SafetensorsFile) throws(FileFormatError) {
        self.configuration = configuration
        self.weights = try BERTWeights(file: file, configuration: configuration)
    }

    /// The last layer's hidden states, `[batch, length, hiddenSize]`.
    ///
    /// - Parameters:
    ///   - ids: `Int32` or `Int64` token ids, `[batch, length]`, with `length` at most the number of position
    ///     embeddings. An id outside the vocabulary makes materialization throw.
    ///   - mask: `Float` attention mask, `[batch, length]`: 1 for tokens, 0 for padding.
    public func hiddenStates(ids: Tensor, mask: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        let c = configuration
        if let failed = [ids, mask].first(where: { $0.error != nil }) { return failed }
        guard ids.rank == 2, mask.shape == ids.shape, ScalarTypeSet.integers.contains(ids.dtype), mask.dtype == .float32
        else {
            return Tensor(failed: TensorError(.shapeMismatch, op: "BERTEncoder", operandShapes: [ids.shape, mask.shape], message: "ids must be Int32 or Int64 [batch, length] and the mask Float of the same shape", location: SourceLocation(file, line)))
        }
        let (batch, length) = (ids.shape[0], ids.shape[1])
        guard length <= c.maximumPositions else {
            return Tensor(failed: TensorError(.invalidArgument, op: "BERTEncoder", operandShapes: [ids.shape], message: "sequences of \(length) tokens exceed the model's \(c.maximumPositions) positions", location: SourceLocation(file, line)))
        }
        let words = weights.wordEmbeddings.gathering(atIndices: ids.reshaped(to: [batch * length]), alongAxis: 0)
        let positions = weights.positionEmbeddings[0..<length].tiled(multiples: [batch, 1])
        let embedded = words + positions + weights.tokenTypeEmbeddings[0]
        var x = normalize(embedded, weights.embeddingNorm)   // [batch·length, hidden]
        let bias = ((1 - mask) * BERTEncoder.maskedScoreBias).reshaped(to: [batch, 1, 1, length])
        for layer in weights.layers {
            x = encoderLayer(x, layer, bias: bias, batch: batch, length: length)
        }
        return x.reshaped(to: [batch, length, c.hiddenSize])
    }

    /// Mean-pooled (over the mask), L2-normalized sentence embeddings, `[batch, hiddenSize]`, as
    /// sentence-transformers computes them.
    public func sentenceEmbeddings(ids: Tensor, mask: Tensor, file: StaticString = #fileID, line: UInt = #line) -> Tensor {
        let states = hiddenStates(ids: ids, mask: mask, file: file, line: line)
        let summed = (states * mask.expandingShape(at: -1)).sum(alongAxes: 1)
        let counts = mask.sum(alongAxes: 1, keepRank: true).pointwiseMax(Float(1e-9))
        let pooled = summed / counts
        let norms = pooled.squared().sum(alongAxes: 1, keepRank: true).squareRoot().pointwiseMax(Float(1e-12))
        return pooled / norms
    }

    /// One encoder layer on `[batch·length, hidden]` states.
    func encoderLayer(_ x: Tensor, _ layer: BERTLayerWeights, bias: Tensor, batch: Int, length: Int) -> Tensor {
        let c = configuration
        func heads(_ t: Tensor, _ permutation: Int...) -> Tensor {
            t.reshaped(to: [batch, length, c.headCount, c.headSize]).transposed(permutation: permutation)
        }
        let query = heads(linear(x, layer.query), 0, 2, 1, 3)          // [b, heads, L, d]
        let key = heads(linear(x, layer.key), 0, 2, 1, 3)              // [b, heads, L, d]
        let value = heads(linear(x, layer.value), 0, 2, 1, 3)          // [b, heads, L, d]
        let context = Tensor.scaledDotProductAttention(query: query, key: key, value: value, mask: bias)
            .transposed(permutation: 0, 2, 1, 3).reshaped(to: [batch * length, c.hiddenSize])
        let attended = normalize(residual(linear(context, layer.attentionOutput), x), layer.attentionNorm)
        // The GELU is the projection's epilogue (nothing else reads the projection).
        let projected = linear(attended, layer.intermediate)
        let expanded =
            projected.fusingActivation(.gelu(c.activation)) ?? projected.gelu(approximation: c.activation)
        return normalize(residual(linear(expanded, layer.output), attended), layer.outputNorm)
    }

    /// `x · Wᵀ + b` with PyTorch's `[out, in]` weight, as one `linear` op: the product adds the
    /// bias as it finishes each piece (the product is read by nothing else).
    func linear(_ x: Tensor, _ parameters: BERTLayerWeights.Linear) -> Tensor {
        let product = x.matmul(parameters.weight.transposed())
        return product.addingBias(parameters.bias) ?? product + parameters.bias
    }

    /// `projected + shortcut`, the sum added by the projection's kernel as it finishes each piece
    /// (nothing else reads the projection).
    func residual(_ projected: Tensor, _ shortcut: Tensor) -> Tensor {
        projected.fusingResidual(shortcut) ?? projected + shortcut
    }

    func normalize(_ x: Tensor, _ parameters: BERTLayerWeights.Norm) -> Tensor {
        x.layerNorm(alongAxis: -1, epsilon: configuration.layerNormEpsilon, scale: parameters.scale, bias: parameters.bias)
    }
}
