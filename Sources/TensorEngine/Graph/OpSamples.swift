/// How the parity suite samples an op: part of the op's row of the table. The suite (in
/// `TensorEngineChecks`) makes the inputs and compares every backend with the naive reference.
package enum SampleSpec: Sendable {
    /// Constants are not computed.
    case none
    /// Every accepted scalar type over shapes of every layout (rank 0, size 1, empty, transposed,
    /// reversed, strided, broadcast, and large), values from the expression's domain, and special
    /// values (NaN, ±∞, ±0, huge, subnormal); once per attribute variant.
    case elementwise(variants: [OpAttributes])
    /// Reductions: the op made from sampled axes and `keepRank`.
    case reduction(ReductionSamples, @Sendable (_ axes: [Int], _ keepRank: Bool) -> Op)
    /// Work along one axis: the op made from the sampled axis; then hand-written cases of the
    /// forms the sampled shapes do not reach (a layer norm's scale and bias).
    case lines(@Sendable (_ axis: Int) -> Op, more: [ParitySample] = [])
    /// Hand-written cases.
    case cases([ParitySample])
}

/// Which axes a reduction's samples reduce.
package enum ReductionSamples: Sendable, Hashable {
    /// Any set of axes, with special values when `specialValues` (products of huge and tiny values
    /// overflow or not depending on the order of multiplication, which backends may choose).
    case axes(specialValues: Bool)
    /// One non-empty axis (argmax, argmin), with special values.
    case oneAxis
    /// One axis, scanned (cumulative sums).
    case scan
}

/// One hand-written parity case of an op.
package struct ParitySample: Sendable {
    package let label: String
    package let inputs: [SampleInput]
    package let apply: SampleApplication
    /// Terms summed into one output (K for matmul): scales the tolerance.
    package var reductionLength = 1
}

/// How a sample's result is made from its inputs.
package enum SampleApplication: Sendable {
    /// The op recorded directly.
    case op(Op)
    /// Through the public API, for ops the front end prepares (a reshape of a strided view is
    /// copied first).
    case frontEnd(@Sendable ([Tensor]) -> Tensor)
}

/// How a parity input is laid out in memory, so backends are tested on views as well as buffers.
package enum SampleLayout: Sendable, Hashable, CustomStringConvertible {
    case contiguous
    /// Made in the reversed shape and transposed back: every axis strided.
    case transposed
    /// A smaller tensor broadcast to the shape (zero strides).
    case broadcast(from: [Int])
    /// Every axis walked backwards (negative strides).
    case reversed
    /// Every other element of a twice-as-long last axis (stride 2, offset 1).
    case strided

    package var description: String {
        switch self {
        case .contiguous: "contiguous"
        case .transposed: "transposed"
        case .broadcast(let from): "broadcast from \(describe(from))"
        case .reversed: "reversed"
        case .strided: "strided"
        }
    }
}

/// The values a sample input holds.
package enum SampleValues: Sendable, Hashable {
    /// Ordinary values from a domain: normal floats, integers in -20...20, random booleans.
    case ordinary(SampleDomain)
    /// Integers in 0..<bound, as `Int32` (gather indices).
    case indices(below: Int)
    /// NaN, ±∞, ±0, huge, tiny (subnormal) and ordinary values, cycled (rotated by `shift`), to
    /// check that every backend treats them as the reference does.
    case special(shift: Int)

    static let mixed = SampleValues.ordinary(.all)
    package static let specialValues: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1e30, -1e30, 1e-40, 3, -2, 0.5]
}

/// One input of a parity case.
package struct SampleInput: Sendable, Hashable, CustomStringConvertible {
    package var shape: [Int]
    package var type: ScalarType = .float32
    package var layout: SampleLayout = .contiguous
    package var values: SampleValues = .mixed

    package init(
        shape: [Int], type: ScalarType = .float32, layout: SampleLayout = .contiguous, values: SampleValues = .mixed
    ) {
        self.shape = shape
        self.type = type
        self.layout = layout
        self.values = values
    }

    package var description: String { "\(describe(shape)) \(type) \(layout)" }
}
