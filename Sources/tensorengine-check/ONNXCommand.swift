import Foundation
import TensorEngine
import TensorEngineChecks

/// The `onnx` subcommand: runs ONNX's backend test suites and prints their counts.
func runONNXConformance(_ arguments: [String]) async -> Int32 {
    var suites: [String] = []
    var policies: [ComputePolicy] = []
    var filter: String?
    var manifestPath: String?
    var verbose = false
    var index = 0
    while index < arguments.count {
        let argument = arguments[index]
        let value = index + 1 < arguments.count ? arguments[index + 1] : nil
        switch argument {
        case "--policy":
            guard let value else {
                print("--policy needs a value")
                return 2
            }
            do { policies.append(try ComputePolicy(name: value)) } catch {
                print(error.message)
                return 2
            }
            index += 2
        case "--filter":
            filter = value
            index += 2
        case "--manifest":
            manifestPath = value
            index += 2
        case "--verbose":
            verbose = true
            index += 1
        default:
            suites.append(argument)
            index += 1
        }
    }
    if suites.isEmpty { suites = ["node", "pytorch-converted", "pytorch-operator", "simple"] }
    if policies.isEmpty {
        policies = BackendStatus.all.filter(\.isAvailable).map(\.id).map(ComputePolicy.only)
    }
    let root = ONNXConformance.directory()
    guard FileManager.default.fileExists(atPath: root.appendingPathComponent("node").path) else {
        print("tensorengine-check: ONNX's test data are not in \(root.path); run scripts/fetch-onnx-tests.sh")
        return 1
    }
    print("ONNX conformance in \(root.path), policies: \(policies.map(\.description).joined(separator: ", "))")
    let results = await ONNXConformance.runSuites(suites, policies: policies, filter: filter, root: root) { result in
        if case .failed(let reason) = result.outcome {
            print("FAIL \(result.suite)/\(result.name): \(reason.prefix(400))")
        }
        if verbose, case .skipped(let reason) = result.outcome {
            print("skip \(result.suite)/\(result.name): \(reason.prefix(200))")
        }
    }
    for suite in suites { print(ONNXConformance.summary(results, suite: suite)) }
    if let manifestPath {
        do {
            try ONNXConformance.manifest(results).write(toFile: manifestPath, atomically: true, encoding: .utf8)
        } catch {
            print("cannot write \(manifestPath): \(error)")
            return 1
        }
    }
    return results.contains { if case .failed = $0.outcome { true } else { false } } ? 1 : 0
}
