import TensorEngine
/// A graph over the public `Tensor` API decoded from arbitrary bytes: the random-graph fuzz
/// target's input language, also replayed by the regression tests.
///
/// The bytes are read as a program for a stack machine. A few leading bytes make the first
/// leaves; every following step (an operation byte, operand choices and the operation's
/// arguments) pushes one new tensor made by a public operation on earlier entries
/// (``RandomGraph/Step`` lists them), with shapes, axes, sizes and indices drawn from the bytes,
/// so many programs are invalid somewhere (a broadcast that does not fit, an axis out of range,
/// a reshape to the wrong size, a gather index out of range). Decoding is deterministic: the same
/// bytes always give the same graph, so a graph can be built once per backend.
///
/// Leaf values are multiples of 1/4 in [-4, 4]. Sums, differences, negations, absolute values,
/// maxima, minima and data movement of such values are exact in `Float` whatever the order of
/// evaluation, so their results are compared exactly and may feed discontinuous operations
/// (floor, comparisons, argmax, casts) without a rounding difference flipping the result (zeros
/// may differ in sign: the maximum of -0 and +0 may be either). Other operations are approximate:
/// each approximate entry carries a ``Entry/bound``, the largest difference between backends
/// that rounding can explain, propagated from its operands (`RandomGraph+Bounds.swift`).
/// Operations that can magnify a last-bit difference without bound (division by a computed
/// value, logarithm, square root, normalisation) make their result unstable when their operand
/// is not exact: only whether it fails, and its shape, are compared.
package struct RandomGraph {
    /// How closely every backend must reproduce an entry's values.
    package enum Precision: Int, Comparable, Sendable {
        /// Bit-for-bit (NaN matching NaN, and either zero the other).
        case exact
        /// Within the entry's bound (``Entry/bound``).
        case approximate
        /// Not compared: a last-bit difference upstream may change it arbitrarily.
        case unstable

        package static func < (lhs: Precision, rhs: Precision) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One tensor on the stack and how closely backends must agree on it.
    package struct Entry {
        package let tensor: Tensor
        package let precision: Precision
        /// For an approximate entry, the largest difference from the reference values that
        /// rounding explains, element by element (a lazy `Float` tensor of the entry's shape,
        /// evaluated only when a comparison needs it); `nil` for exact and unstable entries.
        package let bound: Tensor?
        /// The operation that made it, for reports.
        package let step: String
    }

    /// The plain tolerance of approximate values: relative, and absolute below magnitude 1. Far
    /// above the few ulps (about 1e-7 each) by which backends' functions and summation orders
    /// differ, except where a result is much smaller than its terms (see ``Entry/bound``).
    package static let tolerance = 1e-3

    /// Every tensor the program made, in order.
    package private(set) var entries: [Entry] = []
    var reader: ByteReader

    /// The largest number of operations decoded from one input (keeps each fuzz run short).
    static let maximumSteps = 24
    /// Axis sizes leaves draw from: empty, size one, small, odd and a few past a vector width.
    static let sizes = [0, 1, 2, 3, 4, 5, 7, 8, 17, 33]
    /// The most elements a tiling or padding may make (keeps each evaluation short); a larger
    /// request is scaled down, except for the rare huge one that must fail as too large.
    static let maximumMadeCount = 1 << 16

    /// Where in the input each step's code byte was read, in order.
    package internal(set) var stepCodePositions: [Int] = []
    /// How many steps a code byte chooses among (the step list's length, but for re-encoding).
    let stepCount: Int

    /// Decodes `bytes` into a graph (building it, not evaluating it).
    package init(decoding bytes: [UInt8]) {
        self.init(decoding: bytes, stepCount: Step.allCases.count)
    }

    /// Decodes `bytes` in the language of a step list of `stepCount` steps, the first of today's.
    package init(decoding bytes: [UInt8], stepCount: Int) {
        self.stepCount = Swift.max(1, Swift.min(stepCount, Step.allCases.count))
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

    /// Pushes a new entry; `bound` is built only for an approximate one.
    mutating func push(
        _ tensor: Tensor, _ precision: Precision, step: String = "leaf", bound: () -> Tensor? = { nil }
    ) {
        // A bound made from one operand's alone has that operand's shape: broadcast to the result.
        let bound = precision == .approximate
            ? bound().map { $0.shape == tensor.shape ? $0 : $0.broadcast(to: tensor.shape) }
            : nil
        entries.append(Entry(tensor: tensor, precision: precision, bound: bound, step: step))
    }

    /// A float leaf of a decoded shape with values k/4, k in -16...16.
    mutating func leaf() -> Tensor {
        let shape = decodedShape()
        let count = shape.reduce(1, *)
        var state = UInt32(reader.next()) &* 2_654_435_761 &+ 12_345
        let scalars = (0..<count).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int(state >> 16) % 33 - 16) / 4
        }
        return Tensor(shape: shape, scalars: scalars)
    }

    mutating func decodedShape() -> [Int] {
        let rank = [0, 1, 1, 2, 2, 2, 3, 3][Int(reader.next() % 8)]
        return (0..<rank).map { _ in Self.sizes[Int(reader.next()) % Self.sizes.count] }
    }

    mutating func operand() -> Entry { entries[Int(reader.next()) % entries.count] }

    /// A multiple of 1/4 in [-4, 4].
    mutating func quarter() -> Float { Float(Int(reader.next() % 33) - 16) / 4 }

    /// An axis of a tensor of rank `rank`, negative half the time; one time in sixteen, one just
    /// out of range.
    mutating func axis(_ rank: Int) -> Int {
        let byte = reader.next()
        guard byte % 16 != 0, rank > 0 else { return byte % 32 == 0 ? -rank - 1 : rank }
        let axis = Int(byte / 16) % rank
        return byte % 2 == 0 ? axis : axis - rank
    }

    /// A target shape of the same element count (usually), with a `-1` now and then.
    mutating func reshapeTarget(_ shape: [Int]) -> [Int] {
        let count = shape.reduce(1, *)
        switch reader.next() % 4 {
        case 0: return [count]
        case 1: return [-1, 1]
        case 2: return count % 2 == 0 ? [2, count / 2] : [count, 1]
        default: return decodedShape()
        }
    }

    /// A permutation of `0..<rank`, or (now and then) an invalid one.
    mutating func permutation(_ rank: Int) -> [Int] {
        var axes = Array(0..<rank)
        for index in axes.indices.reversed() where index > 0 {
            axes.swapAt(index, Int(reader.next()) % (index + 1))
        }
        if reader.next() % 8 == 0 { axes.append(0) }
        return axes
    }

    /// The number of elements of a shape with these extents, `Int.max` if it overflows (an
    /// empty tensor may have a huge extent, made by padding or tiling it by a huge size).
    static func elements(_ extents: [Int]) -> Int {
        guard !extents.contains(where: { $0 <= 0 }) else { return 0 }
        return extents.reduce(1) { product, extent in
            let (next, overflow) = product.multipliedReportingOverflow(by: extent)
            return overflow ? Int.max : next
        }
    }

    /// `number` counts drawn from `choices` (tiling multiples, padding sizes): halved, largest
    /// first, while `made(counts)` (the elements of the result) is over ``maximumMadeCount``,
    /// except that one time in 32 the first is huge (the operation must fail as too large before
    /// allocating anything). Now and then one count too many, or a negative one (invalid).
    mutating func counts(_ number: Int, choices: [Int], made: ([Int]) -> Int) -> [Int] {
        let control = reader.next()
        var counts = (0..<number).map { _ in choices[Int(reader.next()) % choices.count] }
        switch control % 32 {
        case 0 where number > 0: counts[0] = Int.max / 2
        case 1: counts.append(1)
        case 2 where number > 0: counts[number - 1] = -1
        default:
            while made(counts) > Self.maximumMadeCount,
                  let largest = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[largest] > 0 {
                counts[largest] /= 2
            }
        }
        return counts
    }
}

/// Reads bytes one at a time, giving zeros once they run out.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }

    mutating func next() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }
}

extension RandomGraph {
    /// The same program in today's language: `bytes` written for a step list of `stepCount`
    /// steps (today's first ones) decode, after this, to the same program. The step list grows by
    /// appending, which changes what a code byte picks (it is taken modulo the count); each
    /// saved input's code bytes are rewritten to the step's position, which picks it under
    /// either count.
    package static func reencoded(_ bytes: [UInt8], fromStepCount stepCount: Int) -> [UInt8] {
        let old = RandomGraph(decoding: bytes, stepCount: stepCount)
        var rewritten = bytes
        for position in old.stepCodePositions where position < rewritten.count {
            rewritten[position] = UInt8(Int(rewritten[position]) % old.stepCount)
        }
        return rewritten
    }
}
