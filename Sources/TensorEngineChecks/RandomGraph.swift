import TensorEngine
/// A graph over the public `Tensor` API decoded from arbitrary bytes: the random-graph fuzz
/// target's input language, also replayed by the regression tests.
///
/// The bytes are read as a program for a stack machine. A few leading bytes make the first
/// leaves; every following pair (operation, operand choice) pushes one new tensor made by an
/// operation on earlier entries, with shapes, axes and permutations drawn from the bytes, so
/// about half the programs are invalid somewhere (a broadcast that does not fit, an axis out of
/// range, a reshape to the wrong size, a gather index out of range). Decoding is deterministic:
/// the same bytes always give the same graph, so a graph can be built once per backend.
///
/// Leaf values are multiples of 1/4 in [-4, 4]. Sums, differences, negations, absolute values,
/// maxima, minima and data movement of such values are exact in `Float` whatever the order of
/// evaluation, so their results are compared exactly and may feed discontinuous operations
/// (floor, comparisons, argmax) without a rounding difference flipping the result (zeros may
/// differ in sign: the maximum of -0 and +0 may be either). Other
/// operations on exact values are approximate (compared within a tolerance). Operations that
/// can magnify a last-bit difference without bound (division, logarithm, normalisation and
/// cancelling differences of approximate values) make their result unstable: only whether it
/// fails, and its shape, are compared.
package struct RandomGraph {
    /// How closely every backend must reproduce an entry's values.
    package enum Precision: Int, Comparable, Sendable {
        /// Bit-for-bit (NaN matching NaN, and either zero the other).
        case exact
        /// Within the random-graph tolerance.
        case approximate
        /// Not compared: a last-bit difference upstream may change it arbitrarily.
        case unstable

        package static func < (lhs: Precision, rhs: Precision) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One tensor on the stack and how closely backends must agree on it.
    package struct Entry {
        package let tensor: Tensor
        package let precision: Precision
        /// The operation that made it, for reports.
        package let step: String
    }

    /// Every tensor the program made, in order.
    package private(set) var entries: [Entry] = []
    private var reader: ByteReader

    /// The largest number of operations decoded from one input (keeps each fuzz run short).
    static let maximumSteps = 24
    /// Axis sizes leaves draw from: empty, size one, small, odd and a few past a vector width.
    static let sizes = [0, 1, 2, 3, 4, 5, 7, 8, 17, 33]

    /// Decodes `bytes` into a graph (building it, not evaluating it).
    package init(decoding bytes: [UInt8]) {
        reader = ByteReader(bytes)
        let leafCount = 1 + Int(reader.next() % 3)
        for _ in 0..<leafCount { push(leaf(), .exact) }
        var steps = 0
        while !reader.isAtEnd, steps < Self.maximumSteps {
            step()
            steps += 1
        }
    }

    /// The entries a check evaluates: the last few the program made (earlier ones feed them).
    package var outputs: [Entry] { Array(entries.suffix(3)) }

    private mutating func push(_ tensor: Tensor, _ precision: Precision, step: String = "leaf") {
        entries.append(Entry(tensor: tensor, precision: precision, step: step))
    }

    /// A float leaf of a decoded shape with values k/4, k in -16...16.
    private mutating func leaf() -> Tensor {
        let shape = decodedShape()
        let count = shape.reduce(1, *)
        var state = UInt32(reader.next()) &* 2_654_435_761 &+ 12_345
        let scalars = (0..<count).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int(state >> 16) % 33 - 16) / 4
        }
        return Tensor(shape: shape, scalars: scalars)
    }

    private mutating func decodedShape() -> [Int] {
        let rank = [0, 1, 1, 2, 2, 2, 3, 3][Int(reader.next() % 8)]
        return (0..<rank).map { _ in Self.sizes[Int(reader.next()) % Self.sizes.count] }
    }

    private mutating func operand() -> Entry { entries[Int(reader.next()) % entries.count] }

    /// An axis of a tensor of rank `rank`, negative half the time; one time in sixteen, one just
    /// out of range.
    private mutating func axis(_ rank: Int) -> Int {
        let byte = reader.next()
        guard byte % 16 != 0, rank > 0 else { return byte % 32 == 0 ? -rank - 1 : rank }
        let axis = Int(byte / 16) % rank
        return byte % 2 == 0 ? axis : axis - rank
    }

    private mutating func step() {
        let code = reader.next()
        let a = operand()
        let b = operand()
        let x = a.tensor, y = b.tensor
        /// Data movement and order-free exact arithmetic keep their operands' precision.
        let kept = a.precision, keptBoth = Swift.max(a.precision, b.precision)
        /// Rounded arithmetic and smooth functions: approximate at best.
        let rounded = Swift.max(a.precision, .approximate), roundedBoth = Swift.max(keptBoth, .approximate)
        /// Functions that can magnify an operand's last-bit difference without bound.
        let magnifying: Precision = a.precision == .exact ? .approximate : .unstable
        switch (code % 41, a.precision, keptBoth) {
        case (0, _, _): push(x + y, keptBoth, step: "add")
        case (1, _, _): push(x - y, keptBoth, step: "sub")
        case (2, _, _): push(x * y, roundedBoth, step: "mul")
        case (3, _, _):
            // Exact values may still differ in the sign of a zero (max(-0, +0) may be either),
            // which division turns into infinities of opposite signs: only a leaf divisor,
            // whose zeros are all +0, gives a comparable quotient.
            push(x / y, a.precision == .exact && b.step == "leaf" ? .approximate : .unstable, step: "div")
        case (4, _, _): push(x.pointwiseMax(y), keptBoth, step: "max")
        case (5, _, _): push(x.pointwiseMin(y), keptBoth, step: "min")
        case (6, _, _): push(x.exp(), rounded, step: "exp")
        case (7, _, _): push(x.log(), magnifying, step: "log")
        case (8, _, _): push(x.tanh(), rounded, step: "tanh")
        case (9, _, _): push(x.sigmoid(), rounded, step: "sigmoid")
        case (10, _, _): push(x.relu(), kept, step: "relu")
        case (11, _, _): push(x.gelu(), rounded, step: "gelu")
        case (12, _, _): push(x.squareRoot(), magnifying, step: "sqrt")
        case (13, _, _): push(x.abs(), kept, step: "abs")
        case (14, _, _): push(-x, kept, step: "neg")
        case (15, _, _): push(x.clamped(to: -1...1), kept, step: "clamp")
        case (16, .exact, _): push(x.floor(), .exact, step: "floor")
        case (17, .exact, _): push(x.round(), .exact, step: "round")
        case (18, .exact, _): push(x.sign(), .exact, step: "sign")
        case (19, _, .exact): push(x.replacing(with: y, where: x .< y), .exact, step: "replacing")
        case (20, _, _): push(x.sum(alongAxes: axis(x.rank), keepRank: reader.next() % 2 == 0), kept, step: "sum")
        case (21, _, _): push(x.mean(alongAxes: axis(x.rank)), rounded, step: "mean")
        case (22, _, _): push(x.max(alongAxes: axis(x.rank), keepRank: reader.next() % 2 == 0), kept, step: "maxReduce")
        case (23, .exact, _): push(x.argmax(alongAxis: axis(x.rank)), .exact, step: "argmax")
        case (24, _, _): push(x.softmax(alongAxis: axis(x.rank)), rounded, step: "softmax")
        case (25, _, _): push(x.logSoftmax(alongAxis: axis(x.rank)), rounded, step: "logSoftmax")
        case (26, _, _): push(x.layerNorm(alongAxis: axis(x.rank)), magnifying, step: "layerNorm")
        case (27, _, _): push(x.reshaped(to: reshapeTarget(x.shape)), kept, step: "reshape")
        case (28, _, _): push(x.transposed(permutation: permutation(x.rank)), kept, step: "transpose")
        case (29, _, _): push(x.matmul(y), roundedBoth, step: "matmul")
        case (30, _, _): push(Tensor(concatenating: [x, y], alongAxis: axis(x.rank)), keptBoth, step: "concat")
        case (31, _, _): push(slice(x), kept, step: "slice")
        case (32, _, _): push(x.expandingShape(at: axis(x.rank)), kept, step: "expand")
        case (33, _, _): push(x.squeezingShape(), kept, step: "squeeze")
        case (34, _, _): push(x.broadcast(to: decodedShape()), kept, step: "broadcast")
        case (35, _, _): push(x.cumulativeSum(alongAxis: axis(x.rank)), kept, step: "cumsum")
        case (36, _, _): push(gather(x), kept, step: "gather")
        case (37, _, _): push(x.reversed(alongAxes: axis(x.rank)), kept, step: "reverse")
        case (38, _, _): push(x.tiled(multiples: (0..<x.rank).map { _ in Int(reader.next() % 3) }), kept, step: "tile")
        case (39, _, _): push(x.variance(alongAxes: axis(x.rank)), magnifying, step: "variance")
        case (40, _, _): push(x.transposed(), kept, step: "transpose")
        default: push(leaf(), .exact)
        }
    }

    /// A target shape of the same element count (usually), with a `-1` now and then.
    private mutating func reshapeTarget(_ shape: [Int]) -> [Int] {
        let count = shape.reduce(1, *)
        switch reader.next() % 4 {
        case 0: return [count]
        case 1: return [-1, 1]
        case 2: return count % 2 == 0 ? [2, count / 2] : [count, 1]
        default: return decodedShape()
        }
    }

    /// A permutation of `0..<rank`, or (now and then) an invalid one.
    private mutating func permutation(_ rank: Int) -> [Int] {
        var axes = Array(0..<rank)
        for index in axes.indices.reversed() where index > 0 {
            axes.swapAt(index, Int(reader.next()) % (index + 1))
        }
        if reader.next() % 8 == 0 { axes.append(0) }
        return axes
    }

    /// A slice of the first axis (an integer or a range, negative bounds included).
    private mutating func slice(_ x: Tensor) -> Tensor {
        let lower = Int(reader.next() % 7) - 3
        let upper = Int(reader.next() % 7) - 1
        switch reader.next() % 3 {
        case 0: return x[lower]
        case 1: return x[Swift.min(lower, upper)..<Swift.max(lower, upper)]
        default: return x[..., lower...]
        }
    }

    /// A gather along a decoded axis with indices mostly in range, sometimes not.
    private mutating func gather(_ x: Tensor) -> Tensor {
        let count = Int(reader.next() % 5)
        let indices = (0..<count).map { _ in Int32(Int(reader.next() % 12) - 2) }
        return x.gathering(atIndices: Tensor(shape: [count], scalars: indices), alongAxis: axis(x.rank))
    }
}

/// Reads bytes one at a time, giving zeros once they run out.
struct ByteReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }
}
