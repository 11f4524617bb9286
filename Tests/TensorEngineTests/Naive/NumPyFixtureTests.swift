import Foundation
import Testing
@testable import TensorEngine

/// One NumPy-made case: inputs, an op with arguments, and NumPy's result.
struct NumPyCase: Decodable, Sendable, CustomStringConvertible {
    struct Array: Decodable, Sendable {
        let shape: [Int]
        let dtype: String
        let data: [Double?]

        var tensor: Tensor {
            switch dtype {
            case "int32": Tensor(shape: shape, scalars: data.map { Int32($0 ?? 0) })
            case "bool": Tensor(shape: shape, scalars: data.map { ($0 ?? 0) != 0 })
            default: Tensor(shape: shape, scalars: data.map { Float($0 ?? .nan) })
            }
        }
    }

    enum Argument: Decodable, Sendable {
        case number(Double)
        case numbers([Double])
        case pairs([[Int]])
        case flag(Bool)
        case none

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .none }
            else if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
            else if let number = try? container.decode(Double.self) { self = .number(number) }
            else if let numbers = try? container.decode([Double].self) { self = .numbers(numbers) }
            else { self = .pairs(try container.decode([[Int]].self)) }
        }

        var int: Int? { if case .number(let n) = self { Int(n) } else { nil } }
        var ints: [Int]? { if case .numbers(let n) = self { n.map { Int($0) } } else { nil } }
        var double: Double { if case .number(let n) = self { n } else { 0 } }
        var bool: Bool { if case .flag(let f) = self { f } else { false } }
    }

    let name: String
    let op: String
    let args: [String: Argument]
    let inputs: [Array]
    let expected: Array

    var description: String { name }

    static func load() throws -> [NumPyCase] {
        guard let url = Bundle.module.url(forResource: "numpy_fixtures", withExtension: "json", subdirectory: "Fixtures") else {
            throw TensorError(.invalidArgument, op: "fixtures", message: "numpy_fixtures.json is missing from the test bundle")
        }
        struct File: Decodable { let cases: [NumPyCase] }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).cases
    }

    /// Applies the case's op through the public API.
    func apply(_ x: [Tensor]) -> Tensor? {
        let axes = args["axes"]?.ints
        let keep = args["keepRank"]?.bool ?? false
        func reduce(_ all: (Bool) -> Tensor, _ along: ([Int], Bool) -> Tensor) -> Tensor { axes.map { along($0, keep) } ?? all(keep) }
        switch op {
        case "negate": return -x[0]
        case "abs": return x[0].abs()
        case "sign": return x[0].sign()
        case "exp": return x[0].exp()
        case "log": return x[0].log()
        case "squareRoot": return x[0].squareRoot()
        case "rsqrt": return x[0].rsqrt()
        case "squared": return x[0].squared()
        case "reciprocal": return x[0].reciprocal()
        case "sin": return x[0].sin()
        case "cos": return x[0].cos()
        case "tanh": return x[0].tanh()
        case "floor": return x[0].floor()
        case "ceil": return x[0].ceil()
        case "round": return x[0].round()
        case "sigmoid": return x[0].sigmoid()
        case "relu": return x[0].relu()
        case "erf": return x[0].erf()
        case "gelu": return x[0].gelu()
        case "geluTanh": return x[0].gelu(approximation: .tanh)
        case "silu": return x[0].silu()
        case "add": return x[0] + x[1]
        case "subtract": return x[0] - x[1]
        case "multiply": return x[0] * x[1]
        case "divide": return x[0] / x[1]
        case "pow": return pow(x[0], x[1])
        case "minimum": return x[0].pointwiseMin(x[1])
        case "maximum": return x[0].pointwiseMax(x[1])
        case "equal": return x[0] .== x[1]
        case "notEqual": return x[0] .!= x[1]
        case "less": return x[0] .< x[1]
        case "lessEqual": return x[0] .<= x[1]
        case "greater": return x[0] .> x[1]
        case "greaterEqual": return x[0] .>= x[1]
        case "castInt32": return x[0].cast(to: Int32.self)
        case "sum": return reduce({ x[0].sum(keepRank: $0) }, { x[0].reduce(.sum, axes: $0, keepRank: $1, #fileID, #line) })
        case "mean": return reduce({ x[0].mean(keepRank: $0) }, { x[0].reduce(.mean, axes: $0, keepRank: $1, #fileID, #line) })
        case "max": return reduce({ x[0].max(keepRank: $0) }, { x[0].reduce(.max, axes: $0, keepRank: $1, #fileID, #line) })
        case "min": return reduce({ x[0].min(keepRank: $0) }, { x[0].reduce(.min, axes: $0, keepRank: $1, #fileID, #line) })
        case "product": return reduce({ x[0].product(keepRank: $0) }, { x[0].reduce(.product, axes: $0, keepRank: $1, #fileID, #line) })
        case "variance": return x[0].variance(alongAxes: -1)
        case "argmax": return args["axis"]?.int.map { x[0].argmax(alongAxis: $0) } ?? x[0].argmax()
        case "argmin": return args["axis"]?.int.map { x[0].argmin(alongAxis: $0) } ?? x[0].argmin()
        case "cumulativeSum": return x[0].cumulativeSum(alongAxis: args["axis"]?.int ?? 0)
        case "topKValues": return x[0].topK(args["k"]?.int ?? 0).values
        case "topKIndices": return x[0].topK(args["k"]?.int ?? 0).indices
        case "matmul": return x[0].matmul(x[1])
        case "softmax": return x[0].softmax(alongAxis: args["axis"]?.int ?? -1)
        case "logSoftmax": return x[0].logSoftmax(alongAxis: args["axis"]?.int ?? -1)
        case "layerNorm": return x[0].layerNorm(alongAxis: args["axis"]?.int ?? -1, epsilon: Float(args["epsilon"]?.double ?? 1e-5))
        case "transpose": return args["permutation"]?.ints.map { x[0].transposed(permutation: $0) } ?? x[0].transposed()
        case "reshape": return x[0].reshaped(to: args["shape"]?.ints ?? [])
        case "tile": return x[0].tiled(multiples: args["multiples"]?.ints ?? [])
        case "pad":
            guard case .pairs(let pairs)? = args["sizes"] else { return nil }
            return x[0].padded(forSizes: pairs.map { (before: $0[0], after: $0[1]) }, with: Float(args["value"]?.double ?? 0))
        case "reverse": return x[0].reversed(alongAxes: args["axes"]?.ints ?? [])
        case "concatenate": return Tensor(concatenating: x, alongAxis: args["axis"]?.int ?? 0)
        case "stack": return Tensor(stacking: x, alongAxis: args["axis"]?.int ?? 0)
        case "gather": return x[0].gathering(atIndices: x[1], alongAxis: args["axis"]?.int ?? 0)
        case "subscriptRow": return x[0][1, 1..<3]
        case "subscriptLast": return x[0][..., 2]
        case "replacing": return x[0].replacing(with: x[1], where: x[2])
        case "clamped": return x[0].clamped(to: Float(args["low"]?.double ?? 0)...Float(args["high"]?.double ?? 0))
        default: return nil
        }
    }
}

@Suite("Naive backend against NumPy")
struct NumPyFixtureTests {
    static let cases = (try? NumPyCase.load()) ?? []

    @Test("the fixtures load")
    func fixturesLoad() throws {
        #expect(try NumPyCase.load().count > 80)
    }

    @Test("matches NumPy", arguments: cases)
    func matchesNumPy(_ fixture: NumPyCase) async throws {
        let inputs = fixture.inputs.map(\.tensor)
        let result = try #require(fixture.apply(inputs), "unknown fixture op \(fixture.op)")
        #expect(result.shape == fixture.expected.shape, "\(fixture.name): shape")
        try await withComputePolicy(.only(.naive)) {
            switch fixture.expected.dtype {
            case "int32":
                let values = try await result.shapedArray(of: Int32.self).scalars
                #expect(values == fixture.expected.data.map { Int32($0 ?? 0) }, "\(fixture.name)")
            case "bool":
                let values = try await result.shapedArray(of: Bool.self).scalars
                #expect(values == fixture.expected.data.map { ($0 ?? 0) != 0 }, "\(fixture.name)")
            default:
                let values = try await result.shapedArray(of: Float.self).scalars
                for (index, (actual, expected)) in zip(values, fixture.expected.data).enumerated() {
                    let e = Float(expected ?? .nan)
                    let ok = (actual.isNaN && e.isNaN) || Swift.abs(actual - e) <= 2e-6 + 2e-6 * Swift.abs(e)
                    #expect(ok, "\(fixture.name)[\(index)]: expected \(e), got \(actual)")
                }
            }
        }
    }
}
