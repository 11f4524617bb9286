import TensorEngine

/// Reductions, network operations, data movement and creation steps.
extension RandomGraph {
    // MARK: - Reductions

    mutating func reduction(_ step: Step, _ a: Entry) {
        let x = a.tensor, name = "\(step)"
        let axes = reduction(axesOf: x.rank), keep = reader.next() % 2 == 0
        let rounded = Swift.max(a.precision, .approximate)
        let whole = [Step.sumAll, .meanAll, .maxAll, .minAll, .productAll].contains(step)
        /// The reduction of a tensor (the operand, or its bound) this step applies, by kind.
        func reduce(_ kind: Step) -> (Tensor) -> Tensor {
            { Self.reduced($0, kind, along: whole ? nil : axes, keepRank: keep) }
        }
        switch step {
        case .sum, .sumAll:
            let sum = reduce(.sum), result = sum(x)
            push(result, a.precision, step: name) { Self.summation(a, length: Self.length(x, result), sum) }
        case .mean, .meanAll:
            let mean = reduce(.mean), result = mean(x)
            push(result, rounded, step: name) {
                Self.summation(a, length: Self.length(x, result) + 1, mean)
                    ?? Self.rounding(result, Self.arithmeticError)
            }
        case .maxReduce, .maxAll, .minReduce, .minAll:
            // Either extreme moves by at most the largest bound it is taken over.
            let result = reduce(step == .maxReduce || step == .maxAll ? .maxReduce : .minReduce)(x)
            push(result, a.precision, step: name) { a.bound.map(reduce(.maxReduce)) }
        case .product, .productAll:
            let product = reduce(.product), result = product(x)
            push(result, rounded, step: name) { Self.productReduction(a, length: Self.length(x, result), product) }
        case .variance:
            let variance = reduce(.variance)(x)
            push(variance, a.precision == .exact ? .approximate : .unstable, step: name) { Self.plain(variance) }
        case .cumsum:
            let axis = axes[0]
            push(x.cumulativeSum(alongAxis: axis), a.precision, step: name) {
                Self.summation(a, length: x.shape.max() ?? 1) { $0.cumulativeSum(alongAxis: axis) }
            }
        case .topKValues:
            let values = x.topK(Int(reader.next() % 7) - 1).values
            push(values, a.precision, step: name) {
                a.bound.map { $0.max(alongAxes: -1, keepRank: true).broadcast(to: values.shape) }
            }
        case .argmax where a.precision == .exact: push(x.argmax(alongAxis: axes[0], keepRank: keep), .exact, step: name)
        case .argmaxAll where a.precision == .exact: push(x.argmax(), .exact, step: name)
        case .argmin where a.precision == .exact: push(x.argmin(alongAxis: axes[0], keepRank: keep), .exact, step: name)
        case .argminAll where a.precision == .exact: push(x.argmin(), .exact, step: name)
        case .topKIndices where a.precision == .exact:
            push(x.topK(Int(reader.next() % 7) - 1).indices, .exact, step: name)
        default:
            // An index of an extreme of rounded values may flip: a new leaf instead.
            push(leaf(), .exact)
        }
    }

    /// The number of terms each element of a reduction of `x` to `result` combines.
    private static func length(_ x: Tensor, _ result: Tensor) -> Int { x.scalarCount / Swift.max(1, result.scalarCount) }

    /// One reduction axis, or (one time in four) two.
    mutating func reduction(axesOf rank: Int) -> [Int] {
        let first = axis(rank)
        return reader.next() % 4 == 0 ? [first, axis(rank)] : [first]
    }

    /// A reduction of `t` of the kind of `step` (`sum`, `mean`, `maxReduce`, `minReduce`,
    /// `product` or `variance`) along `axes` (one or two, through the variadic API), or of all of
    /// it when `axes` is `nil`.
    private static func reduced(_ t: Tensor, _ step: Step, along axes: [Int]?, keepRank keep: Bool) -> Tensor {
        guard let axes else {
            switch step {
            case .sum: return t.sum(keepRank: keep)
            case .mean: return t.mean(keepRank: keep)
            case .maxReduce: return t.max(keepRank: keep)
            case .minReduce: return t.min(keepRank: keep)
            default: return t.product(keepRank: keep)
            }
        }
        let first = axes[0]
        guard axes.count > 1 else {
            switch step {
            case .sum: return t.sum(alongAxes: first, keepRank: keep)
            case .mean: return t.mean(alongAxes: first, keepRank: keep)
            case .maxReduce: return t.max(alongAxes: first, keepRank: keep)
            case .minReduce: return t.min(alongAxes: first, keepRank: keep)
            case .variance: return t.variance(alongAxes: first, keepRank: keep)
            default: return t.product(alongAxes: first, keepRank: keep)
            }
        }
        let second = axes[1]
        switch step {
        case .sum: return t.sum(alongAxes: first, second, keepRank: keep)
        case .mean: return t.mean(alongAxes: first, second, keepRank: keep)
        case .maxReduce: return t.max(alongAxes: first, second, keepRank: keep)
        case .minReduce: return t.min(alongAxes: first, second, keepRank: keep)
        case .variance: return t.variance(alongAxes: first, second, keepRank: keep)
        default: return t.product(alongAxes: first, second, keepRank: keep)
        }
    }

    // MARK: - Network operations

    mutating func network(_ step: Step, _ a: Entry, _ b: Entry) {
        let x = a.tensor, name = "\(step)"
        let rounded = Swift.max(a.precision, .approximate)
        switch step {
        case .softmax:
            let axis = axis(x.rank), result = x.softmax(alongAxis: axis)
            push(result, rounded, step: name) { Self.softmax(a, result, axis: axis, length: x.shape.max() ?? 1) }
        case .logSoftmax:
            let axis = axis(x.rank), result = x.logSoftmax(alongAxis: axis)
            push(result, rounded, step: name) { Self.logSoftmax(a, result, axis: axis, length: x.shape.max() ?? 1) }
        case .layerNorm:
            let axis = axis(x.rank), epsilon = [1e-5, 0, 1, -1][Int(reader.next() % 4)] as Float
            let scaled = reader.next() % 2 == 0
            let result = x.layerNorm(alongAxis: axis, epsilon: epsilon, scale: scaled ? b.tensor : nil)
            let exact = a.precision == .exact && (!scaled || b.precision == .exact)
            push(result, exact ? .approximate : .unstable, step: name) { Self.plain(result) }
        default:
            push(x.matmul(b.tensor), Swift.max(rounded, b.precision), step: name) {
                Self.product(a, b, length: a.tensor.shape.last ?? 1) { $0.matmul($1) }
            }
        }
    }

    // MARK: - Creation

    mutating func creation(_ step: Step) {
        let name = "\(step)"
        switch step {
        case .repeating:
            let shape = decodedShape()
            let tensor = switch reader.next() % 3 {
            case 0: Tensor(zeros: shape)
            case 1: Tensor(ones: shape)
            default: Tensor(repeating: quarter(), shape: shape)
            }
            push(tensor, .exact, step: name)
        case .range:
            push(Tensor(rangeFrom: quarter(), to: quarter(), by: quarter()), .exact, step: name)
        case .intRange:
            let bounds = (0..<3).map { _ in Int32(reader.next() % 33) - 16 }
            push(Tensor(rangeFrom: bounds[0], to: bounds[1], by: bounds[2]), .exact, step: name)
        case .linearSpace:
            // Not multiples of 1/4, so not exact under reordering: approximate, though both
            // backends start from the same values (a zero bound).
            let count = Int(reader.next() % 40) - 2
            let tensor = Tensor(linearSpaceFrom: quarter(), through: quarter(), count: count)
            push(tensor, .approximate, step: name) { Tensor(zeros: tensor.shape) }
        default: push(leaf(), .exact)
        }
    }
}
