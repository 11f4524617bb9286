/// A tensor whose values the importer knows on the host: an initializer small enough to keep
/// there, a `Constant`, or the result of folding a shape computation (`Shape`, `Gather`,
/// `Concat`, ...).
///
/// Values are held at ONNX's own precision (`Int64` for every integer type, `Double` for every
/// floating-point one), so shape arithmetic on `int64` is exact and `Slice` ends like
/// `INT64_MAX` keep their meaning; they become engine tensors only when an engine op reads them.
struct ONNXConstant: Sendable, Hashable {
    /// The values, row-major, by family.
    enum Values: Sendable, Hashable {
        case integers([Int64])
        case reals([Double])
        case booleans([Bool])
    }

    var dataType: ONNXDataType
    var shape: [Int]
    var values: Values

    /// The largest constant (in elements) the importer keeps on the host; larger ones become
    /// engine tensors at once.
    static let hostElementLimit = 1 << 16

    var count: Int {
        switch values {
        case .integers(let values): values.count
        case .reals(let values): values.count
        case .booleans(let values): values.count
        }
    }

    /// The values as integers (reals truncated toward zero, booleans as 0 and 1).
    var integers: [Int64] {
        switch values {
        case .integers(let values): values
        case .reals(let values): values.map { Int64(clampingFinite: $0) }
        case .booleans(let values): values.map { $0 ? 1 : 0 }
        }
    }

    /// The values as reals.
    var reals: [Double] {
        switch values {
        case .integers(let values): values.map { Double($0) }
        case .reals(let values): values
        case .booleans(let values): values.map { $0 ? 1 : 0 }
        }
    }

    /// The values as booleans (non-zero is true).
    var booleans: [Bool] {
        switch values {
        case .integers(let values): values.map { $0 != 0 }
        case .reals(let values): values.map { $0 != 0 }
        case .booleans(let values): values
        }
    }

    /// A rank-1 integer constant.
    static func integers(_ values: [Int64], type: ONNXDataType = .int64) -> ONNXConstant {
        ONNXConstant(dataType: type, shape: [values.count], values: .integers(values))
    }

    /// The same values under another type, converted as ONNX's `Cast` does.
    func cast(to type: ONNXDataType) -> ONNXConstant {
        if type == .bool { return ONNXConstant(dataType: type, shape: shape, values: .booleans(booleans)) }
        if type.isInteger {
            return ONNXConstant(dataType: type, shape: shape, values: .integers(integers.map { type.wrap($0) }))
        }
        var reals = reals
        if type == .float { reals = reals.map { Double(Float($0)) } }
        if type == .float16 { reals = reals.map { Double(Float(Float16(Float($0)))) } }
        return ONNXConstant(dataType: type, shape: shape, values: .reals(reals))
    }

    /// The values as an engine tensor of the type's engine scalar type (``ONNXDataType/engineType``).
    ///
    /// Throws ``ModelError/Kind/unsupportedType`` for a type the engine cannot hold, and
    /// ``ModelError/Kind/invalidNode`` for an integer outside `Int32`.
    func tensor() throws(ModelError) -> Tensor {
        guard let type = dataType.engineType else {
            throw ModelError(.unsupportedType, "the engine cannot hold \(dataType) values")
        }
        // A one-element real constant is the engine's shared scalar of that value (as ONNX
        // Runtime shares equal scalar initializers): a graph's thousand `x * 0.5`s read one
        // node, and a fused region of them one operand.
        if case .reals(let values) = values, values.count == 1, shape.allSatisfy({ $0 == 1 }),
            type == .float32 || type == .float16 || type == .float64
        {
            return Tensor.scalar(values[0], type, shape: shape)
        }
        switch type {
        case .float32: return Tensor.constant(reals.map { Float($0) }, shape: shape, op: "onnx constant", at: nil)
        case .float16:
            return Tensor.constant(reals.map { Float16(Float($0)) }, shape: shape, op: "onnx constant", at: nil)
        case .bool: return Tensor.constant(booleans, shape: shape, op: "onnx constant", at: nil)
        case .float64: return Tensor.constant(reals, shape: shape, op: "onnx constant", at: nil)
        case .int64: return Tensor.constant(integers, shape: shape, op: "onnx constant", at: nil)
        case .int32:
            var narrowed: [Int32] = []
            narrowed.reserveCapacity(count)
            for value in integers {
                guard let exact = Int32(exactly: value) else {
                    throw ModelError(
                        .invalidNode,
                        "the \(dataType) value \(value) is outside the 32-bit range the engine computes \(dataType) in")
                }
                narrowed.append(exact)
            }
            return Tensor.constant(narrowed, shape: shape, op: "onnx constant", at: nil)
        }
    }
}

extension Int64 {
    /// The value of a finite double truncated toward zero and clamped to `Int64`'s range (NaN is 0).
    init(clampingFinite value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9.223_372_036_854_775_807e18 {
            self = .max
        } else if value <= -9.223_372_036_854_775_808e18 {
            self = .min
        } else {
            self = Int64(value.rounded(.towardZero))
        }
    }
}

extension ONNXDataType {
    /// An integer wrapped to this integer type's width, as a C cast does.
    func wrap(_ value: Int64) -> Int64 {
        switch rawValue {
        case 2: Int64(UInt8(truncatingIfNeeded: value))
        case 3: Int64(Int8(truncatingIfNeeded: value))
        case 4: Int64(UInt16(truncatingIfNeeded: value))
        case 5: Int64(Int16(truncatingIfNeeded: value))
        case 6: Int64(Int32(truncatingIfNeeded: value))
        case 12: Int64(UInt32(truncatingIfNeeded: value))
        default: value
        }
    }
}
