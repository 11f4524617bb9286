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

    /// `Einsum` with one or two operands: each label appears at most once per operand, `...`
    /// stands for the same leading axes in each. Two operands become one batched product: labels
    /// in both operands and the output are batch axes, in both but not the output are contracted,
    /// the rest are rows or columns; labels in one operand only and not in the output are summed first.
    static func einsum(_ node: ONNXNodeContext) throws(ModelError) -> [ONNXValue] {
        let equation = try node.string("equation", default: "").filter { !$0.isWhitespace }
        let operands = try (0..<node.inputCount).map { index throws(ModelError) in try node.tensor(index) }
        guard (1...2).contains(operands.count) else {
            throw node.error(
                "Einsum with \(operands.count) operands is not supported (1 or 2 are)", .unsupportedOperators)
        }
        let sides = equation.components(separatedBy: "->")
        var inputs = sides[0].components(separatedBy: ",")
        guard inputs.count == operands.count, sides.count <= 2 else {
            throw node.error("equation '\(equation)' does not match \(operands.count) operands", .invalidModel)
        }
        // Expand "..." into labels no equation uses.
        let spare = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ").filter { !equation.contains($0) }
        var ellipsisRank = 0
        for (index, term) in inputs.enumerated() where term.contains("...") {
            ellipsisRank = Swift.max(ellipsisRank, operands[index].rank - (term.count - 3))
        }
        guard ellipsisRank <= spare.count, ellipsisRank >= 0 else {
            throw node.error("equation '\(equation)' does not match the operands' ranks")
        }
        for (index, term) in inputs.enumerated() where term.contains("...") {
            let count = operands[index].rank - (term.count - 3)
            guard count >= 0 else { throw node.error("equation '\(equation)' does not match the operands' ranks") }
            inputs[index] = term.replacingOccurrences(
                of: "...", with: String(spare[(ellipsisRank - count)..<ellipsisRank]))
        }
        let terms = inputs.map(Array.init)
        for (term, operand) in zip(terms, operands) where term.count != operand.rank || Set(term).count != term.count {
            throw node.error(
                "term '\(String(term))' of '\(equation)' repeats a label or does not match rank \(operand.rank)",
                .unsupportedOperators)
        }
        var output: [Character]
        if sides.count == 2 {
            output = Array(sides[1].replacingOccurrences(of: "...", with: String(spare[0..<ellipsisRank])))
        } else {
            let all = terms.flatMap { $0 }
            output =
                Array(spare[0..<ellipsisRank])
                + Set(all.filter { label in all.filter { $0 == label }.count == 1 && !spare.contains(label) }).sorted()
        }
        var sizes: [Character: Int] = [:]
        for (term, operand) in zip(terms, operands) {
            for (label, size) in zip(term, operand.shape) {
                if let known = sizes[label], known != size, known != 1, size != 1 {
                    throw node.error("label \(label) has sizes \(known) and \(size)")
                }
                sizes[label] = Swift.max(sizes[label] ?? 1, size)
            }
        }
        guard output.allSatisfy({ sizes[$0] != nil }) else {
            throw node.error("output '\(String(output))' names a label no operand has", .invalidModel)
        }
        // Sum away labels that only one operand has and the output lacks.
        var reduced: [(Tensor, [Character])] = []
        for (index, (term, operand)) in zip(terms, operands).enumerated() {
            let others = terms.enumerated().filter { $0.offset != index }.flatMap(\.element)
            let drop = term.indices.filter { !output.contains(term[$0]) && !others.contains(term[$0]) }
            let kept = term.indices.filter { !drop.contains($0) }.map { term[$0] }
            reduced.append((drop.isEmpty ? operand : operand.sum(alongAxes: drop), kept))
        }
        let result: Tensor
        let labels: [Character]
        if reduced.count == 1 {
            (result, labels) = reduced[0]
        } else {
            let (a, la) = reduced[0]
            let (b, lb) = reduced[1]
            let batch = la.filter { lb.contains($0) && output.contains($0) }
            let contracted = la.filter { lb.contains($0) && !output.contains($0) }
            let rows = la.filter { !lb.contains($0) }
            let columns = lb.filter { !la.contains($0) }
            func arranged(_ t: Tensor, _ from: [Character], _ order: [Character], _ groups: [[Character]]) -> Tensor {
                let moved = t.transposed(permutation: order.map { label in from.firstIndex(of: label) ?? 0 })
                let target = groups.flatMap { $0 }.map { sizes[$0] ?? 1 }
                let expanded = moved.broadcastIfNeeded(to: target, at: nil)
                return expanded.reshaped(to: groups.map { $0.reduce(1) { $0 * (sizes[$1] ?? 1) } })
            }
            let left = arranged(a, la, batch + rows + contracted, [batch, rows, contracted])
            let right = arranged(b, lb, batch + contracted + columns, [batch, contracted, columns])
            labels = batch + rows + columns
            result = left.matmul(right).reshaped(to: labels.map { sizes[$0] ?? 1 })
        }
        guard Set(labels) == Set(output) else {
            throw node.error("equation '\(equation)' is not a form the engine supports", .unsupportedOperators)
        }
        let permutation = output.map { label in labels.firstIndex(of: label) ?? 0 }
        let final = permutation == Array(0..<permutation.count) ? result : result.transposed(permutation: permutation)
        return [try node.output(final, try node.type(0))]
    }
}
