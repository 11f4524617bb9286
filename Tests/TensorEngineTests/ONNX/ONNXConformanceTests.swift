import Foundation
import TensorEngineChecks
import Testing

@testable import TensorEngine

/// ONNX's own backend test suites (node, pytorch-converted, pytorch-operator, simple; fetched by
/// scripts/fetch-onnx-tests.sh) on every backend, against the committed manifest of the tests that
/// do not run and why (`Fixtures/onnx_conformance_manifest.tsv`, written by
/// `tensorengine-check onnx --manifest FILE`).
@Suite("ONNX conformance") struct ONNXConformanceTests {
    static let suites = ["node", "pytorch-converted", "pytorch-operator", "simple"]

    static func manifest() throws -> [String: String] {
        guard
            let url = Bundle.module.url(
                forResource: "onnx_conformance_manifest", withExtension: "tsv", subdirectory: "Fixtures")
        else {
            throw ONNXFixture.Missing(description: "Fixtures/onnx_conformance_manifest.tsv is not in the test bundle")
        }
        var entries: [String: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "\t", maxSplits: 1)
            if parts.count == 2 { entries[String(parts[0])] = String(parts[1]) }
        }
        return entries
    }

    @Test func everyTestOutsideTheManifestPassesOnEveryBackend() async throws {
        let root = ONNXConformance.directory()
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent("node").path) else {
            throw ONNXFixture.Missing(
                description: "ONNX's test data are not in \(root.path); run scripts/fetch-onnx-tests.sh")
        }
        let manifest = try Self.manifest()
        let policies = BackendStatus.all.filter(\.isAvailable).map(\.id).map(ComputePolicy.only)
        let results = await ONNXConformance.runSuites(Self.suites, policies: policies, root: root)
        #expect(results.filter { $0.suite == "node" }.count == 1765)
        for result in results {
            let key = "\(result.suite)/\(result.name)"
            switch result.outcome {
            case .passed, .passedWithFallback:
                #expect(manifest[key] == nil, "\(key) passes now: remove it from the manifest")
            case .skipped(let reason):
                // A skip must be one the manifest names with the same kind of reason.
                let listed = manifest[key]
                #expect(
                    listed.map { $0.prefix { $0 != ":" } == reason.prefix { $0 != ":" } } == true, "\(key): \(reason)")
            case .failed(let reason):
                #expect(manifest[key]?.hasPrefix("divergence:") == true, "\(key) fails: \(reason)")
            }
        }
        for suite in Self.suites { print(ONNXConformance.summary(results, suite: suite)) }
    }
}
