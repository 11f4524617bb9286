import Foundation
import TensorEngine

// `tensorrun`: runs an ONNX model on `.npy` inputs and writes each output as `.npy`.
// Hand-written argument parsing (no outside packages are used).
let usage = """
    usage: tensorrun MODEL --input NAME=FILE.npy ... [--output-dir DIR] [--policy POLICY] [--repeat N]
                     [--compile-to DIR]

      MODEL              an ONNX file, a folder Model.compileModel(at:) (or --compile-to) made, or a
                         Core ML ML Program (.mlpackage, .mlmodel)

      --input NAME=FILE  an input feature from a .npy file, converted where exact: an int32 file
                         serves an int64 input, a float16 file a float one, a float16 or float32
                         file a double one
      --output-dir DIR   where to write each output as NAME.npy ('/' and ':' in names become '_');
                         default: the current directory
      --policy POLICY    auto, cpuOnly, cpuAndGPU or a backend (naive, openblas, opencl)
      --repeat N         after one warm-up, predict N more times and print
                         `latency median_ms=… min_ms=… p90_ms=…`
      --compile-to DIR   compile MODEL first (aligned weights; cached by content hash), move the
                         compiled folder to DIR, and run from it

    The time to load the model is printed as `load ms=…`.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tensorrun: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}
var modelPath: String?
var inputFiles: [(String, String)] = []
var outputDirectory = "."
var policy: ComputePolicy?
var repeats = 0
var compileTarget: String?
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    let value = index + 1 < arguments.count ? arguments[index + 1] : nil
    switch argument {
    case "--input":
        guard let value, let equals = value.firstIndex(of: "=") else { fail("--input needs NAME=FILE.npy") }
        inputFiles.append((String(value[..<equals]), String(value[value.index(after: equals)...])))
        index += 2
    case "--output-dir":
        guard let value else { fail("--output-dir needs a folder") }
        outputDirectory = value
        index += 2
    case "--policy":
        guard let value else { fail("--policy needs a value") }
        do { policy = try ComputePolicy(name: value) } catch { fail(error.message) }
        index += 2
    case "--compile-to":
        guard let value else { fail("--compile-to needs a folder") }
        compileTarget = value
        index += 2
    case "--repeat":
        guard let value, let count = Int(value), count > 0 else { fail("--repeat needs a positive count") }
        repeats = count
        index += 2
    default:
        guard !argument.hasPrefix("-"), modelPath == nil else { fail("unexpected argument '\(argument)' (see --help)") }
        modelPath = argument
        index += 1
    }
}
guard let modelPath else { fail("no model given (see --help)") }

do {
    var modelURL = URL(fileURLWithPath: modelPath)
    if let compileTarget {
        let compiled = try await Model.compileModel(at: modelURL)
        let target = URL(fileURLWithPath: compileTarget)
        if FileManager.default.fileExists(atPath: target.path) { try FileManager.default.removeItem(at: target) }
        try FileManager.default.moveItem(at: compiled, to: target)
        modelURL = target
    }
    let loadStart = ContinuousClock.now
    let model = try Model(contentsOf: modelURL)
    let loadTime = ContinuousClock.now - loadStart
    print(String(format: "load ms=%.2f", Double(loadTime.components.attoseconds) * 1e-15 + Double(loadTime.components.seconds) * 1e3))
    let descriptions = model.modelDescription.inputDescriptionsByName
    var inputs: [String: Tensor] = [:]
    for (name, path) in inputFiles {
        guard let description = descriptions[name] else {
            fail(
                "the model has no input '\(name)'; its inputs: \(model.modelDescription.inputDescriptions.map(\.description).joined(separator: "; "))"
            )
        }
        let tensor = try Tensor(npyFile: URL(fileURLWithPath: path), converting: description)
        inputs[name] = tensor
    }
    let started = ContinuousClock.now
    let options = PredictionOptions()
    options.computePolicy = policy
    var outputs = try await model.prediction(from: inputs, options: options)
    let first = ContinuousClock.now - started
    print("predicted \(model.modelDescription.outputDescriptions.count) outputs in \(first) (first call: plan included)")
    if repeats > 0 {
        var times: [Double] = []
        for _ in 0..<repeats {
            let start = ContinuousClock.now
            outputs = try await model.prediction(from: inputs, options: options)
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) * 1e-15)
        }
        times.sort()
        let median =
            times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
        let p90 = times[Swift.min(times.count - 1, Int((Double(times.count) * 0.9).rounded(.up)) - 1)]
        print(String(format: "latency median_ms=%.3f min_ms=%.3f p90_ms=%.3f", median, times[0], p90))
    }
    try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
    for description in model.modelDescription.outputDescriptions {
        guard let tensor = outputs[description.name] else { continue }
        let file = description.name.map { "/:\\".contains($0) ? "_" : String($0) }.joined()
        let url = URL(fileURLWithPath: outputDirectory).appendingPathComponent(file + ".npy")
        try await tensor.write(npy: url)
        print("\(description.name): \(tensor.dtype) \(tensor.shape) -> \(url.path)")
    }
} catch let error as ModelError {
    fail("\(error)")
} catch {
    fail("\(error)")
}
