import Foundation

/// BERT's basic text processing, as Hugging Face's `BertNormalizer` and `BertPreTokenizer` do it:
/// control characters removed, whitespace unified, CJK ideographs set apart, accents stripped
/// (NFD, then nonspacing marks dropped), lower-cased, then split on whitespace and punctuation.
struct BERTTextNormalizer: Sendable {
    /// Whether to lower-case (and, as BERT uncased does, strip accents).
    var lowercase = true

    /// The words of `text` after normalization, punctuation marks as words of their own.
    func words(_ text: String) -> [String] {
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value == 0 || scalar.value == 0xFFFD || BERTTextNormalizer.isControl(scalar) { continue }
            if BERTTextNormalizer.isWhitespace(scalar) {
                cleaned.append(" ")
            } else if BERTTextNormalizer.isCJK(scalar) {
                cleaned.append(" ")
                cleaned.append(scalar)
                cleaned.append(" ")
            } else {
                cleaned.append(scalar)
            }
        }
        var normalized = String(cleaned)
        if lowercase {
            var stripped = String.UnicodeScalarView()
            for scalar in normalized.decomposedStringWithCanonicalMapping.unicodeScalars where scalar.properties.generalCategory != .nonspacingMark {
                stripped.append(scalar)
            }
            normalized = String(stripped).lowercased()
        }
        var words: [String] = []
        var current = String.UnicodeScalarView()
        func flush() {
            if !current.isEmpty { words.append(String(current)) }
            current = String.UnicodeScalarView()
        }
        for scalar in normalized.unicodeScalars {
            if BERTTextNormalizer.isWhitespace(scalar) {
                flush()
            } else if BERTTextNormalizer.isPunctuation(scalar) {
                flush()
                words.append(String(scalar))
            } else {
                current.append(scalar)
            }
        }
        flush()
        return words
    }

    /// Tab, newline and carriage return count as whitespace; the rest of Unicode's `White_Space`.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\n" || scalar == "\r" || scalar.properties.isWhitespace
    }

    /// Other (`C*`) characters except tab, newline and carriage return.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        if scalar == "\t" || scalar == "\n" || scalar == "\r" { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned: return true
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
            .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation, .mathSymbol, .currencySymbol,
            .modifierSymbol, .otherSymbol, .spaceSeparator, .lineSeparator, .paragraphSeparator:
            return false
        @unknown default: return false
        }
    }

    /// ASCII punctuation and symbols (`!` to `/`, `:` to `@`, `[` to `` ` ``, `{` to `~`) and
    /// Unicode punctuation (`P*`).
    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if (33...47).contains(value) || (58...64).contains(value) || (91...96).contains(value) || (123...126).contains(value) {
            return true
        }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation:
            return true
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber,
            .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol, .spaceSeparator, .lineSeparator,
            .paragraphSeparator, .control, .format, .surrogate, .privateUse, .unassigned:
            return false
        @unknown default: return false
        }
    }

    /// The CJK Unified Ideographs blocks BERT sets apart as words of their own.
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F, 0x2B740...0x2B81F,
            0x2B820...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            true
        default:
            false
        }
    }
}
