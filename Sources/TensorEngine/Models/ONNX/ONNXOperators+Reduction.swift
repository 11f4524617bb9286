import Foundation

/// The `Reduce*` family and `Einsum`.
extension ONNXOperators {
    /// What a `Reduce*` operator computes, and from which opset its axes are an input.
    enum Reduction: Sendable {
        case sum, mean, max, min, product, sumSquare, l1, l2, logSum, logSumExp

        var axesInputVersion: Int { self == .sum ? 13 : 18 }
    }

    static let reductions: [String: Reduction] = [
        "ReduceSum": .sum, "ReduceMean": .mean, "ReduceMax": .max, "ReduceMin": .min, "ReduceProd": .product,
        "ReduceSumSquare": .sumSquare, "ReduceL1": .l1, "ReduceL2": .l2, "ReduceLogSum": .logSum,
        "ReduceLogSumExp": .logSumExp,
    ]

    static func reduce(_ node: ONNXNodeContext, _ reduction: Reduction) throws(ModelError) -> [ONNXValue] {
        let input = try node.value(0)
        let rank = input.shape.count
        let keep = try node.int("keepdims", default: 1) != 0
        let given = try axesArgument(node, inputFrom: reduction.axesInputVersion) ?? []
        if given.isEmpty, try node.int("noop_with_empty_axes", default: 0) != 0 { return [input] }
        let axes = given.isEmpty ? Array(0..<rank) : try normalized(node, axes: given, rank: rank)
        if case .constant(let constant) = input, let folded = hostReduce(constant, axes: axes, keep: keep, reduction) {
            return [.constant(folded)]
        }
        var x = try node.tensor(0)
        if x.dtype == .bool {
            // Extremes of booleans are `all`/`any`; they run on Int32 and come back as booleans.
            guard reduction == .max || reduction == .min else { throw node.error("\(node.node.opType) of booleans") }
            x = x.converted(to: .int32)
            let y = reduction == .max ? x.max(alongAxes: axes, keepRank: keep) : x.min(alongAxes: axes, keepRank: keep)
            return [try node.output(y.converted(to: .bool), .bool)]
        }
        func total(_ t: Tensor) -> Tensor { t.sum(alongAxes: axes, keepRank: keep) }
        let y: Tensor =
            switch reduction {
            case .sum: total(x)
            case .mean: x.mean(alongAxes: axes, keepRank: keep)
            case .max: x.max(alongAxes: axes, keepRank: keep)
            case .min: x.min(alongAxes: axes, keepRank: keep)
            case .product: x.product(alongAxes: axes, keepRank: keep)
            case .sumSquare: total(x * x)
            case .l1: total(x.abs())
            case .l2:
                x.dtype.isFloatingPoint
                    ? total(x * x).squareRoot()
                    : total(x * x).converted(to: .float32).squareRoot().round().converted(to: x.dtype)
            case .logSum: total(x).log()
            case .logSumExp: logSumExp(x, axes: axes, keep: keep)
            }
        return [try node.output(y, input.dataType)]
    }

    /// `log Σ exp x`, shifted by the maximum so that large elements do not overflow.
    private static func logSumExp(_ x: Tensor, axes: [Int], keep: Bool) -> Tensor {
        let peak = x.max(alongAxes: axes, keepRank: true)
        let safePeak = peak.replacing(
            with: 0, where: peak .!= peak.pointwiseMin(.greatestFiniteMagnitude).pointwiseMax(-.greatestFiniteMagnitude)
        )
        var result = Tensor.binary(.subtract, x, safePeak, at: nil).exp().sum(alongAxes: axes, keepRank: true).log()
        result = Tensor.binary(.add, result, safePeak, at: nil)
        return keep ? result : result.squeezingShape(at: axes)
    }

    /// Sums, products and extremes of small integer constants (shape arithmetic).
    private static func hostReduce(_ constant: ONNXConstant, axes: [Int], keep: Bool, _ reduction: Reduction)
        -> ONNXConstant?
    {
        guard constant.dataType.isInteger, constant.count > 0 else { return nil }
        let combine: (Int64, Int64) -> Int64
        switch reduction {
        case .sum: combine = { $0 &+ $1 }
        case .product: combine = { $0 &* $1 }
        case .max: combine = { Swift.max($0, $1) }
        case .min: combine = { Swift.min($0, $1) }
        case .mean, .sumSquare, .l1, .l2, .logSum, .logSumExp: return nil
        }
        let shape = constant.shape
        let kept = shape.indices.map { axes.contains($0) ? 1 : shape[$0] }
        let outStrides = ONNXHost.strides(kept)
        let inStrides = ONNXHost.strides(shape)
        var result = [Int64?](repeating: nil, count: kept.reduce(1, *))
        let values = constant.integers
        for flat in 0..<constant.count {
            var target = 0
            for axis in shape.indices where !axes.contains(axis) {
                target += (flat / inStrides[axis]) % shape[axis] * outStrides[axis]
            }
            result[target] = result[target].map { combine($0, values[flat]) } ?? values[flat]
        }
        let outShape = keep ? kept : shape.indices.filter { !axes.contains($0) }.map { shape[$0] }
        return ONNXConstant(dataType: constant.dataType, shape: outShape, values: .integers(result.map { $0 ?? 0 }))
    }

    /// `Einsum` with one or two operands (``Tensor/einsum(_:_:)``).
    static func einsum(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let equation = try node.string("equation", default: "")
        let operands = try (0..<node.inputCount).map { index throws(ModelError) in try node.tensor(index) }
        switch Tensor.einsum(equation, operands) {
        case .success(let result): return [try node.output(result, try node.type(0))]
        case .failure(let failure): throw node.error(failure.message, failure.kind)
        }
    }
}
