/// Token ids of several texts padded to one length, with the attention mask that marks real tokens.
///
/// ```swift
/// let batch = tokenizer.encodeBatch(["a short one", "a somewhat longer sentence"])
/// batch.ids        // [2, L] Int32, `[PAD]` after each sequence's end
/// batch.mask       // [2, L] Float, 1 for tokens and 0 for padding
/// ```
public struct TokenizedBatch: Sendable, Hashable {
    /// Each text's token ids, unpadded.
    public let sequences: [[Int32]]
    /// The length every sequence is padded to (the longest one's).
    public let paddedLength: Int
    /// The id that fills the padding.
    public let paddingID: Int32

    /// Pads encoded sequences to the longest one's length.
    public init(sequences: [[Int32]], paddingID: Int32) {
        self.sequences = sequences
        self.paddedLength = sequences.map(\.count).max() ?? 0
        self.paddingID = paddingID
    }

    /// The number of texts.
    public var count: Int { sequences.count }

    /// The padded ids, row-major `[count, paddedLength]`.
    public var paddedIDs: [Int32] {
        sequences.flatMap { $0 + Array(repeating: paddingID, count: paddedLength - $0.count) }
    }

    /// The mask, row-major `[count, paddedLength]`: 1 for tokens, 0 for padding.
    public var maskValues: [Float] {
        sequences.flatMap { Array(repeating: Float(1), count: $0.count) + Array(repeating: Float(0), count: paddedLength - $0.count) }
    }

    /// The padded ids as an `Int32` tensor of shape `[count, paddedLength]`.
    public var ids: Tensor { Tensor(shape: [count, paddedLength], scalars: paddedIDs) }

    /// The attention mask as a `Float` tensor of shape `[count, paddedLength]`.
    public var mask: Tensor { Tensor(shape: [count, paddedLength], scalars: maskValues) }
}

extension WordPieceTokenizer {
    /// Encodes several texts (each truncated to ``maximumLength``) and pads them to one length.
    public func encodeBatch(_ texts: [String]) -> TokenizedBatch {
        TokenizedBatch(sequences: texts.map(encode), paddingID: paddingID)
    }
}
