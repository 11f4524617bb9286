import Foundation
import TensorEngine
import TensorEngineChecks

// `tensorengine-check`: the parity suite and the error checks as a plain program, for ctest and
// for builds without a test framework. It runs the same cases as the Swift Testing suite (both
// read them from the op table) and ends with "N passed, M failed".

var passed = 0
var failed = 0
var unclaimed: [BackendID: Int] = [:]

let available = BackendStatus.all.filter(\.isAvailable).map(\.id)
let policies = available.filter { $0 != .naive }.map(ComputePolicy.only) + [.all]
print("backends: \(available.map(\.name).joined(separator: ", ")); \(ParityCase.all.count) parity cases")

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
