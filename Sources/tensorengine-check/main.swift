import Foundation
import TensorEngine
import TensorEngineChecks

// `tensorengine-check [--policy NAME]`: the parity suite and the error checks as a plain program,
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
let policies: [ComputePolicy]
switch Array(CommandLine.arguments.dropFirst()) {
case []:
    policies = available.filter { $0 != .naive }.map(ComputePolicy.only) + [.all]
case let arguments where arguments.count == 2 && arguments[0] == "--policy":
    do {
        policies = [try ComputePolicy(name: arguments[1])]
    } catch {
        print("tensorengine-check: \(error.message)")
        exit(2)
    }
    if case .only(let backend) = policies[0], !available.contains(backend) {
        print("tensorengine-check: \(backend) is unavailable: "
            + (BackendStatus.all.first { $0.id == backend }?.unavailableReason ?? "unknown"))
        exit(1)
    }
default:
    print("usage: tensorengine-check [--policy auto|cpuOnly|cpuAndGPU|BACKEND]")
    exit(2)
}
print("backends: \(available.map(\.name).joined(separator: ", ")); \(ParityCase.all.count) parity cases; "
    + "policies: \(policies.map(\.description).joined(separator: ", "))")

for parityCase in ParityCase.all {
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

for check in ErrorChecks.all {
    if let problem = await check.run() {
        failed += 1
        print("FAIL error check \(check.name): \(problem)")
    } else {
        passed += 1
    }
}

print("\(passed) passed, \(failed) failed")
exit(failed == 0 ? 0 : 1)
