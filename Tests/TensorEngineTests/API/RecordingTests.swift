import Testing
@testable import TensorEngine

/// The front end's shortcuts for the commonest recordings: shared one-element constants, and a
/// binary elementwise op on operands of one signature.
@Suite("Recording")
struct RecordingTests {
    /// One constant per value, type and rank, whatever else the cache held in between; values
    /// that compare equal but differ in their bits (0 and -0) are different constants.
    @Test func scalarConstantsAreSharedByValueTypeAndRank() async throws {
        let first = try #require(Tensor.scalar(1.5, .float32).node)
        #expect(Tensor.scalar(1.5, .float32).node === first)
        #expect(Tensor.scalar(1.5, .float64).node !== first)
        #expect(Tensor.scalar(1.5, .float32, shape: [1]).node !== first)
        #expect(Tensor.scalar(1.5, .float32, shape: [1]).node === Tensor.scalar(1.5, .float32, shape: [1]).node)
        #expect(Tensor.scalar(0, .float32).node !== Tensor.scalar(-0.0, .float32).node)
        // Thousands of other scalars later, each constant still holds its own value.
        for index in 0..<5000 {
            let value = Double(index) * 0.25
            let constant = Tensor.scalar(value, .float32, shape: index % 2 == 0 ? [] : [1, 1])
            #expect(try await constant.shapedArray(of: Float.self).scalars == [Float(value)])
        }
        #expect(try await Tensor.scalar(-0.0, .float32).shapedArray(of: Float.self).scalars[0].sign == .minus)
        #expect(try await Tensor.scalar(1.5, .float32).shapedArray(of: Float.self).scalars == [1.5])
    }

    /// For every binary op whose row lets operands of one signature skip its rules, and every
    /// scalar type: the recorded node has the signature the rules give, or the tensor carries the
    /// error they throw.
    @Test func theSameSignatureShortcutAgreesWithTheRules() throws {
        let kinds = OpKind.allCases.filter { $0.descriptor.sameSignatureTypes != nil && $0.descriptor.arity.accepts(2) }
        #expect(kinds.contains(.add) && kinds.contains(.multiply) && !kinds.contains(.less))
        for kind in kinds {
            for type in ScalarType.allCases {
                let operand = try #require(Tensor.scalar(1, type, shape: [1, 1]).node)
                let signature = operand.signature
                let recorded = Tensor.record(Op(kind), operand, operand, at: nil)
                do throws(RuleViolation) {
                    let expected = try Op(kind).outputSignature(for: [signature, signature])
                    #expect(recorded.node?.signature == expected, "\(kind) on \(type)")
                    #expect(recorded.node?.layout.isRowMajor(shape: expected.shape) == true, "\(kind) on \(type)")
                } catch {
                    #expect(recorded.error?.kind == error.kind, "\(kind) on \(type)")
                }
            }
        }
    }
}
