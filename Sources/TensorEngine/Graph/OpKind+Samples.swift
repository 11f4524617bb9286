/// How a parity input is laid out in memory, so backends are tested on views as well as buffers.
enum SampleLayout: Sendable, Hashable, CustomStringConvertible {
    case contiguous
    /// Made in the reversed shape and transposed back: every axis strided.
    case transposed
    /// A smaller tensor broadcast to the shape (zero strides).
    case broadcast(from: [Int])
    /// Every axis walked backwards (negative strides).
    case reversed
    /// Every other element of a twice-as-long last axis (stride 2, offset 1).
    case strided

    var description: String {
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
enum SampleValues: Sendable, Hashable {
    /// Normal values (floats), integers in -20...20, or random booleans.
    case mixed
    /// Values in [0.5, 2.5): inside the domain of log, square root and pow.
    case positive
    /// Integers in 0..<bound, as `Int32` (gather indices).
    case indices(below: Int)
    /// NaN, ±∞, ±0, huge, tiny (subnormal) and ordinary values, cycled (rotated by `shift`), to
    /// check that every backend treats them as the reference does.
    case special(shift: Int)

    static let specialValues: [Double] = [.nan, .infinity, -.infinity, 0, -0.0, 1e30, -1e30, 1e-40, 3, -2, 0.5]
}

/// One input of a parity case.
struct SampleInput: Sendable, Hashable, CustomStringConvertible {
    var shape: [Int]
    var type: ScalarType = .float32
    var layout: SampleLayout = .contiguous
    var values: SampleValues = .mixed

    var description: String { "\(describe(shape)) \(type) \(layout)" }
}

/// One case of the generated parity suite: an op applied to inputs of given shapes, types and
/// layouts. Every backend's result is compared with the naive reference under the op's tolerance.
package struct ParityCase: Sendable, CustomStringConvertible {
    /// The op under test; for a composite case, the op whose tolerance bounds the whole chain.
    let kind: OpKind
    var isComposite = false
    let label: String
    let inputs: [SampleInput]
    /// Terms summed into one output (K for matmul): scales the tolerance.
    let reductionLength: Int
    let build: @Sendable ([Tensor]) -> Tensor

    package var description: String { "\(isComposite ? "composite" : kind.name) \(label): " + inputs.map(\.description).joined(separator: ", ") }

    /// Every parity case: each op's samples, then the composites.
    package static var all: [ParityCase] { OpKind.allParityCases }

    /// Creates the inputs afresh (new nodes each call, so no cached result is shared).
    func makeInputs(seed: Int) -> [Tensor] {
        inputs.enumerated().map { index, input in input.make(seed: seed &* 31 &+ index) }
    }
}

extension SampleInput {
    /// A tensor with this input's shape, type, values and layout.
    func make(seed: Int) -> Tensor {
        let storageShape: [Int] = switch layout {
        case .contiguous, .reversed: shape
        case .transposed: shape.reversed()
        case .broadcast(let from): from
        case .strided: shape.isEmpty ? [] : shape.dropLast() + [shape[shape.count - 1] * 2]
        }
        let base = Self.data(storageShape, type, values, seed: seed)
        switch layout {
        case .contiguous: return base
        case .transposed: return base.transposed()
        case .broadcast: return base.broadcast(to: shape)
        case .reversed: return base.reversed(alongAxes: Array(0..<shape.count))
        case .strided:
            guard let last = shape.last else { return base }
            var dimensions = storageShape.map { SliceDimension(start: 0, count: $0, step: 1) }
            dimensions[dimensions.count - 1] = SliceDimension(start: last > 0 ? 1 : 0, count: last, step: 2)
            return Tensor.record(.slice(dimensions), [base], at: nil)
        }
    }

    static func data(_ shape: [Int], _ type: ScalarType, _ values: SampleValues, seed: Int) -> Tensor {
        let count = shape.reduce(1, *)
        let random = CounterRandom(seed: UInt64(seed) &* 0x2545_F491_4F6C_DD1D)
        let raw: [Double] = (0..<count).map { n in
            switch values {
            case .mixed:
                switch type {
                case .float32, .float16: random.normal(UInt64(n)) * 1.5
                case .int32: (random.unit(UInt64(n)) * 41).rounded(.down) - 20
                case .bool: random.unit(UInt64(n)) < 0.5 ? 0 : 1
                }
            case .positive: 0.5 + 2 * random.unit(UInt64(n))
            case .indices(let bound): (random.unit(UInt64(n)) * Double(bound)).rounded(.down)
            case .special(let shift):
                switch type {
                case .float32, .float16: SampleValues.specialValues[(n + shift) % SampleValues.specialValues.count]
                case .int32: [0, 1, -1, 2_147_483_647, -2_147_483_648, 7, -7][(n + shift) % 7]
                case .bool: (n + shift) % 2 == 0 ? 0 : 1
                }
            }
        }
        switch type {
        case .float32: return Tensor(shape: shape, scalars: raw.map { Float($0) })
        case .float16: return Tensor(shape: shape, scalars: raw.map { Float16(Float($0)) })
        case .int32: return Tensor(shape: shape, scalars: raw.map { Int32($0) })
        case .bool: return Tensor(shape: shape, scalars: raw.map { $0 != 0 })
        }
    }
}
