extension Tensor {
    /// Einstein summation over one or two operands (ONNX's `Einsum`, MIL's `einsum`): each label
    /// appears at most once per operand, `...` stands for the same leading axes in each. Two
    /// operands become one batched product: labels in both operands and the output are batch
    /// axes, in both but not the output are contracted, the rest are rows or columns; labels in
    /// one operand only and not in the output are summed first.
    static func einsum(_ written: String, _ operands: [Tensor]) -> Result<Tensor, ModelError> {
        let equation = written.filter { !$0.isWhitespace }
        func failure(_ message: String, _ kind: ModelError.Kind = .invalidNode) -> Result<Tensor, ModelError> {
            .failure(ModelError(kind, message))
        }
        guard (1...2).contains(operands.count) else {
            return failure("einsum with \(operands.count) operands is not supported (1 or 2 are)", .unsupportedOperators)
        }
        let sides = equation.components(separatedBy: "->")
        var inputs = sides[0].components(separatedBy: ",")
        guard inputs.count == operands.count, sides.count <= 2 else {
            return failure("equation '\(equation)' does not match \(operands.count) operands", .invalidModel)
        }
        // Expand "..." into labels no equation uses.
        let spare = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ").filter { !equation.contains($0) }
        var ellipsisRank = 0
        for (index, term) in inputs.enumerated() where term.contains("...") {
            ellipsisRank = Swift.max(ellipsisRank, operands[index].rank - (term.count - 3))
        }
        guard ellipsisRank <= spare.count, ellipsisRank >= 0 else {
            return failure("equation '\(equation)' does not match the operands' ranks")
        }
        for (index, term) in inputs.enumerated() where term.contains("...") {
            let count = operands[index].rank - (term.count - 3)
            guard count >= 0 else { return failure("equation '\(equation)' does not match the operands' ranks") }
            inputs[index] = term.replacingOccurrences(
                of: "...", with: String(spare[(ellipsisRank - count)..<ellipsisRank]))
        }
        let terms = inputs.map(Array.init)
        for (term, operand) in zip(terms, operands) where term.count != operand.rank || Set(term).count != term.count {
            return failure(
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
                    return failure("label \(label) has sizes \(known) and \(size)")
                }
                sizes[label] = Swift.max(sizes[label] ?? 1, size)
            }
        }
        guard output.allSatisfy({ sizes[$0] != nil }) else {
            return failure("output '\(String(output))' names a label no operand has", .invalidModel)
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
            return failure("equation '\(equation)' is not a form the engine supports", .unsupportedOperators)
        }
        let permutation = output.map { label in labels.firstIndex(of: label) ?? 0 }
        let final = permutation == Array(0..<permutation.count) ? result : result.transposed(permutation: permutation)
        return .success(final)
    }
}
