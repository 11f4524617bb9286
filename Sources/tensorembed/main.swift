import Foundation
import TensorEngine

// tensorembed: sentence embeddings with all-MiniLM-L6-v2 (or another BERT model folder in
// sentence-transformers' layout). Reads sentences, one per line, from standard input.

let usage = """
    usage: tensorembed [--model DIR] [--policy NAME] [--batch-size N] [--npy FILE | --tokens]

    Reads sentences from standard input, one per line, and prints one JSON array of floats (the
    sentence's normalized embedding) per line, in input order.

    options:
      --model DIR       the model folder (config.json, model.safetensors, vocab.txt, ...);
                        default: $TENSORENGINE_MODEL_DIR, else
                        ~/.cache/tensorengine/models/all-MiniLM-L6-v2 (scripts/fetch-model.sh
                        fetches it there)
      --policy NAME     compute policy: \(ComputePolicy.names.joined(separator: ", ")) (default: auto, or
                        $TENSORENGINE_POLICY)
      --batch-size N    sentences evaluated together (default 32)
      --npy FILE        write the embeddings to FILE as a float32 [n, dim] .npy array instead
      --tokens          print each sentence's token ids as a JSON array instead of embedding
      --repeat N        embed the input N more times after the first and report the latency
                        (median and best, tokenizing and pooling included) on standard error
      -h, --help        show this help

    """

struct Options {
    var model: String?
    var policy: ComputePolicy?
    var batchSize = 32
    var npyPath: String?
    var tokensOnly = false
    var repeats = 0
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
}

func parse(_ arguments: [String]) throws -> Options? {
    var options = Options()
    var remaining = arguments[...]
    func value(for flag: String) throws -> String {
        guard let next = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
        return next
    }
    while let argument = remaining.popFirst() {
        switch argument {
        case "-h", "--help": return nil
        case "--model": options.model = try value(for: argument)
        case "--policy": options.policy = try ComputePolicy(name: try value(for: argument))
        case "--batch-size":
            let text = try value(for: argument)
            guard let size = Int(text), size > 0 else { throw UsageError(description: "--batch-size needs a positive integer, not '\(text)'") }
            options.batchSize = size
        case "--npy": options.npyPath = try value(for: argument)
        case "--tokens": options.tokensOnly = true
        case "--repeat":
            let text = try value(for: argument)
            guard let count = Int(text), count >= 0 else { throw UsageError(description: "--repeat needs a non-negative integer, not '\(text)'") }
            options.repeats = count
        default: throw UsageError(description: "unknown argument '\(argument)'")
        }
    }
    if options.tokensOnly, options.npyPath != nil { throw UsageError(description: "--tokens and --npy cannot be combined") }
    return options
}

func modelFolder(_ option: String?) -> URL {
    option.map { URL(fileURLWithPath: $0) } ?? SentenceEmbedder.defaultFolder
}

func readLines() -> [String] {
    var lines: [String] = []
    while let line = Swift.readLine(strippingNewline: true) { lines.append(line) }
    return lines
}

func json(_ values: some Sequence<Float>) -> String {
    "[" + values.map { "\($0)" }.joined(separator: ", ") + "]"
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("tensorembed: \(message)\n".utf8))
    exit(status)
}

let options: Options
do {
    guard let parsed = try parse(Array(CommandLine.arguments.dropFirst())) else {
        print(usage, terminator: "")
        exit(0)
    }
    options = parsed
} catch {
    fail("\(error)\n\n\(usage)", status: 2)
}

let folder = modelFolder(options.model)
let sentences = readLines()
do {
    if options.tokensOnly {
        let tokenizer = try WordPieceTokenizer(folder: folder)
        for sentence in sentences { print("[" + tokenizer.encode(sentence).map(String.init).joined(separator: ", ") + "]") }
        exit(0)
    }
    let embedder = try SentenceEmbedder(folder: folder, batchSize: options.batchSize)
    let embeddings = try await embedder.embed(sentences, policy: options.policy)
    if options.repeats > 0 {
        var seconds: [Double] = []
        for _ in 0..<options.repeats {
            let start = ContinuousClock.now
            _ = try await embedder.embed(sentences, policy: options.policy)
            let elapsed = ContinuousClock.now - start
            seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        seconds.sort()
        let report = String(format: "tensorembed: %d sentences, median %.2f ms, best %.2f ms over %d runs", sentences.count, seconds[seconds.count / 2] * 1000, seconds[0] * 1000, seconds.count)
        FileHandle.standardError.write(Data((report + "\n").utf8))
    }
    if let path = options.npyPath {
        try embeddings.write(npy: URL(fileURLWithPath: path))
    } else {
        let dimension = embedder.dimension
        var output = ""
        for row in 0..<sentences.count {
            output += json(embeddings.scalars[row * dimension..<(row + 1) * dimension]) + "\n"
        }
        print(output, terminator: "")
    }
} catch let error as FileFormatError where error.kind == .unreadable && !FileManager.default.fileExists(atPath: folder.path) {
    fail("no model folder at \(folder.path); run scripts/fetch-model.sh or pass --model DIR", status: 1)
} catch {
    fail("\(error)", status: 1)
}
