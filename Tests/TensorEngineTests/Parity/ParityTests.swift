import Testing
@testable import TensorEngine
import TensorEngineChecks

/// The generated parity suite: every op's sample cases on every available backend, against naive.
@Suite("Parity with the naive reference")
struct ParityTests {
    /// The backends to check: every available one, or naive against itself when it is alone.
    static var policies: [ComputePolicy] {
        let others = Engine.shared.backends.map(\.id).filter { $0 != .naive }
        return others.isEmpty ? [.only(.naive)] : others.map(ComputePolicy.only) + [.all]
    }

    @Test("every op has parity cases")
    func everyOpIsCovered() {
        for kind in OpKind.allCases where kind != .constant {
            #expect(!kind.parityCases.isEmpty, "\(kind.name) has no parity cases")
        }
    }

    @Test("op matches the reference", arguments: ParityCase.all)
    func matchesReference(_ parityCase: ParityCase) {
        for policy in Self.policies {
            if let failure = ParityHarness.mismatch(parityCase, policy: policy) {
                Issue.record(Comment(rawValue: failure))
            }
        }
    }

    @Test("the harness catches a deliberately wrong backend")
    func catchesWrongBackend() {
        let wrong: [any Backend] = [DeliberatelyWrongBackend()]
        let floatCases = ParityCase.all.filter { parityCase in
            parityCase.inputs.allSatisfy { $0.type == .float32 && $0.shape.reduce(1, *) > 0 && $0.values == .mixed }
                && parityCase.build(parityCase.makeInputs(seed: 1)).dtype == .float32
                && !parityCase.kind.isView
        }
        #expect(floatCases.count > 50)
        for parityCase in floatCases.prefix(80) {
            let failure = ParityHarness.mismatch(parityCase, backends: wrong, policy: .only(.openblas))
            #expect(failure != nil, "a corrupted result passed: \(parityCase)")
        }
    }
}
