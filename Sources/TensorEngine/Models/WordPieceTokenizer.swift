import Foundation

/// BERT's WordPiece tokenizer, compatible with Hugging Face's uncased `BertTokenizer`.
///
/// Text is normalized and split into words (see `BERTTextNormalizer`); each word becomes its
/// greedy longest-match pieces from the vocabulary, continuation pieces prefixed with `##`. A word
/// longer than 100 characters, or one that cannot be covered by pieces, becomes `[UNK]`. Encoded
/// sequences are wrapped in `[CLS]` … `[SEP]` and truncated to ``maximumLength`` tokens.
///
/// ```swift
/// let tokenizer = try WordPieceTokenizer(folder: modelFolder)
/// let ids = tokenizer.encode("Hello, world!")   // [101, 7592, 1010, 2088, 999, 102]
/// ```
public struct WordPieceTokenizer: Sendable {
    /// Token ids by token (keyed by UTF-8 bytes, so canonically equivalent strings stay distinct).
    private let ids: [[UInt8]: Int32]
    /// Tokens by id.
    public let vocabulary: [String]
    /// The most tokens an encoded sequence has, `[CLS]` and `[SEP]` included.
    public let maximumLength: Int
    /// Words longer than this many characters become `[UNK]`.
    public let maximumWordLength = 100
    /// The id of `[CLS]`, which starts every sequence.
    public let classifierID: Int32
    /// The id of `[SEP]`, which ends every sequence.
    public let separatorID: Int32
    /// The id of `[UNK]`.
    public let unknownID: Int32
    /// The id of `[PAD]`, which fills batches.
    public let paddingID: Int32
    private let normalizer: BERTTextNormalizer

    /// Creates a tokenizer from a vocabulary (one token per line; the line number is the id).
    ///
    /// Throws ``FileFormatError/Kind/missingEntry`` when `[CLS]`, `[SEP]`, `[UNK]` or `[PAD]` is
    /// absent, and ``FileFormatError/Kind/badHeader`` when `maximumLength` is below 2.
    public init(vocabulary: [String], maximumLength: Int = 512, lowercase: Bool = true) throws(FileFormatError) {
        guard maximumLength >= 2 else {
            throw FileFormatError(.badHeader, format: "tokenizer", message: "a maximum length of \(maximumLength) leaves no room for [CLS] and [SEP]")
        }
        var ids: [[UInt8]: Int32] = [:]
        for (index, token) in vocabulary.enumerated() where ids[Array(token.utf8)] == nil {
            ids[Array(token.utf8)] = Int32(truncatingIfNeeded: index)
        }
        func id(_ token: String) throws(FileFormatError) -> Int32 {
            guard let id = ids[Array(token.utf8)] else {
                throw FileFormatError(.missingEntry, format: "vocab.txt", message: "the vocabulary has no \(token) token")
            }
            return id
        }
        self.ids = ids
        self.vocabulary = vocabulary
        self.maximumLength = maximumLength
        self.classifierID = try id("[CLS]")
        self.separatorID = try id("[SEP]")
        self.unknownID = try id("[UNK]")
        self.paddingID = try id("[PAD]")
        self.normalizer = BERTTextNormalizer(lowercase: lowercase)
    }

    /// Loads `vocab.txt` from a Hugging Face model folder, with the maximum length from
    /// `sentence_bert_config.json`'s `max_seq_length` when present (else `tokenizer_config.json`'s
    /// `model_max_length`, else 512) and lower-casing from `tokenizer_config.json`'s `do_lower_case`.
    public init(folder: URL) throws(FileFormatError) {
        let vocabularyURL = folder.appendingPathComponent("vocab.txt")
        let text: String
        do { text = try String(contentsOf: vocabularyURL, encoding: .utf8) } catch {
            throw FileFormatError(.unreadable, format: "vocab.txt", path: vocabularyURL.path, message: "cannot read the vocabulary: \(error.localizedDescription)")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.hasSuffix("\r") ? $0.dropLast() : $0) }
        if lines.last == "" { lines.removeLast() }
        let sentenceConfig = try JSONFile.optionalObject(folder.appendingPathComponent("sentence_bert_config.json"))
        let tokenizerConfig = try JSONFile.optionalObject(folder.appendingPathComponent("tokenizer_config.json"))
        let length = JSONFile.integer(sentenceConfig?["max_seq_length"]) ?? JSONFile.integer(tokenizerConfig?["model_max_length"]) ?? 512
        let lowercase = (tokenizerConfig?["do_lower_case"] as? Bool) ?? true
        do { try self.init(vocabulary: lines, maximumLength: Swift.min(length, 1 << 20), lowercase: lowercase) } catch { throw error.at(vocabularyURL.path) }
    }

    /// The WordPiece tokens of `text`, without `[CLS]`, `[SEP]` or truncation.
    public func tokenize(_ text: String) -> [String] {
        pieceIDs(text).map { vocabulary[Int($0)] }
    }

    /// The token ids of `text`: `[CLS]`, its pieces (truncated to fit), `[SEP]`.
    public func encode(_ text: String) -> [Int32] {
        [classifierID] + pieceIDs(text).prefix(maximumLength - 2) + [separatorID]
    }

    /// The piece ids of every word of `text`.
    func pieceIDs(_ text: String) -> [Int32] {
        var result: [Int32] = []
        for word in normalizer.words(text) { append(word, to: &result) }
        return result
    }

    /// Appends the greedy longest-match pieces of one word, or `[UNK]`.
    private func append(_ word: String, to result: inout [Int32]) {
        let scalars = Array(word.unicodeScalars)
        guard scalars.count <= maximumWordLength else {
            result.append(unknownID)
            return
        }
        var pieces: [Int32] = []
        var start = 0
        while start < scalars.count {
            var end = scalars.count
            var found: Int32?
            while start < end {
                var key = start > 0 ? Array("##".utf8) : []
                key.append(contentsOf: String(String.UnicodeScalarView(scalars[start..<end])).utf8)
                if let id = ids[key] {
                    found = id
                    break
                }
                end -= 1
            }
            guard let found else {
                result.append(unknownID)
                return
            }
            pieces.append(found)
            start = end
        }
        result.append(contentsOf: pieces)
    }
}
