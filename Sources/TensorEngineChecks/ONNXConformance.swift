import Foundation
import TensorEngine

/// Runs ONNX's backend test suites (`onnx/backend/test/data/{node,pytorch-converted,...}`): each
/// test is a folder with `model.onnx` and `test_data_set_N/{input,output}_K.pb`. A test passes on
/// a policy when every output matches ONNX's expected one within ONNX's tolerances (`rtol` 1e-3,
/// `atol` 1e-7, NaN equal to NaN, integers and booleans exactly).
package enum ONNXConformance {
    /// Where `scripts/fetch-onnx-tests.sh` puts the suites.
    package static func directory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TENSORENGINE_ONNX_TESTS_DIR"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
            ".cache/tensorengine/onnx-tests/onnx-1.22.0")
    }

    /// The outcome of one test.
    package enum Outcome: Sendable, Equatable {
        case passed
        /// Passed, but a policy's backend does not claim some op (openblas computes only `Float`),
        /// so those ops ran where the planner puts them without it: on the naive reference.
        case passedWithFallback(String)
        /// Not run, and why: the model uses operators or types the engine lacks.
        case skipped(String)
        /// Ran and failed on some policy.
        case failed(String)
    }

    package struct Result: Sendable {
        package let suite: String
        package let name: String
        package let outcome: Outcome
    }

    /// The tests of a suite, sorted: test folders, or for `light` the model files (each with its
    /// expected output beside it, `light_NAME_output_0.pb`).
    package static func tests(in suite: String, root: URL = directory()) -> [URL] {
        let folder = root.appendingPathComponent(suite)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let entries = names.sorted().map { folder.appendingPathComponent($0) }
        if suite == "light" { return entries.filter { $0.pathExtension == "onnx" } }
        return entries.filter { FileManager.default.fileExists(atPath: $0.appendingPathComponent("model.onnx").path) }
    }

    /// Loads a test's model, or the outcome that ends the test (a skip or a load failure).
    private static func load(_ url: URL) -> Swift.Result<ONNXModel, OutcomeError> {
        do {
            return .success(try ONNXModel(contentsOf: url))
        } catch let error as ModelError {
            switch error.kind {
            case .unsupportedOperators:
                return .failure(
                    OutcomeError(
                        outcome: .skipped(
                            "unsupported operator: "
                                + Set(error.unsupportedNodes.map(\.opType)).sorted().joined(separator: ", "))))
            case .unsupportedType: return .failure(OutcomeError(outcome: .skipped("unsupported type: \(error.message)")))
            case .invalidModel, .invalidNode, .invalidInput: return .failure(OutcomeError(outcome: .failed("load: \(error)")))
            }
        } catch let error as FileFormatError {
            if error.kind == .unsupportedDType {
                return .failure(OutcomeError(outcome: .skipped("unsupported type: \(error.message)")))
            }
            return .failure(OutcomeError(outcome: .failed("load: \(error)")))
        } catch {
            return .failure(OutcomeError(outcome: .failed("load: \(error)")))
        }
    }

    /// An outcome that ends a test early.
    private struct OutcomeError: Error {
        let outcome: Outcome
    }

    /// Runs one test (a folder, or a light model file) on every policy given.
    package static func run(_ folder: URL, policies: [ComputePolicy]) async -> Outcome {
        if folder.pathExtension == "onnx" { return await runLight(folder, policies: policies) }
        let model: ONNXModel
        switch load(folder.appendingPathComponent("model.onnx")) {
        case .success(let loaded): model = loaded
        case .failure(let end): return end.outcome
        }
        let sets = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix("test_data_set_") }.sorted()
        guard !sets.isEmpty else { return .skipped("no test data") }
        var fallbacks: [String] = []
        for set in sets {
            let data = folder.appendingPathComponent(set)
            let inputs: [ONNXTensorFile]
            let expected: [ONNXTensorFile]
            do {
                inputs = try files(data, prefix: "input_")
                expected = try files(data, prefix: "output_")
            } catch let error as FileFormatError where error.kind == .unsupportedDType {
                return .skipped("unsupported type: \(error.message)")
            } catch {
                return .failed("test data: \(error)")
            }
            var feeds: [String: Tensor] = [:]
            let names = model.inputDescriptions.map(\.name)
            for (index, file) in inputs.enumerated() {
                let name = names.contains(file.name) ? file.name : (index < names.count ? names[index] : file.name)
                do { feeds[name] = try file.tensor() } catch {
                    return .skipped("unsupported type: input \(name): \(error.message)")
                }
            }
            if let end = await runSet(model, feeds, expected, policies: policies, fallbacks: &fallbacks) { return end }
        }
        return fallbacks.isEmpty ? .passed : .passedWithFallback(Set(fallbacks).sorted().joined(separator: ", "))
    }

    /// A light model (`light/light_NAME.onnx`: a real architecture with constant weights) on the
    /// inputs ONNX's runner gives it, `arange(n) / n` in each input's shape, against the expected
    /// output stored beside it.
    private static func runLight(_ file: URL, policies: [ComputePolicy]) async -> Outcome {
        let model: ONNXModel
        switch load(file) {
        case .success(let loaded): model = loaded
        case .failure(let end): return end.outcome
        }
        let stem = file.deletingPathExtension().lastPathComponent
        let expected: [ONNXTensorFile]
        do {
            expected = [
                try ONNXTensorFile(contentsOf: file.deletingLastPathComponent().appendingPathComponent("\(stem)_output_0.pb"))
            ]
        } catch {
            return .failed("test data: \(error)")
        }
        let feeds = runnerInputs(of: model, ramp: true)
        var fallbacks: [String] = []
        if let end = await runSet(model, feeds, expected, policies: policies, fallbacks: &fallbacks) { return end }
        return fallbacks.isEmpty ? .passed : .passedWithFallback(Set(fallbacks).sorted().joined(separator: ", "))
    }

    /// An input for each of the model's inputs in its declared shape (a dimension without a fixed
    /// size is 1, as ONNX's runner makes it): `arange(n) / n` when `ramp` (the runner's inputs
    /// for the light models), else standard normal values (seeded by the input's position).
    package static func runnerInputs(of model: ONNXModel, ramp: Bool) -> [String: Tensor] {
        var feeds: [String: Tensor] = [:]
        for (index, input) in model.inputDescriptions.enumerated() {
            let shape = (input.multiArrayConstraint?.shape ?? []).map { dimension -> Int in
                if case .fixed(let size) = dimension { return size }
                return 1
            }
            let count = shape.reduce(1, *)
            feeds[input.name] =
                ramp
                ? Tensor(shape: shape, scalars: (0..<count).map { Float(Double($0) / Double(count)) })
                : Tensor(randomNormal: shape, seed: UInt64(index + 1))
        }
        return feeds
    }

    /// One data set on every policy: `nil` when it passes, else the outcome that ends the test.
    private static func runSet(
        _ model: ONNXModel, _ feeds: [String: Tensor], _ expected: [ONNXTensorFile], policies: [ComputePolicy],
        fallbacks: inout [String]
    ) async -> Outcome? {
        for policy in policies {
            var outcome = await compare(model, feeds, expected, policy: policy)
            if case .failed(let reason)? = outcome, reason.contains("no backend allowed by policy"),
                case .only(let backend) = policy
            {
                // The backend leaves some op to the reference: run as a user would, with it.
                fallbacks.append(backend.name)
                let widened: ComputePolicy = backend == .openblas ? .cpuOnly : .cpuAndGPU
                outcome = await compare(model, feeds, expected, policy: widened)
            }
            switch outcome {
            case nil, .passed?, .passedWithFallback?: continue
            case .skipped(let reason)?: return .skipped(reason)
            case .failed(let reason)?: return .failed("\(policy): \(reason)")
            }
        }
        return nil
    }

    private static func files(_ folder: URL, prefix: String) throws -> [ONNXTensorFile] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
            $0.hasPrefix(prefix) && $0.hasSuffix(".pb")
        }
        let sorted = names.sorted {
            Int($0.dropFirst(prefix.count).dropLast(3)) ?? 0 < Int($1.dropFirst(prefix.count).dropLast(3)) ?? 0
        }
        return try sorted.map { try ONNXTensorFile(contentsOf: folder.appendingPathComponent($0)) }
    }

    /// `nil` when every output matches, else what differs (or why the test cannot run).
    private static func compare(
        _ model: ONNXModel, _ feeds: [String: Tensor], _ expected: [ONNXTensorFile], policy: ComputePolicy
    ) async -> Outcome? {
        do {
            let outputs = try model.outputs(for: feeds)
            return try await compareOutputs(model, outputs, expected, policy: policy).map(Outcome.failed)
        } catch let error as ModelError where error.kind == .unsupportedOperators {
            return .skipped("unsupported operator: \(error.description)")
        } catch let error as ModelError where error.kind == .unsupportedType {
            return .skipped("unsupported type: \(error.description)")
        } catch {
            return .failed("\(error)")
        }
    }

    private static func compareOutputs(
        _ model: ONNXModel, _ outputs: [String: Tensor], _ expected: [ONNXTensorFile], policy: ComputePolicy
    ) async throws -> String? {
        do {
            try await Tensor.evaluate(Array(outputs.values), policy: policy)
            for (index, reference) in expected.enumerated() {
                let name =
                    model.outputDescriptions.contains { $0.name == reference.name }
                        || index >= model.outputDescriptions.count
                    ? reference.name : model.outputDescriptions[index].name
                guard let output = outputs[name], let value = output.node?.storedResult else {
                    return "output '\(name)' is missing"
                }
                guard output.shape == reference.shape else {
                    return "output '\(name)' has shape \(output.shape), expected \(reference.shape)"
                }
                let actual = try ParityHarness.doubles(value)
                for (position, (a, e)) in zip(actual, reference.values).enumerated() {
                    if a.isNaN && e.isNaN { continue }
                    let tolerance: Double = 1e-7 + 1e-3 * Swift.abs(e)
                    let close = reference.isExact ? a == e : (a == e || Swift.abs(a - e) <= tolerance)
                    if !close { return "output '\(name)'[\(position)] = \(a), expected \(e)" }
                }
            }
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The reasons tests may be listed in the manifest for: the loader reports the first two
    /// itself; the third is written by hand with the divergence it documents.
    package static func isSkipReason(_ reason: String) -> Bool {
        reason.hasPrefix("unsupported operator:") || reason.hasPrefix("unsupported type:")
            || reason.hasPrefix("no test data")
    }
}

extension ONNXConformance {
    /// Runs every test of the suites on the policies and returns the results in order; `filter`
    /// keeps the tests whose name contains it.
    package static func runSuites(
        _ suites: [String], policies: [ComputePolicy], filter: String? = nil, root: URL = directory(),
        progress: ((Result) -> Void)? = nil
    ) async -> [Result] {
        var results: [Result] = []
        for suite in suites {
            for folder in tests(in: suite, root: root)
            where filter.map({ folder.lastPathComponent.contains($0) }) ?? true {
                let result = Result(
                    suite: suite, name: folder.lastPathComponent, outcome: await run(folder, policies: policies))
                progress?(result)
                results.append(result)
            }
        }
        return results
    }

    /// `node: 1200 passed, 20 failed, 545 skipped (unsupported operator 500, unsupported type 45)`.
    package static func summary(_ results: [Result], suite: String) -> String {
        let mine = results.filter { $0.suite == suite }
        var passed = 0
        var failed = 0
        var fallbacks = 0
        var skipped: [String: Int] = [:]
        for result in mine {
            switch result.outcome {
            case .passed: passed += 1
            case .passedWithFallback:
                passed += 1
                fallbacks += 1
            case .failed: failed += 1
            case .skipped(let reason): skipped[String(reason.prefix { $0 != ":" }), default: 0] += 1
            }
        }
        let reasons = skipped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let skippedCount = skipped.values.reduce(0, +)
        let runnable = passed + failed
        let rate = runnable > 0 ? String(format: "%.1f", 100 * Double(passed) / Double(runnable)) : "-"
        return
            "\(suite): \(mine.count) tests, \(passed) passed (\(rate)% of those run; \(fallbacks) with ops the backend leaves "
            + "to the reference), \(failed) failed, \(skippedCount) skipped (\(reasons))"
    }

    /// The manifest: one line per test not passing, `suite/name<TAB>reason`, sorted.
    package static func manifest(_ results: [Result]) -> String {
        results.compactMap { result -> String? in
            switch result.outcome {
            case .passed, .passedWithFallback: nil
            case .skipped(let reason), .failed(let reason):
                "\(result.suite)/\(result.name)\t\(reason.replacingOccurrences(of: "\n", with: " ").prefix(300))"
            }
        }.joined(separator: "\n") + "\n"
    }
}
