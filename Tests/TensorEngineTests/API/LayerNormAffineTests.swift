import Testing

@testable import TensorEngine

/// A layer norm's scale and bias that vary along its axis alone are operands of the op, applied
/// as each line is written; others stay separate products and sums. Values against the formula
/// worked out in `Double`, on every backend.
@Suite("Layer norm with scale and bias")
struct LayerNormAffineTests {
    /// `(x - mean) / sqrt(variance + epsilon) · scale + bias` along `axis` of a row-major `[rows, cols]` matrix.
    static func expected(
        _ x: [Float], rows: Int, cols: Int, axis: Int, scale: (Int) -> Float, bias: (Int) -> Float, epsilon: Double
    ) -> [Float] {
        var out = [Float](repeating: 0, count: x.count)
        let (lines, length) = axis == 1 ? (rows, cols) : (cols, rows)
        for line in 0..<lines {
            let index = { (i: Int) in axis == 1 ? line * cols + i : i * cols + line }
            let values = (0..<length).map { Double(x[index($0)]) }
            let mean = values.reduce(0, +) / Double(length)
            let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(length)
            for i in 0..<length {
                let normalized = (values[i] - mean) / (variance + epsilon).squareRoot()
                out[index(i)] = Float(normalized * Double(scale(i)) + Double(bias(i)))
            }
        }
        return out
    }

    static let backends: [BackendID] = [.naive, .openblas, .opencl]

    @Test(arguments: backends)
    func scaleAndBiasAlongTheAxisAreOperands(backend: BackendID) async throws {
        let (rows, cols) = (5, 12)
        let values = (0..<rows * cols).map { Float(($0 * 37) % 23) * 0.25 - 2 }
        let x = Tensor(shape: [rows, cols], scalars: values)
        let scale = (0..<cols).map { Float($0) * 0.5 - 1 }
        let bias = (0..<cols).map { Float($0 % 3) - 0.75 }
        // Vectors, and the same values as [1, cols] rows (reshaped into the op).
        for (s, b) in [
            (Tensor(scale), Tensor(bias)),
            (Tensor(shape: [1, cols], scalars: scale), Tensor(shape: [1, cols], scalars: bias)),
        ] {
            let y = x.layerNorm(epsilon: 1e-3, scale: s, bias: b)
            #expect(y.node?.op.kind == .layerNorm && y.node?.inputs.count == 3)
            let want = Self.expected(
                values, rows: rows, cols: cols, axis: 1, scale: { scale[$0] }, bias: { bias[$0] }, epsilon: 1e-3)
            let got = try await withComputePolicy(.only(backend)) { try await y.shapedArray(of: Float.self).scalars }
            #expect(zip(got, want).allSatisfy { Swift.abs($0 - $1) <= 1e-5 * Swift.max(1, Swift.abs($1)) }, "\(got)")
        }
        // Along the first axis: parameters of shape [rows, 1] vary along it alone.
        let columnScale = (0..<rows).map { Float($0) + 0.5 }
        let columnBias = (0..<rows).map { -Float($0) }
        let down = x.layerNorm(
            alongAxis: 0, epsilon: 1e-3, scale: Tensor(shape: [rows, 1], scalars: columnScale),
            bias: Tensor(shape: [rows, 1], scalars: columnBias))
        #expect(down.node?.op.kind == .layerNorm && down.node?.inputs.count == 3)
        let wantDown = Self.expected(
            values, rows: rows, cols: cols, axis: 0, scale: { columnScale[$0] }, bias: { columnBias[$0] },
            epsilon: 1e-3)
        let gotDown = try await withComputePolicy(.only(backend)) { try await down.shapedArray(of: Float.self).scalars }
        #expect(zip(gotDown, wantDown).allSatisfy { Swift.abs($0 - $1) <= 1e-5 * Swift.max(1, Swift.abs($1)) })
    }

    /// A scale that varies across lines, or a scale without a bias, is applied after the op.
    @Test func otherParametersStayApart() async throws {
        let x = Tensor(shape: [2, 3], scalars: [1.0, 2.0, 4.0, -1.0, 0.0, 1.0])
        let perElement = x.layerNorm(
            epsilon: 0, scale: Tensor(shape: [2, 3], scalars: [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]),
            bias: Tensor([0.0, 0.0, 1.0]))
        #expect(perElement.node?.op.kind != .layerNorm)
        // The second row is [-1, 0, 1]: normalized ±√(3/2) and 0, doubled, then the bias.
        let second = try await Array(perElement.shapedArray(of: Float.self).scalars.suffix(3))
        let root = Float(1.5).squareRoot()
        #expect(zip(second, [-2 * root, 0, 2 * root + 1]).allSatisfy { Swift.abs($0 - $1) < 1e-5 }, "\(second)")
        let onlyScale = x.layerNorm(epsilon: 0, scale: Tensor([2.0, 2.0, 2.0]))
        #expect(onlyScale.node?.op.kind == .multiply)
    }

    /// The op itself takes `x` alone or with both parameters, each of the axis's extent.
    @Test func operandsAreChecked() {
        let x = Tensor(zeros: [4, 6], scalarType: Float.self)
        let op = Op.layerNorm(axis: 1, epsilon: 1e-5)
        let two = Tensor.record(op, [x, Tensor(zeros: [6], scalarType: Float.self)], at: nil)
        #expect(two.error?.kind == .invalidArgument)
        let wrong = Tensor.record(
            op, [x, Tensor(zeros: [4], scalarType: Float.self), Tensor(zeros: [4], scalarType: Float.self)], at: nil)
        #expect(wrong.error?.kind == .shapeMismatch)
    }
}
