import Foundation
import Testing
@testable import TensorEngine

/// The openblas backend's vector elementary functions against the C library, lane by lane, over a
/// dense sweep: every float step near 0 (subnormals and ±0 included), relative steps of 1e-4 up
/// to the saturation and overflow points, and the special values.
@Suite("VectorMath")
struct VectorMathTests {
    /// ±0, then from the least subnormal to 1 in ratios of 1.01 (or one float step, whichever is
    /// larger), then to `limit` in steps of 1e-4 relative; both signs.
    static func sweep(to limit: Float) -> [Float] {
        var values: [Float] = [0, -0.0, .leastNormalMagnitude]
        var x = Float.leastNonzeroMagnitude
        while x < 1 { values.append(x); x = max(x * 1.01, x.nextUp) }
        while x < limit { values.append(x); x += x * 1e-4 }
        return values + values.map { -$0 }
    }

    /// The largest relative error of `vector` against `reference` over `inputs`, relative to the
    /// expected value or to the smallest normal float if that is larger (a subnormal result has
    /// fewer bits to be relative to). 0 where both agree exactly, signed zeros and NaN included;
    /// a lone NaN or a sign mismatch counts as infinite.
    static func worstRelativeError(_ inputs: [Float], _ vector: (FloatVector) -> FloatVector, _ reference: (Float) -> Float) -> (error: Float, at: Float) {
        var worst: (error: Float, at: Float) = (0, 0)
        for start in stride(from: 0, to: inputs.count, by: 8) {
            var lanes = FloatVector(repeating: 0)
            for lane in 0..<8 where start + lane < inputs.count { lanes[lane] = inputs[start + lane] }
            let results = vector(lanes)
            for lane in 0..<8 where start + lane < inputs.count {
                let x = inputs[start + lane], expected = reference(x), actual = results[lane]
                let error: Float
                if (expected == actual && expected.sign == actual.sign) || (expected.isNaN && actual.isNaN) { error = 0 }
                else if expected.isNaN || actual.isNaN || expected.sign != actual.sign { error = .infinity }
                else { error = abs(actual - expected) / max(abs(expected), .leastNormalMagnitude) }
                if error > worst.error { worst = (error, x) }
            }
        }
        return worst
    }

    @Test func tanhAgreesWithTheCLibrary() {
        let worst = Self.worstRelativeError(Self.sweep(to: 20), VectorMath.tanh, Foundation.tanh)
        #expect(worst.error <= 4e-7, "worst \(worst.error) at \(worst.at)")
        let special = VectorMath.tanh(FloatVector(.nan, .infinity, -.infinity, 100, -100, 0, -0.0, .leastNonzeroMagnitude))
        #expect(special[0].isNaN)
        #expect(Array(0..<8).dropFirst().map { special[$0] } == [1, -1, 1, -1, 0, 0, .leastNonzeroMagnitude])
        #expect(special[6].sign == .minus)
    }

    @Test func erfAgreesWithTheCLibrary() {
        let worst = Self.worstRelativeError(Self.sweep(to: 12), VectorMath.erf, Foundation.erf)
        #expect(worst.error <= 4e-7, "worst \(worst.error) at \(worst.at)")
        #expect(VectorMath.erf(FloatVector(repeating: .nan))[0].isNaN)
    }

    @Test func expAgreesWithTheCLibrary() {
        let inputs = Self.sweep(to: 88.7) + [88.72, 89, -87.3, -88, -104, .infinity, -.infinity, .nan]
        let worst = Self.worstRelativeError(inputs, VectorMath.exp, Foundation.exp)
        #expect(worst.error <= 2 * Float.ulpOfOne, "worst \(worst.error) at \(worst.at)")
    }

    /// Softmax's exponential: the C library's down to -87.3, then 0 where eˣ is subnormal or within
    /// 5% of the smallest normal float (the flush that keeps subnormals out of its arithmetic).
    @Test func expOfNonPositiveAgreesWithTheCLibraryAndFlushesBelowTheNormals() {
        let bound = VectorMath.flushBound
        #expect(Foundation.exp(bound) > Float.leastNormalMagnitude)
        #expect(Foundation.exp(bound) < 1.05 * Float.leastNormalMagnitude)
        let inputs = Self.sweep(to: 110).filter { $0 <= 0 } + [-87.3, -87.299_99, -87.300_01, -.infinity, .nan]
        let worst = Self.worstRelativeError(inputs, VectorMath.expOfNonPositive) { x in
            x < bound ? 0 : Foundation.exp(x)
        }
        #expect(worst.error <= 2 * Float.ulpOfOne, "worst \(worst.error) at \(worst.at)")
    }

    @Test func sigmoidAgreesWithItsDefinition() {
        let inputs = Self.sweep(to: 110) + [.infinity, -.infinity, .nan]
        let worst = Self.worstRelativeError(inputs, VectorMath.sigmoid) { 1 / (1 + Foundation.exp(-$0)) }
        #expect(worst.error <= 4 * Float.ulpOfOne, "worst \(worst.error) at \(worst.at)")
    }

    @Test func reciprocalIsWithinTwoUlps() {
        var values: [Float] = []
        var x: Float = 1e-30
        while x < 1e30 { values.append(x); x *= 1.001 }
        let worst = Self.worstRelativeError(values + values.map { -$0 }, VectorMath.reciprocal) { 1 / $0 }
        #expect(worst.error <= 2 * Float.ulpOfOne, "worst \(worst.error) at \(worst.at)")
    }

    /// The row reduction at every length to 70 (all of the 32-lane blocks, 8-lane blocks and scalar
    /// tail): 1, 2, ..., n sum to n(n+1)/2 and multiply to n! exactly in Float while small; the
    /// extremes are n and 1; a NaN anywhere makes an extreme NaN.
    @Test func rowReductionsAtEveryLength() {
        for n in 0...70 {
            let row = (0..<n).map { Float($0 + 1) }
            // An empty row still needs an address; its one element is never read.
            (row.isEmpty ? [Float.nan] : row).withUnsafeBufferPointer { buffer in
                guard let x = buffer.baseAddress else { return }
                #expect(OpenBLASBackend.reduceRow(.sum, x, n) == Float(n * (n + 1) / 2), "sum of \(n)")
                #expect(OpenBLASBackend.reduceRow(.maximum, x, n) == (n == 0 ? -.infinity : Float(n)), "max of \(n)")
                #expect(OpenBLASBackend.reduceRow(.minimum, x, n) == (n == 0 ? .infinity : 1), "min of \(n)")
                if n <= 12 {
                    let factorial = (0..<n).reduce(Float(1)) { $0 * Float($1 + 1) }
                    #expect(OpenBLASBackend.reduceRow(.product, x, n) == factorial, "product of \(n)")
                }
            }
            for position in 0..<n {
                var withNaN = row
                withNaN[position] = .nan
                withNaN.withUnsafeBufferPointer { buffer in
                    guard let x = buffer.baseAddress else { return }
                    #expect(OpenBLASBackend.reduceRow(.maximum, x, n).isNaN, "max of \(n), NaN at \(position)")
                    #expect(OpenBLASBackend.reduceRow(.minimum, x, n).isNaN, "min of \(n), NaN at \(position)")
                }
            }
        }
    }
}
