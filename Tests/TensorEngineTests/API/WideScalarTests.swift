import Foundation
import Testing
@testable import TensorEngine

/// `Int64` and `Double` tensors as users write them: values past 32 bits and past `Float`'s
/// digits, worked out by hand. Host policies run everything (openblas leaves these types to the
/// reference loops, as it does `Int32` arithmetic); OpenCL runs their elementwise ops and data
/// movement, so the elementwise checks run there too.
@Suite("Int64 and Float64")
struct WideScalarTests {
    static let hostPolicies: [ComputePolicy] = [.only(.naive), .cpuOnly, .all]
    static let elementwisePolicies: [ComputePolicy] =
        hostPolicies + (BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) ? [.only(.opencl)] : [])

    static func longs(_ tensor: Tensor, _ policy: ComputePolicy) async throws -> [Int64] {
        try await withComputePolicy(policy) { try await tensor.shapedArray(of: Int64.self).scalars }
    }

    static func doubles(_ tensor: Tensor, _ policy: ComputePolicy) async throws -> [Double] {
        try await withComputePolicy(policy) { try await tensor.shapedArray(of: Double.self).scalars }
    }

    @Test(arguments: elementwisePolicies) func integerArithmeticPastThirtyTwoBits(policy: ComputePolicy) async throws {
        let a = Tensor([3_000_000_000, -5, .max, 7] as [Int64])
        let b = Tensor([4_000_000_000, 2, 1, -2] as [Int64])
        #expect(try await Self.longs(a + b, policy) == [7_000_000_000, -3, .min, 5])
        // 1.2·10^19 wraps past Int64.max, as Swift's `&*` does.
        #expect(try await Self.longs(a * b, policy) == [Int64(3_000_000_000) &* 4_000_000_000, -10, .max, -14])
        #expect(try await Self.longs(a / b, policy) == [0, -2, .max, -3])
        #expect(try await Self.longs(a % b, policy) == [3_000_000_000, -1, 0, 1])
        // 2^53 + 1 and 2^53 are one apart: equal as Doubles, not as Int64s.
        let near = Tensor([9_007_199_254_740_993, 9_007_199_254_740_992] as [Int64])
        let far = Tensor([9_007_199_254_740_992, 9_007_199_254_740_992] as [Int64])
        #expect(try await withComputePolicy(policy) { try await (near .== far).shapedArray(of: Bool.self).scalars } == [false, true])
        #expect(try await Self.longs(near - far, policy) == [1, 0])
        #expect(try await Self.longs(near + Int64(2), policy) == [9_007_199_254_740_995, 9_007_199_254_740_994])
    }

    @Test(arguments: elementwisePolicies) func doublesKeepTheirDigits(policy: ComputePolicy) async throws {
        let x = Tensor([1, 2, 1e300] as [Double])
        #expect(try await Self.doubles(x + Tensor([1e-12, 1e-15, 1e300] as [Double]), policy) == [1 + 1e-12, 2 + 1e-15, 2e300])
        // A literal reaches a `Double` tensor with all its digits.
        #expect(try await Self.doubles(x * 0.1, policy) == [0.1, 0.2, 1e300 * 0.1])
        #expect(try await Self.doubles(Tensor([2] as [Double]).squareRoot(), policy) == [Double(2).squareRoot()])
        // exp and log within a few ulp of the C library's (OpenCL allows 3 ulp for each).
        let logs = try await Self.doubles(x.exp().log(), policy)
        #expect(Swift.abs(logs[0] - 1) < 1e-15 && Swift.abs(logs[1] - 2) < 1e-15 && logs[2] == .infinity)
    }

    @Test(arguments: hostPolicies) func doubleProductsKeepTheirDigits(policy: ComputePolicy) async throws {
        // A product of 1 + 2^-40 by itself, which a `Float` would round to 1.
        let tiny = 1 + 0x1p-40
        let m = Tensor(shape: [1, 2], scalars: [tiny, 1] as [Double])
        let n = Tensor(shape: [2, 1], scalars: [tiny, 0] as [Double])
        #expect(try await Self.doubles(m.matmul(n), policy) == [tiny * tiny])
        #expect(try await Self.doubles(Tensor([1, 2, 4] as [Double]).mean(), policy) == [7.0 / 3])
    }

    @Test(arguments: elementwisePolicies) func gathersTakeInt64Indices(policy: ComputePolicy) async throws {
        let table = Tensor(shape: [3, 2], scalars: [10, 11, 20, 21, 30, 31] as [Float])
        let picked = table.gathering(atIndices: Tensor([2, 0] as [Int64]), alongAxis: 0)
        #expect(try await withComputePolicy(policy) { try await picked.shapedArray(of: Float.self).scalars } == [30, 31, 10, 11])
        let longs = Tensor([7, 1 << 40, -3] as [Int64]).gathering(atIndices: Tensor([1, 1, 2] as [Int32]), alongAxis: 0)
        #expect(try await Self.longs(longs, policy) == [1 << 40, 1 << 40, -3])
        // 2^32 is not 0: an index is read whole.
        let bad = table.gathering(atIndices: Tensor([4_294_967_296] as [Int64]), alongAxis: 0)
        await #expect(throws: TensorError.self) { try await withComputePolicy(policy) { try await bad.shapedArray(of: Float.self) } }
        let padded = Tensor([1 << 40] as [Int64]).padded(forSizes: [(before: 1, after: 1)], with: -1)
        #expect(try await Self.longs(padded, policy) == [-1, 1 << 40, -1])
    }

    @Test(arguments: elementwisePolicies) func castsFollowNumPy(policy: ComputePolicy) async throws {
        let wide = Tensor([4_294_967_297, -1, 3_000_000_000] as [Int64])
        #expect(try await withComputePolicy(policy) { try await wide.cast(to: Int32.self).shapedArray(of: Int32.self).scalars } == [1, -1, -1_294_967_296])
        #expect(try await Self.doubles(wide.cast(to: Double.self), policy) == [4_294_967_297, -1, 3_000_000_000])
        let reals = Tensor([1e300, -1e300, .nan, -2.9, 0.1] as [Double])
        #expect(try await Self.longs(reals.cast(to: Int64.self), policy) == [.max, .min, 0, -2, 0])
        #expect(try await withComputePolicy(policy) { try await reals.cast(to: Float.self).shapedArray(of: Float.self).scalars }.last == Float(0.1))
        #expect(try await Self.doubles(Tensor([0.1] as [Float]).cast(to: Double.self), policy) == [Double(Float(0.1))])
        #expect(try await Self.longs(Tensor([-7, 2_147_483_647] as [Int32]).cast(to: Int64.self), policy) == [-7, 2_147_483_647])
    }

    @Test(arguments: hostPolicies) func reductionsAndIndices(policy: ComputePolicy) async throws {
        let x = Tensor(shape: [2, 2], scalars: [1 << 40, 1 << 40, 9_007_199_254_740_992, 9_007_199_254_740_993] as [Int64])
        #expect(try await Self.longs(x.sum(alongAxes: 1), policy) == [1 << 41, 18_014_398_509_481_985])
        #expect(try await Self.longs(x.max(alongAxes: 1), policy) == [1 << 40, 9_007_199_254_740_993])
        // The exact maximum, not the first of two values equal as Doubles.
        #expect(try await withComputePolicy(policy) { try await x.argmax(alongAxis: 1).shapedArray(of: Int32.self).scalars } == [0, 1])
    }

    @Test func literalsStayFloat() {
        #expect(Tensor([1.0, 2.0]).dtype == .float32)
        #expect(Tensor([1, 2]).dtype == .float32)
        #expect(Tensor(repeating: 0.5, shape: [2]).dtype == .float32)
        #expect(Tensor(shape: [2], scalars: [1.0, 2.0]).dtype == .float32)
        #expect(Tensor([1, 2] as [Int64]).dtype == .int64)
        #expect(Tensor([1, 2] as [Double]).dtype == .float64)
        #expect((Tensor([1, 2] as [Double]) + 1).dtype == .float64)
    }

    @Test func rangesReachTheEnds() async throws {
        let top = Tensor(rangeFrom: Int64.max - 2, to: Int64.max, by: 1, scalarType: Int64.self)
        #expect(try await top.shapedArray(of: Int64.self).scalars == [.max - 2, .max - 1])
        let down = Tensor(rangeFrom: Int64.min + 4, to: Int64.min, by: -3, scalarType: Int64.self)
        #expect(try await down.shapedArray(of: Int64.self).scalars == [.min + 4, .min + 1])
        #expect(Tensor(rangeFrom: Int64.min, to: Int64.max, by: 1, scalarType: Int64.self).error?.kind == .tooLarge)
        let tenths = Tensor(rangeFrom: 0, to: 0.35, by: 0.1, scalarType: Double.self)
        #expect(try await tenths.shapedArray(of: Double.self).scalars == [0, 0.1, 0.2, 0.1 * 3])
    }

    @Test func mismatchesAreTypedErrors() {
        #expect((Tensor([1] as [Int64]) + Tensor([1] as [Int32])).error?.kind == .scalarTypeMismatch)
        #expect(Tensor(shape: [1, 1], scalars: [1] as [Int64]).matmul(Tensor(shape: [1, 1], scalars: [1] as [Int64]))
            .error?.kind == .scalarTypeMismatch)
        #expect(Tensor([1] as [Int64]).exp().error?.kind == .scalarTypeMismatch)
    }

    @Test func npyFilesRoundTrip() async throws {
        let longs = Tensor(shape: [2], scalars: [Int64.min, 9_007_199_254_740_993] as [Int64])
        let back = try Tensor(npyData: try await longs.npyData())
        #expect(back.dtype == .int64)
        #expect(try await back.shapedArray(of: Int64.self).scalars == [.min, 9_007_199_254_740_993])
        let reals = Tensor([0.1, -1e-300] as [Double])
        let again = try Tensor(npyData: try await reals.npyData())
        #expect(try await again.shapedArray(of: Double.self).scalars == [0.1, -1e-300])
    }

    @Test func doubleMultiArraysAreShared() async throws {
        let array = try MultiArray(shape: [2], dataType: .double)
        array[0] = 0.1
        array[1] = 1e300
        let tensor = Tensor(array)
        #expect(tensor.dtype == .float64)
        #expect(try await tensor.shapedArray(of: Double.self).scalars == [0.1, 1e300])
        let narrowed = try MultiArray(Tensor([5, -6] as [Int64]))
        #expect(narrowed.dataType == .int32 && narrowed[1].intValue == -6)
        #expect(throws: TensorError.self) { try MultiArray(Tensor([1 << 40] as [Int64])) }
    }
}
