import Foundation
import TensorEngine
import Testing

/// Every public method that takes a size, axis, count, range bound or stride, driven with the
/// ends of `Int` and `Float`: each call gives a tensor carrying a typed error at once, or a
/// tensor that evaluates to a result or a typed error. A trap would end the test process; a
/// result of the wrong shape fails it.
@Suite("Extreme arguments, every method")
struct ExtremeArgumentPropertyTests {
    static let integers = [
        Int.max, Int.max - 1, Int.max / 2, 1 << 40, Int(Int32.max) + 1, 3, 2, 1, 0, -1, -2, -3,
        -(1 << 40), Int.min / 2, Int.min + 1, Int.min,
    ]
    static let floats: [Float] = [
        .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 0, -0.0, 1, -1, 1e30, -1e30,
    ]

    let x = Tensor(shape: [2, 3, 4], scalars: (0..<24).map(Float.init))
    let flags = Tensor(shape: [2, 3], scalars: [true, false, true, true, false, false])
    let ints = Tensor(shape: [2, 3], scalars: [3, -1, 0, 7, 2, 5] as [Int32])

    /// The calls taking one integer, each named.
    var integerCalls: [(String, (Int) -> [Tensor])] {
        let x = x
        let flags = flags
        let ints = ints
        return [
            ("reshaped", { [x.reshaped(to: [$0, -1]), x.reshaped(to: [$0]), x.reshaped(to: [$0, $0])] }),
            ("expandingShape", { [x.expandingShape(at: $0), x.expandingShape(at: [$0, 0])] }),
            ("squeezingShape", { [x.squeezingShape(at: $0), x.squeezingShape(at: [$0])] }),
            ("transposed", { [x.transposed(permutation: [$0, 0, 1])] }),
            ("broadcast", { [x.broadcast(to: [$0, 2, 3, 4]), x.broadcast(to: [2, $0, 4])] }),
            (
                "split",
                { x.split(count: $0, alongAxis: 0) + x.split(sizes: [$0, 2 &- $0]) + x.split(count: 1, alongAxis: $0) }
            ),
            ("unstacked", { x.unstacked(alongAxis: $0) }),
            ("tiled", { [x.tiled(multiples: [$0, 1, 1]), x.tiled(multiples: [$0, $0, $0])] }),
            (
                "padded",
                { v in
                    [
                        x.padded(forSizes: [(v, 0), (0, v), (0, 0)], with: 1),
                        x.padded(forSizes: [(v, v), (0, 0), (0, 0)], mode: .reflection),
                        x.padded(forSizes: [(0, 0), (v, 0), (0, 0)], mode: .symmetric),
                        x.padded(forSizes: [(v, 1)], with: 0),
                    ]
                }
            ),
            ("reversed", { [x.reversed(alongAxes: $0), x.reversed(alongAxes: [$0, 0])] }),
            (
                "reductions",
                { v in
                    [
                        x.sum(alongAxes: v), x.mean(alongAxes: [v]), x.max(alongAxes: v, keepRank: true),
                        x.min(alongAxes: [v, 0]),
                        x.product(alongAxes: v), x.variance(alongAxes: v), flags.all(alongAxes: v),
                        flags.any(alongAxes: [v]),
                    ]
                }
            ),
            (
                "along an axis",
                { v in
                    [
                        x.argmax(alongAxis: v), x.argmin(alongAxis: v, keepRank: true), x.cumulativeSum(alongAxis: v),
                        x.cumulativeProduct(alongAxis: v), x.softmax(alongAxis: v), x.logSoftmax(alongAxis: v),
                        x.layerNorm(alongAxis: v), x.argsort(alongAxis: v),
                        ints.argsort(alongAxis: v, descendingOrder: true),
                    ]
                }
            ),
            ("topK", { [x.topK($0).values, x.topK($0).indices] }),
            (
                "gather and scatter",
                { v in
                    let indices = Tensor([Int32(truncatingIfNeeded: v)], scalarType: Int32.self)
                    let vectors = Tensor(
                        shape: [1, 2], scalars: [0, Int32(truncatingIfNeeded: v)], scalarType: Int32.self)
                    return [
                        x.gathering(atIndices: indices, alongAxis: 0),
                        x.gathering(atIndices: Tensor([0], scalarType: Int32.self), alongAxis: v),
                        x.gathering(atIndices: vectors),
                        ints.replacing(
                            atIndices: Tensor(
                                shape: [2, 1], scalars: [0, Int32(truncatingIfNeeded: v)], scalarType: Int32.self),
                            with: Int32(9), alongAxis: 1),
                        ints.replacing(
                            atIndices: Tensor(shape: [2, 1], scalars: [0, 1], scalarType: Int32.self), with: 1,
                            alongAxis: v),
                    ]
                }
            ),
            (
                "joining",
                { v in
                    [
                        x.concatenated(with: x, alongAxis: v), Tensor(stacking: [x, x], alongAxis: v),
                        Tensor([x], alongAxis: v),
                        Tensor(concatenating: [x], alongAxis: v),
                    ]
                }
            ),
            (
                "subscripts",
                { v in
                    [
                        x[v], x[0, v], x[..., v], x[.index(v)], x[.range(0..<2, stride: v)],
                        x[0, .range(1..., stride: v)],
                        x[.range(..., stride: v), 0], x[0, 1, ..., .range(0...3, stride: v)],
                    ]
                }
            ),
            (
                "resized",
                { v in
                    [
                        x.resized(to: [v]), x.resized(to: [v, 2]),
                        x.resized(to: [3, v], method: .bilinear(alignCorners: true)),
                        x.resized(to: [v, v], method: .bilinear()),
                    ]
                }
            ),
            (
                "bandPart",
                {
                    [
                        x.bandPart(lowerBandCount: $0, upperBandCount: 0),
                        x.bandPart(lowerBandCount: 1, upperBandCount: $0),
                    ]
                }
            ),
            (
                "creation",
                { v in
                    // A size that fits in memory is made for real (gigabytes, minutes): only small
                    // sizes and sizes past the machine's memory are tried.
                    guard v <= 1 << 20 || v > Int(clamping: ProcessInfo.processInfo.physicalMemory) else { return [] }
                    return [
                        Tensor(zeros: [v]), Tensor(ones: [2, v]), Tensor(repeating: 1, shape: [v, 3]),
                        Tensor(repeating: Int32(1), shape: [v], scalarType: Int32.self),
                        Tensor(randomNormal: [v], seed: 1),
                        Tensor(randomUniform: [v, 2], seed: 1),
                        Tensor(randomUniform: [v], in: Int32(0)...Int32(5), seed: 1),
                        Tensor(linearSpaceFrom: 0, through: 1, count: v),
                        Tensor(linearSpaceFrom: Float16(0), through: 1, count: v, scalarType: Float16.self),
                        Tensor(shape: [v], scalars: [1.0]),
                        Tensor(shape: [v, 2], data: Data(count: 8), scalarType: Float.self),
                        Tensor(unsafeUninitializedShape: [v], scalarType: Float.self) { _ in },
                    ]
                }
            ),
            (
                "integer ranges",
                { v in
                    let bound = Int32(truncatingIfNeeded: v)
                    return [
                        Tensor(rangeFrom: Int32(0), to: bound % 4096, by: 1),
                        Tensor(rangeFrom: bound, to: bound, by: bound),
                        Tensor(rangeFrom: Int32(0), to: 10, by: bound),
                        Tensor(rangeFrom: bound, to: bound &+ 8, by: 3, scalarType: Int32.self),
                    ]
                }
            ),
        ]
    }

    /// The calls taking one float, each named.
    var floatCalls: [(String, (Float) -> [Tensor])] {
        let x = x
        return [
            ("arithmetic", { f in [x + f, f - x, x * f, f / x, x % f, f % x, pow(x, f), x.pow(f), pow(f, x)] }),
            (
                "comparisons",
                { f in
                    // A range with a NaN bound traps in the standard library, before the engine sees it.
                    [x .== f, x .< f, x .>= f, x.pointwiseMin(f), x.pointwiseMax(f)]
                        + (f.isNaN ? [] : [x.clamped(to: f...)])
                }
            ),
            (
                "replacing and padding",
                { f in
                    [
                        x.replacing(with: f, where: x .> 3), x.padded(forSizes: [(1, 1), (0, 0), (0, 0)], with: f),
                        x.padded(forSizes: [(1, 0), (0, 0), (0, 0)], mode: .constant(f)),
                        x.replacing(
                            atIndices: Tensor(shape: [2, 3, 1], scalars: [Int32](repeating: 0, count: 6)), with: f,
                            alongAxis: 2),
                    ]
                }
            ),
            (
                "ranges",
                { f in
                    [
                        Tensor(rangeFrom: 0, to: f, by: 1), Tensor(rangeFrom: f, to: 1, by: 0.5),
                        Tensor(rangeFrom: 0, to: 1, by: f),
                        Tensor(rangeFrom: Float16(0), to: Float16(f), by: 1, scalarType: Float16.self),
                        Tensor(linearSpaceFrom: f, through: -f, count: 5),
                    ]
                }
            ),
            ("random", { f in [Tensor(randomNormal: [3], mean: f, standardDeviation: f, seed: 1)] }),
            (
                "creation",
                { f in [Tensor(repeating: f, shape: [2]), Tensor(f, scalarType: Float.self), Tensor([f, -f])] }
            ),
        ]
    }

    @Test func integerArguments() async throws {
        for (name, call) in integerCalls {
            for value in Self.integers { try await check(call(value), "\(name)(\(value))") }
        }
    }

    @Test func floatArguments() async throws {
        for (name, call) in floatCalls {
            for value in Self.floats { try await check(call(value), "\(name)(\(value))") }
        }
    }

    /// Each tensor carries a typed error, or evaluates (a small one) to its shape or a typed error.
    private func check(_ tensors: [Tensor], _ label: String) async throws {
        for tensor in tensors {
            if let error = tensor.error {
                #expect(!error.message.isEmpty, "\(label): an error says what went wrong")
                continue
            }
            guard tensor.scalarCount <= 1 << 20 else { continue }
            do {
                try await Tensor.evaluate([tensor])
                let bytes = try await tensor.npyData()
                #expect(!bytes.isEmpty, "\(label): the result reads back")
            } catch {
                #expect(!error.message.isEmpty, "\(label): a typed run-time error")
            }
        }
    }
}
