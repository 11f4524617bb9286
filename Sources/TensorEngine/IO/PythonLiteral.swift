/// A value of the small subset of Python literals that `.npy` headers use.
indirect enum PythonLiteral: Sendable, Hashable {
    case string(String)
    case integer(Int)
    case bool(Bool)
    case none
    case tuple([PythonLiteral])
    case list([PythonLiteral])
    case dictionary([String: PythonLiteral])
}

/// A recursive-descent parser for ``PythonLiteral``: strings in single or double quotes (no
/// escapes beyond `\\` and the quote), decimal integers, `True`, `False`, `None`, tuples, lists and
/// dictionaries with string keys. Nesting is limited so hostile input cannot exhaust the stack.
struct PythonLiteralParser {
    struct Failure: Error { var message: String }

    static let maximumDepth = 16
    private let scalars: [Unicode.Scalar]
    private var position = 0
    private var depth = 0

    init(_ text: String) { scalars = Array(text.unicodeScalars) }

    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private mutating func skipSpace() {
        while let c = current, c == " " || c == "\t" || c == "\n" || c == "\r" { position += 1 }
    }

    private mutating func expect(_ c: Unicode.Scalar) throws(Failure) {
        skipSpace()
        guard current == c else { throw Failure(message: "expected '\(c)' at character \(position)") }
        position += 1
    }

    mutating func parseValue() throws(Failure) -> PythonLiteral {
        skipSpace()
        guard let c = current else { throw Failure(message: "unexpected end of the header") }
        switch c {
        case "'", "\"": return .string(try parseString())
        case "(": return .tuple(try parseSequence(close: ")"))
        case "[": return .list(try parseSequence(close: "]"))
        case "{": return try parseDictionary()
        case "-", "0"..."9": return .integer(try parseInteger())
        default:
            for (word, value) in [("True", PythonLiteral.bool(true)), ("False", .bool(false)), ("None", .none)] {
                let end = position + word.unicodeScalars.count
                if end <= scalars.count, String(String.UnicodeScalarView(scalars[position..<end])) == word {
                    position = end
                    return value
                }
            }
            throw Failure(message: "unexpected character '\(c)' at character \(position)")
        }
    }

    private mutating func parseString() throws(Failure) -> String {
        guard let quote = current else { throw Failure(message: "unexpected end of the header") }
        position += 1
        var result = String.UnicodeScalarView()
        while let c = current {
            position += 1
            if c == quote { return String(result) }
            if c == "\\" {
                guard let escaped = current else { break }
                position += 1
                result.append(escaped)
            } else {
                result.append(c)
            }
        }
        throw Failure(message: "unterminated string")
    }

    private mutating func parseInteger() throws(Failure) -> Int {
        let start = position
        if current == "-" { position += 1 }
        while let c = current, ("0"..."9").contains(c) { position += 1 }
        // Python 2 era headers may write long integers as `3L`.
        let text = String(String.UnicodeScalarView(scalars[start..<position]))
        if current == "L" { position += 1 }
        guard let value = Int(text) else { throw Failure(message: "integer '\(text)' is out of range") }
        return value
    }

    private mutating func nested<T>(_ body: (inout PythonLiteralParser) throws(Failure) -> T) throws(Failure) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= PythonLiteralParser.maximumDepth else { throw Failure(message: "nesting is too deep") }
        return try body(&self)
    }

    private mutating func parseSequence(close: Unicode.Scalar) throws(Failure) -> [PythonLiteral] {
        try nested { parser throws(Failure) in
            parser.position += 1
            var items: [PythonLiteral] = []
            while true {
                parser.skipSpace()
                if parser.current == close {
                    parser.position += 1
                    return items
                }
                items.append(try parser.parseValue())
                parser.skipSpace()
                if parser.current == "," { parser.position += 1 } else { try parser.expect(close); return items }
            }
        }
    }

    private mutating func parseDictionary() throws(Failure) -> PythonLiteral {
        try nested { parser throws(Failure) in
            parser.position += 1
            var items: [String: PythonLiteral] = [:]
            while true {
                parser.skipSpace()
                if parser.current == "}" {
                    parser.position += 1
                    return .dictionary(items)
                }
                guard case .string(let key) = try parser.parseValue() else { throw Failure(message: "dictionary keys must be strings") }
                try parser.expect(":")
                items[key] = try parser.parseValue()
                parser.skipSpace()
                if parser.current == "," { parser.position += 1 } else { try parser.expect("}"); return .dictionary(items) }
            }
        }
    }
}
