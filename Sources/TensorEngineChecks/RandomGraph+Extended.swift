import TensorEngine

/// The steps of the functions, selections and resampling added after the first op list: the
/// trigonometric and hyperbolic set, remainders, exclusive or, `all`/`any`, running products,
/// sorting, scatters, index-vector gathers, mirrored padding, resizing, band masks and new axes.
extension RandomGraph {
    mutating func mathematical(_ step: Step, _ a: Entry) {
        let x = a.tensor, name = "\(step)"
        let rounded = Swift.max(a.precision, .approximate)
        // Functions with poles or an unbounded slope at the edge of their domain (tan near π/2,
        // asin near ±1, acosh near 1, sinh and cosh growing as eˣ) may magnify a last-bit
        // difference without bound: compared only when their operand is exact.
        let magnifying: Precision = a.precision == .exact ? .approximate : .unstable
        let (result, precision): (Tensor, Precision) = switch step {
        case .tan: (x.tan(), magnifying)
        case .asin: (x.asin(), magnifying)
        case .acos: (x.acos(), magnifying)
        case .atan: (x.atan(), rounded)
        case .sinh: (x.sinh(), magnifying)
        case .cosh: (x.cosh(), magnifying)
        case .acosh: (x.acosh(), magnifying)
        case .atanh: (x.atanh(), magnifying)
        default: (x.exp2(), rounded)
        }
        push(result, precision, step: name) {
            switch step {
            case .atan: Self.lipschitz(a, result, slope: 1)
            // 2ˣ grows as ln 2 · 2ˣ, slower than eˣ's own rate: the exponential bound covers it.
            case .exp2: Self.exponential(a, result)
            default: Self.plain(result)
            }
        }
    }

    /// Remainders, exclusive or and `all`/`any` of exact operands are exact (an fmod is exact in
    /// IEEE arithmetic); running products may overflow anywhere, so only their shape or error
    /// is compared; an argsort of exact values is exact (ties keep their order).
    mutating func selections(_ step: Step, _ a: Entry, _ b: Entry) {
        let x = a.tensor, y = b.tensor, name = "\(step)"
        let bothExact = Swift.max(a.precision, b.precision) == .exact
        switch step {
        case .remainder where bothExact: push(x % y, .exact, step: name)
        case .remainderScalar where a.precision == .exact:
            let divisor = quarter()
            push(x % divisor, .exact, step: name)
        case .xor where bothExact: push(x .^ y, .exact, step: name)
        case .all where a.precision == .exact, .any where a.precision == .exact:
            // A float or integer operand is an error on both backends alike: cast half the time.
            let source = reader.next() % 2 == 0 ? x : x.cast(to: Bool.self)
            let axes = reduction(axesOf: x.rank), keep = reader.next() % 2 == 0, whole = reader.next() % 3 == 0
            let result = step == .all
                ? (whole ? source.all(keepRank: keep) : source.all(alongAxes: axes, keepRank: keep))
                : (whole ? source.any(keepRank: keep) : source.any(alongAxes: axes, keepRank: keep))
            push(result, .exact, step: name)
        case .cumprod: push(x.cumulativeProduct(alongAxis: axis(x.rank)), .unstable, step: name)
        case .argsort where a.precision == .exact:
            push(x.argsort(alongAxis: axis(x.rank), descendingOrder: reader.next() % 2 == 0), .exact, step: name)
        default: push(leaf(), .exact)
        }
    }

    /// Data movement and masks: values move exactly, and an approximate operand's bound moves
    /// with them (bilinear resizing blends, so its result is approximate with the plain bound).
    mutating func resampling(_ step: Step, _ a: Entry) {
        let x = a.tensor, name = "\(step)", rank = x.rank, shape = x.shape
        let move: (Tensor) -> Tensor
        switch step {
        case .scatter:
            let axis = axis(rank), count = Int(reader.next() % 3)
            let normalized = axis < 0 ? axis + rank : axis
            var indexShape = shape
            if (0..<rank).contains(normalized) { indexShape[normalized] = count }
            let indexCount = Swift.min(Self.elements(indexShape), 4096)
            let indices = (0..<indexCount).map { _ in Int32(Int(reader.next() % 12) - 1) }
            let index = Tensor(shape: indexShape, scalars: indices)
            let value = quarter()
            push(x.replacing(atIndices: index, with: value, alongAxis: axis), a.precision, step: name) {
                a.bound?.replacing(atIndices: index, with: 0, alongAxis: axis)
            }
            return
        case .gatherVectors:
            let k = 1 + Int(reader.next() % 3), rows = Int(reader.next() % 4)
            let vectors = Tensor(
                shape: [rows, k], scalars: (0..<(rows * k)).map { _ in Int32(Int(reader.next() % 10) - 1) })
            move = { $0.gathering(atIndices: vectors) }
        case .padMirrored:
            let symmetric = reader.next() % 2 == 0
            let pairs = shape.map { _ in (before: Int(reader.next() % 4), after: Int(reader.next() % 4)) }
            move = { $0.padded(forSizes: pairs, mode: symmetric ? .symmetric : .reflection) }
        case .resizeNearest, .resizeBilinear:
            let sizes = (0..<Swift.min(rank, 1 + Int(reader.next() % 2))).map { _ in Int(reader.next() % 9) }
            guard step == .resizeBilinear else {
                move = { $0.resized(to: sizes) }
                break
            }
            let aligned = reader.next() % 2 == 0
            let resized = x.resized(to: sizes, method: .bilinear(alignCorners: aligned))
            let precision: Precision = a.precision == .exact ? .approximate : .unstable
            push(resized, precision, step: name) { Self.plain(resized) }
            return
        case .bandPart:
            let lower = Int(reader.next() % 5) - 1, upper = Int(reader.next() % 5) - 1
            move = { $0.bandPart(lowerBandCount: lower, upperBandCount: upper) }
        default:
            let stride = [1, 2, -1, -2, 3][Int(reader.next() % 5)]
            move = { $0[.newAxis, .range(..., stride: stride)] }
        }
        push(move(x), a.precision, step: name) { a.bound.map(move) }
    }
}
