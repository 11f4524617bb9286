import TensorEngine
import Foundation

/// The fuzz targets' checks: what must hold for any input bytes. Shared by the `tensorfuzz`
/// executable (under libFuzzer, or replaying files) and the regression tests that replay every
/// input a fuzzer ever found.
///
/// Each check returns `nil` when the engine behaved (a correct result, or a typed error for bad
/// input) and a description of the finding otherwise. Crashes, hangs and memory errors are found
/// by the fuzzer and the sanitizers around the check, not by the check itself.
package enum FuzzChecks {
    /// The fuzz targets.
    package enum Target: String, CaseIterable, Sendable {
        /// The `.npy` reader: any bytes parse to a tensor that writes back to the same bytes'
        /// header and data, or give a ``FileFormatError``.
        case npy
        /// The safetensors reader: any file opens and loads every tensor, readable to its last
        /// byte, or gives a ``FileFormatError``.
        case safetensors
        /// The random-graph builder (``RandomGraph``): the naive and openblas backends agree on
        /// every output, or on the error.
        case graph
        /// The ONNX reader and importer: any bytes load as a model (whose graph then builds, and
        /// for small fixed inputs runs, on zeros) or give a ``FileFormatError`` or ``ModelError``.
        case onnx
        /// The Core ML reader and MIL importer: any bytes, as an `.mlmodel` file, load as a model
        /// (whose program then builds, and for small fixed inputs runs, on zeros) or give a
        /// ``FileFormatError`` or ``ModelError``.
        case coreml
    }

    /// Runs one target's check on one input, from synchronous code that is not running on the
    /// concurrency pool (a fuzzer's callback, a command-line tool's main thread): it blocks the
    /// calling thread until the check's evaluations are done.
    package static func check(_ target: Target, _ bytes: [UInt8]) -> String? {
        let box = FindingBox()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            box.finding = await run(target, bytes)
            done.signal()
        }
        done.wait()
        return box.finding
    }

    /// Runs one target's check on one input (from async code, such as the tests).
    package static func run(_ target: Target, _ bytes: [UInt8]) async -> String? {
        switch target {
        case .npy: await npy(bytes)
        case .safetensors: await safetensors(bytes)
        case .graph: await graph(bytes)
        case .onnx: await onnx(bytes)
        case .coreml: await coreml(bytes)
        }
    }

    // MARK: - .npy

    static func npy(_ bytes: [UInt8]) async -> String? {
        guard case .success(let (header, data)) = decodedNPY(bytes) else { return nil }
        let encoded = data.withUnsafeBytes { NPY.encode(shape: header.shape, type: header.scalarType, data: $0) }
        switch decodedNPY(Array(encoded)) {
        case .failure(let error):
            return "a file the reader accepted (\(header.shape), \(header.scalarType)) does not read back once written: \(error)"
        case .success(let (again, againData)):
            guard again.shape == header.shape, again.scalarType == header.scalarType, againData == data else {
                return "round trip changed the array: \(header.shape) \(header.scalarType) became \(again.shape) \(again.scalarType)"
            }
        }
        let tensor: Tensor
        do { tensor = try Tensor(npyData: Data(bytes)) } catch {
            return "ShapedArray-level decoding accepted the file but Tensor(npyData:) threw \(error)"
        }
        guard tensor.shape == header.shape else { return "Tensor(npyData:) has shape \(tensor.shape), header says \(header.shape)" }
        return await touch(tensor)
    }

    /// The header and a copy of the data of a `.npy` file's bytes.
    static func decodedNPY(_ bytes: [UInt8]) -> Result<(NPYHeader, [UInt8]), FileFormatError> {
        bytes.withUnsafeBytes { raw in
            let decoded = Result { () throws(FileFormatError) in try NPY.decode(raw) }
            return decoded.map { header, data in (header, Array(data)) }
        }
    }

    // MARK: - safetensors

    static func safetensors(_ bytes: [UInt8]) async -> String? {
        let url = FileManager.default.temporaryDirectory.appending(path: "tensorfuzz-\(getpid()).safetensors")
        defer { try? FileManager.default.removeItem(at: url) }
        do { try Data(bytes).write(to: url) } catch { return nil }
        let file: SafetensorsFile
        do { file = try SafetensorsFile(url: url) } catch { return nil }
        for name in file.tensorNames {
            let tensor: Tensor
            do { tensor = try file.tensor(named: name) } catch { continue }
            guard let entry = file.entry(named: name), tensor.scalarCount == entry.shape.reduce(1, *) else {
                return "tensor '\(name)' loaded with \(tensor.scalarCount) elements, its header entry says otherwise"
            }
            if let finding = await touch(tensor) { return "tensor '\(name)': \(finding)" }
        }
        return nil
    }

    /// Reads every element of `tensor` on the naive backend (so a sanitizer sees any read past
    /// the data), expecting success.
    static func touch(_ tensor: Tensor) async -> String? {
        do throws(TensorError) {
            try await Tensor.evaluate([tensor.flattened()], policy: .only(.naive))
            return nil
        } catch {
            return "reading a loaded tensor failed: \(error)"
        }
    }

    // MARK: - ONNX

    static func onnx(_ bytes: [UInt8]) async -> String? {
        let model: ONNXModel
        switch loaded(bytes, extension: "onnx", ONNXModel.init(contentsOf:configuration:)) {
        case .loaded(let onnx): model = onnx
        case .rejected: return nil
        case .finding(let finding): return finding
        }
        // Zeros for every input, symbolic sizes taken as 2; only small graphs run.
        guard let shapes = smallInputShapes(model.inputDescriptions) else { return nil }
        var inputs: [String: Tensor] = [:]
        for description in model.inputDescriptions {
            guard let constraint = description.multiArrayConstraint, let shape = shapes[description.name] else {
                return nil
            }
            inputs[description.name] = Tensor(zerosOf: constraint.dataType, shape: shape)
        }
        let outputs: [String: Tensor]
        do { outputs = try model.outputs(for: inputs) } catch { return nil }
        for (name, output) in outputs where output.error == nil && output.scalarCount <= 1 << 16 {
            do { try await Tensor.evaluate([output], policy: .only(.naive)) } catch {
                if error.kind == .backendFailure { return "output '\(name)': the naive backend failed: \(error)" }
            }
        }
        return nil
    }

    // MARK: - Core ML

    static func coreml(_ bytes: [UInt8]) async -> String? {
        let model: CoreMLModel
        switch loaded(bytes, extension: "mlmodel", CoreMLModel.init(contentsOf:configuration:)) {
        case .loaded(let coreML): model = coreML
        case .rejected: return nil
        case .finding(let finding): return finding
        }
        // Zeros for every input of a small shape; open sizes taken as 2.
        guard let shapes = smallInputShapes(model.modelDescription.inputDescriptions) else { return nil }
        do {
            let plan = try model.computePlan(inputShapes: shapes, policy: .only(.naive))
            // Only small programs run: every step's result under 2^16 elements.
            let small = plan.enginePlan.operations.allSatisfy { $0.shape.reduce(1) { $0 &* $1 } <= 1 << 16 }
            guard small else { return nil }
            _ = try await plan.enginePlan.evaluate()
        } catch let error as TensorError where error.kind == .backendFailure {
            return "the naive backend failed: \(error)"
        } catch {
            return nil
        }
        return nil
    }

    // MARK: - model files

    /// What loading fuzzed bytes as a model gave.
    enum Loading<Model> {
        case loaded(Model)
        /// A typed error: the right answer for a malformed file.
        case rejected
        /// Any other error.
        case finding(String)
    }

    /// The bytes written to a temporary file with `extension` and loaded by `load`.
    static func loaded<Model>(
        _ bytes: [UInt8], extension name: String, _ load: (URL, ModelConfiguration) throws -> Model
    ) -> Loading<Model> {
        let url = FileManager.default.temporaryDirectory.appending(path: "tensorfuzz-\(getpid()).\(name)")
        defer { try? FileManager.default.removeItem(at: url) }
        do { try Data(bytes).write(to: url) } catch { return .rejected }
        do {
            return .loaded(try load(url, ModelConfiguration()))
        } catch is FileFormatError {
            return .rejected
        } catch is ModelError {
            return .rejected
        } catch {
            return .finding("loading threw \(type(of: error)), not FileFormatError or ModelError: \(error)")
        }
    }

    /// Each input's shape with open sizes taken as 2, or `nil` when an input is not a tensor of a
    /// known rank or the inputs are large (at most 4,096 elements each, 16,384 in all; an empty
    /// input may have a huge extent beside its empty one).
    static func smallInputShapes(_ descriptions: [FeatureDescription]) -> [String: [Int]]? {
        var shapes: [String: [Int]] = [:]
        var elements = 0
        for description in descriptions {
            guard let shape = description.multiArrayConstraint?.shape else { return nil }
            let sizes = shape.map { dimension -> Int in
                if case .fixed(let size) = dimension { return size }
                return 2
            }
            guard let count = sizes.reduce(Optional(1), { partial, size in
                partial.flatMap { $0.multipliedReportingOverflow(by: size).overflow ? nil : $0 * size }
            }), count <= 4096
            else { return nil }
            elements += count
            shapes[description.name] = sizes
        }
        return elements <= 16384 ? shapes : nil
    }

    // MARK: - random graphs

    /// The most elements a tensor of a checked graph program may have.
    static let largestCheckedTensor = 1 << 24

    /// Where the graph check describes each output's outcome (`tensorfuzz --verbose`).
    nonisolated(unsafe) package static var report: ((String) -> Void)?

    static func graph(_ bytes: [UInt8]) async -> String? {
        let reference = RandomGraph(decoding: bytes)
        let candidate = RandomGraph(decoding: bytes)
        report?("program: " + reference.entries.map { "\($0.step)\($0.tensor.shape)" }.joined(separator: " "))
        // The check holds each output as `Double`s, twice: a program with a tensor of more than
        // 2²⁴ elements (a broadcast of two reshaped products reached 1.3·10⁹) is not run.
        guard reference.entries.allSatisfy({ RandomGraph.elements($0.tensor.shape) <= Self.largestCheckedTensor }) else {
            report?("not run: a tensor has more than \(Self.largestCheckedTensor) elements")
            return nil
        }
        for (index, (want, got)) in zip(reference.outputs, candidate.outputs).enumerated() {
            let expected = await values(of: want.tensor, policy: .only(.naive))
            if case .failure(let error) = expected, error.kind == .backendFailure {
                return "output \(index) (\(want.step)): the naive backend failed: \(error)"
            }
            var actual = await values(of: got.tensor, policy: .only(.openblas))
            if case .failure(let error) = actual, error.kind == .unsupported, error.op != "plan" {
                // An op openblas does not claim: the planner places it on the naive backend.
                actual = await values(of: RandomGraph(decoding: bytes).outputs[index].tensor, policy: .cpuOnly)
            }
            if let report {
                let outcome = switch expected {
                case .success(let result): "\(result.shape)"
                case .failure(let error): "\(error.kind) (\(error.op): \(error.message))"
                }
                report("output \(index) (\(want.step), \(want.precision)): \(outcome)")
            }
            if let finding = await compare(expected, actual, entry: want) {
                let steps = reference.entries.map(\.step).joined(separator: " ")
                return "output \(index) (\(want.step), \(want.precision)) of program [\(steps)]: \(finding)"
            }
        }
        return nil
    }

    /// An evaluated tensor's shape and elements (as `Double`s), or its error.
    package static func values(of tensor: Tensor, policy: ComputePolicy) async -> Result<(shape: [Int], elements: [Double]), TensorError> {
        do throws(TensorError) {
            try await Tensor.evaluate([tensor], policy: policy)
            let elements: [Double] = switch tensor.dtype {
            case .float32: try await tensor.shapedArray(of: Float.self).scalars.map { Double($0) }
            case .float16: try await tensor.shapedArray(of: Float16.self).scalars.map { Double($0) }
            case .int32: try await tensor.shapedArray(of: Int32.self).scalars.map { Double($0) }
            case .bool: try await tensor.shapedArray(of: Bool.self).scalars.map { $0 ? 1 : 0 }
            case .int64: try await tensor.shapedArray(of: Int64.self).scalars.map { Double($0) }
            case .float64: try await tensor.shapedArray(of: Double.self).scalars
            }
            return .success((tensor.shape, elements))
        } catch {
            return .failure(error)
        }
    }

    /// Compares the reference (naive) and candidate results of one entry.
    ///
    /// Exact entries must match bit for bit (NaN matching NaN, either zero the other). An
    /// approximate element passes within ``RandomGraph/tolerance`` relative (absolute below
    /// magnitude 1) or, failing that, within the entry's propagated bound
    /// (``RandomGraph/Entry/bound``), evaluated on the naive backend only then: a result made by
    /// cancellation may be far smaller than its terms, and the rounding of the terms, not of the
    /// result, bounds the difference. Where the bound is infinite (magnitudes upstream overflowed
    /// `Float`, or a product's partial products may have) or NaN (such a bound times zero), any
    /// candidate element is accepted; a non-finite reference element must otherwise be matched
    /// exactly.
    package static func compare(
        _ expected: Result<(shape: [Int], elements: [Double]), TensorError>,
        _ actual: Result<(shape: [Int], elements: [Double]), TensorError>,
        entry: RandomGraph.Entry
    ) async -> String? {
        switch (expected, actual) {
        case (.failure(let want), .failure(let got)):
            return want.kind == got.kind ? nil : "naive threw \(want.kind) (\(want)), openblas threw \(got.kind) (\(got))"
        case (.failure(let want), .success):
            return "naive threw \(want), openblas gave a result"
        case (.success, .failure(let got)):
            return "naive gave a result, openblas threw \(got)"
        case (.success(let want), .success(let got)):
            guard want.shape == got.shape, want.elements.count == got.elements.count else {
                return "shapes differ: naive \(want.shape), openblas \(got.shape)"
            }
            let pairs = Array(zip(want.elements, got.elements))
            guard let first = pairs.firstIndex(where: { !agree($0, $1, entry.precision) }) else { return nil }
            guard entry.precision == .approximate, let boundTensor = entry.bound else {
                return "element \(first) of \(want.shape): naive \(pairs[first].0), openblas \(pairs[first].1)"
            }
            let bound: [Double]
            switch await values(of: boundTensor, policy: .only(.naive)) {
            case .failure(let error): return "the error bound of an approximate result could not be evaluated: \(error)"
            case .success(let evaluated):
                guard evaluated.elements.count == pairs.count else {
                    return "the error bound has shape \(evaluated.shape), the result \(want.shape)"
                }
                bound = evaluated.elements
            }
            let unbounded = bound.map { $0 == .infinity || $0.isNaN }
            for (index, (w, g)) in pairs.enumerated() where !unbounded[index] && !agree(w, g, entry.precision) {
                guard w.isFinite, Swift.abs(w - g) <= bound[index] else {
                    let apart = "apart by more than the bound \(bound[index])"
                    return "element \(index) of \(want.shape): naive \(w), openblas \(g), \(apart)"
                }
            }
            return nil
        }
    }

    /// Whether two elements agree within the plain tolerance of their precision.
    static func agree(_ want: Double, _ got: Double, _ precision: RandomGraph.Precision) -> Bool {
        if want == got || (want.isNaN && got.isNaN) { return true }
        switch precision {
        case .exact: return false
        case .approximate:
            let allowed = RandomGraph.tolerance * Swift.max(1, Swift.abs(want))
            return want.isFinite && got.isFinite && Swift.abs(want - got) <= allowed
        case .unstable: return true
        }
    }
}

/// A finding handed from a task to the thread waiting for it (the semaphore orders the accesses).
private final class FindingBox: @unchecked Sendable {
    var finding: String?
}
