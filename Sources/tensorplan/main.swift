import Foundation
import TensorEngine
import TensorEngineChecks

/// `tensorplan`: dumps the compute plan of any named workload, calibrates device profiles, and
/// lists backends. Hand-written argument parsing (no outside packages are used).
let usage = """
    usage: tensorplan WORKLOAD [--format text|json|dot] [--policy POLICY] [--measure [--runs N]]
           tensorplan MODEL [--format text|json|dot] [--policy POLICY] [--input-shape NAME=1x128 ...]
                                 [--engine-ops]
           tensorplan calibrate
           tensorplan devices
           tensorplan quality [--policy POLICY] [--runs N] [--detail] [--csv FILE]
           tensorplan list

      WORKLOAD          a tensorbench workload name (see `tensorplan list`)
      MODEL             an ONNX model (.onnx, or a folder Model.compileModel(at:) made) or a Core ML
                        ML Program (.mlpackage, .mlmodel): its plan by ONNX node or MIL operation
                        (name, op type, device, estimate, share)
      --input-shape S   the shape of a model input, NAME=DIMxDIM... (inputs not named take their
                        declared shape, which must be fixed)
      --engine-ops      for a model, print the engine's own plan after the model's
      --format FORMAT   text (an aligned table, the default), json, or dot (Graphviz)
      --policy POLICY   \(ComputePolicy.names.joined(separator: ", ")) (default: auto, or TENSORENGINE_POLICY)
      --measure         run the plan once to warm up, then --runs times (default: 5), and show each
                        operation's median measured time beside its estimate
      calibrate         measure every available backend's profile (a few seconds) and store it
      devices           list backends, their devices and profiles, and why any is unavailable
      quality           estimated vs measured per-op times over every workload: Spearman rank
                        correlation and median relative error per backend, and planning cost
      --runs N          measure, quality: measured runs per workload, each op's median taken (default:
                        5 for --measure, 3 for quality)
      --detail          quality: also a table per backend and op kind of median estimate,
                        measurement and their ratio
      --csv FILE        quality: also write every op's estimate and measured median to FILE
                        (backend, workload, index, op, shape, FLOPs, bytes, seconds)
      list              list the workloads
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tensorplan: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(arguments.isEmpty ? 2 : 0)
}

var format = "text"
var policyName: String?
var measure = false
var qualityRuns = 3
var measureRuns = 5
var detail = false
var csvPath: String?
var positional: [String] = []
var inputShapes: [String: [Int]] = [:]
var engineOps = false
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    switch argument {
    case "--format":
        guard index + 1 < arguments.count else { fail("--format needs a value: text, json or dot") }
        format = arguments[index + 1]
        guard ["text", "json", "dot"].contains(format) else { fail("unknown format '\(format)'; valid: text, json, dot") }
        index += 2
    case "--policy":
        guard index + 1 < arguments.count else { fail("--policy needs a value") }
        policyName = arguments[index + 1]
        index += 2
    case "--measure":
        measure = true
        index += 1
    case "--runs":
        guard index + 1 < arguments.count, let runs = Int(arguments[index + 1]), runs > 0 else { fail("--runs needs a positive count") }
        qualityRuns = runs
        measureRuns = runs
        index += 2
    case "--input-shape":
        guard index + 1 < arguments.count, let equals = arguments[index + 1].firstIndex(of: "=") else {
            fail("--input-shape needs NAME=DIMxDIM...")
        }
        let text = arguments[index + 1]
        let dims = text[text.index(after: equals)...].split(separator: "x").map { Int($0) }
        guard dims.allSatisfy({ $0 != nil && $0! >= 0 }) else { fail("--input-shape '\(text)': sizes must be non-negative integers") }
        inputShapes[String(text[..<equals])] = dims.compactMap { $0 }
        index += 2
    case "--engine-ops":
        engineOps = true
        index += 1
    case "--detail":
        detail = true
        index += 1
    case "--csv":
        guard index + 1 < arguments.count else { fail("--csv needs a file path") }
        csvPath = arguments[index + 1]
        index += 2
    default:
        guard !argument.hasPrefix("-") else { fail("unknown option '\(argument)' (see --help)") }
        positional.append(argument)
        index += 1
    }
}
guard positional.count == 1 else { fail("expected one command or workload name (see --help)") }

let policy: ComputePolicy?
do {
    policy = try policyName.map(ComputePolicy.init(name:))
} catch {
    fail(error.description)
}

/// A profile as an indented table: a row per cost class, a column per cost term.
func describeProfile(_ profile: DeviceProfile) -> String {
    func number(_ value: Double, scale: Double = 1) -> String { value == 0 ? "-" : String(format: "%.1f", value * scale) }
    func rate(_ row: CostTerms) -> String {
        guard row.gflops.count > 1 else { return number(row.gflops.first?.gflops ?? 0) }
        // A curve: each point at the edge of the cube product it was measured on, or at its FLOPs.
        return row.gflops.map { point in
            let edge = cbrt(point.flops / 2).rounded()
            return 2 * edge * edge * edge == point.flops
                ? String(format: "%.1f@%.0f³", point.gflops, edge)
                : String(format: "%.1f@%.1fM", point.gflops, point.flops / 1e6)
        }.joined(separator: " ")
    }
    let busy = profile.measuredOnBusyMachine.map {
        " on a busy machine \(Int(-$0.timeIntervalSinceNow / 60)) minutes ago (measured again after 10)"
    } ?? ""
    let state = profile.calibrated ? "calibrated" + busy : "uncalibrated defaults"
    var lines = ["    \(state), \(profile.threads) threads; "
        + (profile.transfer.map { String(format: "transfer %.1f GB/s", $0.gbPerSecond) } ?? "host memory")
        + String(
            format: "; engine %.2f µs per operation, %.2f µs per evaluation", profile.secondsPerOperation * 1e6,
            profile.secondsPerEvaluation * 1e6)
        + (profile.memory.map {
            String(
                format: "; beyond %.0f MiB of cache, memory streams at %.1f GB/s (reads %.1f, writes %.1f)",
                $0.cacheBytes / 1_048_576, $0.gbPerSecond, $0.readRate, $0.writeRate)
        } ?? "")]
    let header = ["class", "GFLOP/s", "GB/s", "launch µs", "per line ns", "per operand µs", "memory GB/s"]
    var rows = [header]
    for costClass in CostClass.allCases {
        let row = profile.row(costClass)
        rows.append([costClass.rawValue, rate(row), number(row.gbPerSecond), number(row.launchSeconds, scale: 1e6),
                     number(row.secondsPerLine, scale: 1e9), number(row.secondsPerOperand, scale: 1e6),
                     row.memoryGBPerSecond.map { number($0) } ?? "stream"])
    }
    let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    for row in rows {
        lines.append("    " + row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  "))
    }
    return lines.joined(separator: "\n")
}

switch positional[0] {
case "list":
    for workload in Workload.all { print(workload.name.padding(toLength: 16, withPad: " ", startingAt: 0), workload.summary) }
case "devices":
    for status in BackendStatus.all {
        if let profile = status.profile, let device = status.deviceName {
            print("\(status.id): \(device)\n\(describeProfile(profile))")
        } else {
            print("\(status.id): unavailable: \(status.unavailableReason ?? "unknown")")
        }
    }
    print("profiles: \(ProfileStore.fileURL.path)")
case "calibrate":
    do {
        let profiles = try Calibration.calibrateAll { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        for profile in profiles { print("\(profile.backend): \(profile.deviceName)\n\(describeProfile(profile))") }
        print("stored in \(ProfileStore.fileURL.path)")
    } catch {
        fail("calibration failed: \(error)")
    }
case "quality":
    await runQuality(policy: policy ?? .all, runs: qualityRuns, detail: detail, csvPath: csvPath)
case let path
where path.hasSuffix(".onnx") || path.hasSuffix(".mlpackage") || path.hasSuffix(".mlmodel")
    || path.hasSuffix(".mlpackage/") || FileManager.default.fileExists(atPath: path + "/manifest.json"):
    do {
        let implementation = try Model(contentsOf: URL(fileURLWithPath: path)).implementation
        let plan: ModelComputePlan
        let header: String
        if let model = implementation as? ONNXModel {
            plan = try model.computePlan(inputShapes: inputShapes, policy: policy)
            header = "\(path): \(model.producer), opset \(model.opsetVersion), \(model.nodeCount) nodes"
        } else if let model = implementation as? CoreMLModel {
            plan = try model.computePlan(inputShapes: inputShapes, policy: policy)
            header =
                "\(path): Core ML ML Program, specification \(model.specificationVersion), function "
                + "\(model.functionName) (\(model.opset)), \(model.operationCount) operations"
        } else {
            fail("\(path) is not a model graph the planner can describe")
        }
        switch format {
        case "json": print(plan.json())
        case "dot": print(plan.dot())
        default:
            print(header)
            let description = implementation.modelDescription
            for feature in description.inputDescriptions { print("  input  \(feature)") }
            for feature in description.stateDescriptions { print("  state  \(feature)") }
            for feature in description.outputDescriptions { print("  output \(feature)") }
            print(plan.text())
            if measure {
                print(try await plan.enginePlan.measured(runs: measureRuns).text())
            } else if engineOps {
                print(plan.enginePlan.text())
            }
        }
    } catch {
        fail("\(error)")
    }
case let name:
    guard let workload = Workload.named(name) else {
        fail("unknown workload '\(name)'; valid: \(Workload.all.map(\.name).joined(separator: ", "))")
    }
    do {
        let graph = try await workload.preparedGraph()
        var plan = try ComputePlan(for: graph(), policy: policy)
        if measure { plan = try await plan.measured(runs: measureRuns) }
        switch format {
        case "json": print(plan.json())
        case "dot": print(plan.dot())
        default: print(plan.text())
        }
    } catch {
        fail("\(error)")
    }
}
