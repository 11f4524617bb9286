/// A value of a running MIL program: what an operation reads and gives.
///
/// Numbers are the importer values ONNX models use too (``ONNXValue``: a lazy engine tensor, or a
/// host constant the operation can read sizes and axes from), so the host constants, their casts
/// and the compute-plan trace serve both formats. MIL adds strings (parameters such as
/// `pad_type`), packed narrow integers (compressed weights, read by the `constexpr_*` operations
/// without widening them first) and states.
enum MILValue: Sendable {
    case imported(ONNXValue)
    case strings([String])
    case packed(MILPackedIntegers)
    /// A state's current value; `read_state` reads it, `coreml_update_state` replaces it.
    case state(name: String)
    /// A tuple or list of values (`concat`'s `values` bound to one list constant).
    case list([MILValue])
}

/// Integers of a narrow type as stored (int8, uint8, or 1- to 6-bit unsigned or 4-bit signed
/// elements packed low bits first), with their shape.
struct MILPackedIntegers: Sendable {
    let type: MILDataType
    let shape: [Int]
    let bytes: [UInt8]

    /// The number of elements.
    var count: Int { shape.reduce(1, *) }

    /// Element `index`.
    func element(_ index: Int) -> Int {
        let width = type.bitWidth ?? 8
        if width == 8 { return type == .int8 ? Int(Int8(bitPattern: bytes[index])) : Int(bytes[index]) }
        let bit = index * width
        var raw = 0
        for offset in 0..<width {
            let position = bit + offset
            raw |= Int((bytes[position >> 3] >> UInt8(position & 7)) & 1) << offset
        }
        if type == .int4, raw >= 8 { raw -= 16 }
        return raw
    }

    /// Every element, widened.
    var elements: [Int] { (0..<count).map(element) }

    /// Packed integers over `bytes`, checked to hold `shape`'s elements.
    init(type: MILDataType, shape: [Int], bytes: [UInt8]) throws(ModelError) {
        guard let width = type.bitWidth, width <= 8 else {
            throw ModelError(.unsupportedType, "\(type) is not a packed integer type")
        }
        let count = shape.reduce(1, *)
        let (bits, overflow) = count.multipliedReportingOverflow(by: width)
        guard !overflow, (bits + 7) / 8 <= bytes.count else {
            throw ModelError(.invalidModel, "\(bytes.count) bytes cannot hold \(count) \(type) elements")
        }
        self.type = type
        self.shape = shape
        self.bytes = bytes
    }
}
