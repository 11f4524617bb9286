import Foundation
import Testing
@testable import TensorEngine

@Suite("WordPieceTokenizer") struct WordPieceTokenizerTests {
    static let vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "hello", ",", "world", "!", "cafe", "东", "京", "a"]

    @Test func splitsGreedilyIntoLongestPieces() throws {
        let tokenizer = try WordPieceTokenizer(vocabulary: WordPieceTokenizerTests.vocabulary, maximumLength: 16)
        #expect(tokenizer.tokenize("unaffable") == ["un", "##aff", "##able"])
        #expect(tokenizer.tokenize("Hello,WORLD!") == ["hello", ",", "world", "!"])
        #expect(tokenizer.tokenize("Café\u{0}\u{200B}") == ["cafe"])
        #expect(tokenizer.tokenize("东京") == ["东", "京"])
        #expect(tokenizer.tokenize("unknown hello") == ["[UNK]", "hello"])
        #expect(tokenizer.tokenize(String(repeating: "a", count: 101)) == ["[UNK]"])
        #expect(tokenizer.encode("hello world") == [2, 7, 9, 3])
    }

    @Test func truncatesAndPads() throws {
        let tokenizer = try WordPieceTokenizer(vocabulary: WordPieceTokenizerTests.vocabulary, maximumLength: 4)
        #expect(tokenizer.encode("hello world hello") == [2, 7, 9, 3])
        let batch = tokenizer.encodeBatch(["hello", "hello world"])
        #expect(batch.paddedLength == 4)
        #expect(batch.paddedIDs == [2, 7, 3, 0, 2, 7, 9, 3])
        #expect(batch.maskValues == [1, 1, 1, 0, 1, 1, 1, 1])
        #expect(batch.ids.shape == [2, 4])
    }

    @Test func rejectsVocabularyWithoutSpecialTokens() {
        #expect(throws: FileFormatError.self) { try WordPieceTokenizer(vocabulary: ["a", "b"]) }
        #expect(throws: FileFormatError.self) { try WordPieceTokenizer(vocabulary: WordPieceTokenizerTests.vocabulary, maximumLength: 1) }
    }

    @Test func matchesSentenceTransformersTokenIDs() throws {
        let tokenizer = try WordPieceTokenizer(folder: try ModelFixture.folder())
        let reference = try ModelFixture.reference()
        #expect(tokenizer.maximumLength == reference.max_seq_length)
        for (sentence, expected) in zip(reference.sentences, reference.token_ids) {
            let ids = tokenizer.encode(sentence)
            #expect(ids == expected, "\(sentence.debugDescription): \(tokenizer.tokenize(sentence))")
        }
    }
}
