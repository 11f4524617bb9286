import TensorEngine

/// Data movement: each step moves the bound of an approximate operand with its values.
extension RandomGraph {
    mutating func movement(_ step: Step, _ a: Entry, _ b: Entry) {
        let x = a.tensor, y = b.tensor, name = "\(step)"
        if step == .concat || step == .stack {
            let axis = axis(step == .stack ? x.rank + 1 : x.rank)
            let join = { (first: Tensor, second: Tensor) in
                step == .stack
                    ? Tensor(stacking: [first, second], alongAxis: axis)
                    : Tensor(concatenating: [first, second], alongAxis: axis)
            }
            push(join(x, y), Swift.max(a.precision, b.precision), step: name) {
                join(a.bound ?? Tensor(zeros: x.shape), b.bound ?? Tensor(zeros: y.shape))
            }
            return
        }
        if step == .pad {
            // The padding value is exact: the bound is padded with zeros.
            let rank = x.rank, shape = x.shape
            let sizes = counts(2 * rank, choices: [0, 1, 2, 3, 17]) { sizes in
                // Sizes are at most 17 here: a huge extent is capped before they are added.
                Self.elements(shape.indices.map { Swift.min(shape[$0], Int.max / 2) + sizes[$0] + sizes[rank + $0] })
            }
            var pairs = (0..<rank).map { (before: sizes[$0], after: sizes[rank + $0]) }
            if sizes.count > 2 * rank { pairs.append((before: 1, after: 1)) }
            let value = quarter()
            push(x.padded(forSizes: pairs, with: value), a.precision, step: name) {
                a.bound?.padded(forSizes: pairs, with: 0)
            }
            return
        }
        let move = moving(step, x)
        push(move(x), a.precision, step: name) { a.bound.map(move) }
    }

    /// The movement a step decodes, as a function to apply to the values and to their bound.
    private mutating func moving(_ step: Step, _ x: Tensor) -> (Tensor) -> Tensor {
        let rank = x.rank, shape = x.shape
        switch step {
        case .reshape:
            let target = reshapeTarget(shape)
            return { $0.reshaped(to: target) }
        case .flatten: return { $0.flattened() }
        case .transpose:
            let permutation = permutation(rank)
            return { $0.transposed(permutation: permutation) }
        case .reverseAxes: return { $0.transposed() }
        case .split:
            let axis = axis(rank), part = Int(reader.next())
            let bySizes = reader.next() % 2 == 1
            let sizes = bySizes ? (0..<(1 + Int(reader.next() % 3))).map { _ in Int(reader.next() % 9) } : nil
            let count = 1 + Int(reader.next() % 4)
            return { t in
                let parts = sizes.map { t.split(sizes: $0, alongAxis: axis) } ?? t.split(count: count, alongAxis: axis)
                return parts.isEmpty ? t : parts[part % parts.count]
            }
        case .slice, .subscriptAxes: return subscripted(step == .slice)
        case .expand:
            let first = axis(rank + 1)
            let axes = reader.next() % 4 == 0 ? [first, axis(rank + 2)] : [first]
            return { $0.expandingShape(at: axes) }
        case .squeeze: return { $0.squeezingShape() }
        case .squeezeAxis:
            let axis = axis(rank)
            return { $0.squeezingShape(at: axis) }
        case .broadcast:
            let target = decodedShape()
            return { $0.broadcast(to: target) }
        case .gather:
            let axis = axis(rank), count = Int(reader.next() % 5), rows = reader.next() % 4 == 0 ? 2 : 1
            let indices = (0..<(rows * count)).map { _ in Int32(Int(reader.next() % 12) - 2) }
            let shape = rows == 2 ? [2, count] : [count]
            return { $0.gathering(atIndices: Tensor(shape: shape, scalars: indices), alongAxis: axis) }
        case .reverse:
            let first = axis(rank)
            let axes = reader.next() % 4 == 0 ? [first, axis(rank)] : [first]
            return { $0.reversed(alongAxes: axes) }
        default:
            let multiples = counts(rank, choices: Array(0...8)) { Self.elements(shape + $0) }
            return { $0.tiled(multiples: multiples) }
        }
    }

    /// A subscript: of the first axis (an integer, a range, or a trailing slice after an ellipsis,
    /// as `slice` always decoded), or one of the other forms (an ellipsis before or between
    /// indices, two axes, closed and partial ranges). Bounds may be negative or out of range.
    private mutating func subscripted(_ firstAxis: Bool) -> (Tensor) -> Tensor {
        let lower = Int(reader.next() % 7) - 3
        let upper = Int(reader.next() % 7) - 1
        let low = Swift.min(lower, upper), high = Swift.max(lower, upper)
        let form = Int(reader.next() % (firstAxis ? 3 : 6))
        return { x in
            switch (firstAxis, form) {
            case (true, 0): x[lower]
            case (true, 1): x[low..<high]
            case (true, _): x[..., lower...]
            case (false, 0): x[..., lower]
            case (false, 1): x[upper, ..., low...high]
            case (false, 2): x[low..<high, lower]
            case (false, 3): x[..<upper]
            case (false, 4): x[...lower]
            case (false, _): x[..., ...upper]
            }
        }
    }
}
