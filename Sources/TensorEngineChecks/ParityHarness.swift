import TensorEngine
/// Runs parity cases on a backend and compares the results with the naive reference. Shared by
/// the Swift Testing suite and the `tensorengine-check` runner that ctest calls.
package enum ParityHarness {
    /// A host value's elements as `Double`s (exact for every scalar type the engine has).
    package static func doubles(_ value: Value) throws -> [Double] {
        let elements = try HostElements(value)
        return value.layout.elementOffsets().map { offset in
            value.scalarType.isFloatingPoint ? elements.double(offset) : Double(elements.long(offset))
        }
    }

    /// A host value's integer or boolean elements, row-major, exactly.
    package static func integers(_ value: Value) throws -> [Int64] {
        let elements = try HostElements(value)
        return value.layout.elementOffsets().map { elements.long($0) }
    }

    /// The outcome of one case on one policy.
    package enum Outcome {
        case match
        /// The policy's backends do not claim the case (the planner would place it elsewhere).
        case unclaimed(String)
        case mismatch(String)
    }

    /// `nil` when `backends` under `policy` reproduce the naive result of the case (or do not
    /// claim it), else a description of the whole case and the first mismatches.
    package static func mismatch(_ parityCase: ParityCase, backends: [any Backend]? = nil, policy: ComputePolicy) -> String? {
        switch check(parityCase, backends: backends, policy: policy) {
        case .match, .unclaimed: nil
        case .mismatch(let description): description
        }
    }

    package static func check(_ parityCase: ParityCase, policy: ComputePolicy) -> Outcome {
        check(parityCase, backends: nil, policy: policy)
    }

    static func check(_ parityCase: ParityCase, backends: [any Backend]?, policy: ComputePolicy) -> Outcome {
        let result = compare(parityCase, backends: backends, policy: policy)
        if let unclaimed = result.unclaimed { return .unclaimed(unclaimed) }
        return result.failure.map(Outcome.mismatch) ?? .match
    }

    private static func compare(_ parityCase: ParityCase, backends: [any Backend]?, policy: ComputePolicy) -> (failure: String?, unclaimed: String?) {
        switch compareCase(parityCase, backends: backends, policy: policy) {
        case .some(.unsupported(let reason)): return (nil, reason)
        case .some(.failed(let message)): return (message, nil)
        case .none: return (nil, nil)
        }
    }

    private enum Problem {
        case unsupported(String)
        case failed(String)
    }

    private static func compareCase(_ parityCase: ParityCase, backends: [any Backend]?, policy: ComputePolicy) -> Problem? {
        let reference = parityCase.build(parityCase.makeInputs(seed: 7))
        let candidate = parityCase.build(parityCase.makeInputs(seed: 7))
        guard let referenceNode = reference.node, let candidateNode = candidate.node else {
            return .failed("\(parityCase): the case does not build: \(String(describing: reference.error ?? candidate.error))")
        }
        let kernels: String
        do {
            let used = backends ?? Engine.shared.backends
            let plan = try Planner(backends: used, profiles: Engine.shared.profiles, policy: policy).plan(targets: [candidateNode])
            kernels = plan.steps.map { step in
                switch plan.kernel(of: step) {
                case .op(let op): "\(op.name)@\(step.backend)"
                case .fused(let region): "fused(\(region.name))@\(step.backend)"
                }
            }.joined(separator: ", ")
        } catch {
            if error.kind == .unsupported { return .unsupported(error.message) }
            return .failed("\(parityCase) on \(policy): planning failed: \(error)")
        }
        let expected: [Double]
        let actual: [Double]
        let outputType = referenceNode.signature.scalarType
        let referenceValue: Value
        let candidateValue: Value
        do {
            let (referenceValues, _) = try Engine.shared.run([referenceNode], policy: .only(.naive))
            referenceValue = referenceValues[0]
            expected = try doubles(referenceValue)
        } catch {
            return .failed("\(parityCase): the naive reference failed: \(error)")
        }
        do {
            let (values, _) = try Engine.shared.run([candidateNode], policy: policy, backends: backends)
            guard values[0].shape == referenceNode.signature.shape, values[0].scalarType == outputType else {
                return .failed("\(parityCase) on \(policy) [\(kernels)]: result \(describe(values[0].shape)) \(values[0].scalarType), expected \(describe(referenceNode.signature.shape)) \(outputType)")
            }
            candidateValue = values[0]
            actual = try doubles(candidateValue)
        } catch {
            return .failed("\(parityCase) on \(policy) [\(kernels)]: failed: \(error)")
        }
        // Integers and booleans are compared exactly, whole (an Int64 past 2^53 too).
        if !outputType.isFloatingPoint {
            do {
                let (want, got) = (try integers(referenceValue), try integers(candidateValue))
                let bad = zip(want, got).enumerated().filter { $0.element.0 != $0.element.1 }
                guard !bad.isEmpty else { return nil }
                let examples = bad.prefix(4).map { "[\($0.offset)] expected \($0.element.0), got \($0.element.1)" }
                return .failed("\(parityCase) on \(policy) [\(kernels)]: \(bad.count) of \(want.count) elements differ: \(examples.joined(separator: "; "))")
            } catch {
                return .failed("\(parityCase) on \(policy) [\(kernels)]: \(error)")
            }
        }
        var tolerance = parityCase.tolerance
        if outputType == .float16 { tolerance.relative = max(tolerance.relative, 0x1p-10) }  // one half-precision ulp
        // Accumulated rounding error grows with the size of the summed terms, so for reductions
        // the absolute bound scales with the result's magnitude; elementwise ops are per element.
        let largest = expected.lazy.filter(\.isFinite).map(Swift.abs).max() ?? 1
        let magnitude = parityCase.reductionLength > 1 ? max(1, largest) : 1
        // Float64 results are compared with all their digits (and a bound scaled in Double), the
        // others as the Floats they hold.
        let wide = outputType == .float64
        let scaled = Tolerance(absolute: tolerance.absolute * Float(min(magnitude, 1e30)), relative: tolerance.relative)
        let bad = zip(expected, actual).enumerated().filter { pair in
            let (want, got) = pair.element
            guard wide else { return !scaled.accepts(Float(got), Float(want)) }
            if got.isNaN || want.isNaN { return !(got.isNaN && want.isNaN) }
            if got == want { return false }
            if got.isInfinite || want.isInfinite { return true }
            let bound = Double(tolerance.absolute) * magnitude + Double(tolerance.relative) * Swift.abs(want)
            return Swift.abs(got - want) > bound
        }
        guard !bad.isEmpty else { return nil }
        let examples = bad.prefix(4).map { "[\($0.offset)] expected \($0.element.0), got \($0.element.1)" }.joined(separator: "; ")
        return .failed("\(parityCase) on \(policy) [\(kernels)]: \(bad.count) of \(expected.count) elements outside \(scaled): \(examples)")
    }
}

