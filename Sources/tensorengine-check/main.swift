import Foundation
import TensorEngine
import TensorEngineChecks

// `tensorengine-check [--policy NAME] [--op NAME]...`: the parity suite (of the ops named, or all) and the error checks as a plain program,
// for ctest and for builds without a test framework. It runs the same cases as the Swift Testing
// suite (both read them from the op table), under every available backend but the naive one and
// `auto`, or under the one policy named, and ends with "N passed, M failed".

// `tensorengine-check onnx [SUITE...] [--policy NAME] [--filter TEXT] [--manifest FILE]`: ONNX's
// backend test suites (scripts/fetch-onnx-tests.sh), with counts per suite and, with --manifest,
// the list of tests not passing and why.
if CommandLine.arguments.dropFirst().first == "onnx" {
    exit(await runONNXConformance(Array(CommandLine.arguments.dropFirst(2))))
}

var passed = 0
var failed = 0
var unclaimed: [BackendID: Int] = [:]

let available = BackendStatus.all.filter(\.isAvailable).map(\.id)
var policies = available.filter { $0 != .naive }.map(ComputePolicy.only) + [.all]
/// The op names `--op` keeps (all ops when empty).
var chosenOps: Set<String> = []
var arguments = Array(CommandLine.arguments.dropFirst())[...]
while let argument = arguments.popFirst() {
    switch argument {
    case "--policy":
        guard let name = arguments.popFirst() else { break }
        do {
            policies = [try ComputePolicy(name: name)]
        } catch {
            print("tensorengine-check: \(error.message)")
            exit(2)
        }
        if case .only(let backend) = policies[0], !available.contains(backend) {
            print("tensorengine-check: \(backend) is unavailable: "
                + (BackendStatus.all.first { $0.id == backend }?.unavailableReason ?? "unknown"))
            exit(1)
        }
    case "--op":
        guard let name = arguments.popFirst() else { break }
        chosenOps.insert(name)
    default:
        print("usage: tensorengine-check [--policy auto|cpuOnly|cpuAndGPU|BACKEND] [--op NAME]...")
        exit(2)
    }
}
let cases = chosenOps.isEmpty ? ParityCase.all : ParityCase.all.filter { chosenOps.contains($0.kind.name) }
print("backends: \(available.map(\.name).joined(separator: ", ")); \(cases.count) parity cases; "
    + "policies: \(policies.map(\.description).joined(separator: ", "))")

for parityCase in cases {
    for policy in policies {
        switch ParityHarness.check(parityCase, policy: policy) {
        case .match:
            passed += 1
        case .unclaimed:
            if case .only(let kind) = policy { unclaimed[kind, default: 0] += 1 }
        case .mismatch(let description):
            failed += 1
            print("FAIL parity: \(description)")
        }
    }
}
for (kind, count) in unclaimed.sorted(by: { $0.key.name < $1.key.name }) {
    print("\(kind) does not claim \(count) cases (the planner places them elsewhere)")
}

for check in chosenOps.isEmpty ? ErrorChecks.all : [] {
    if let problem = await check.run() {
        failed += 1
        print("FAIL error check \(check.name): \(problem)")
    } else {
        passed += 1
    }
}

print("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
