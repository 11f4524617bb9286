import Foundation

/// The element types a safetensors file may declare, with their sizes.
///
/// Every type the format defines is known, so a file holding some can be opened and its other
/// tensors read; ``SafetensorsFile/tensor(named:)`` loads `F32`, `F16`, `BF16` (widened to `Float`),
/// `I32` and `BOOL`.
public enum SafetensorsDType: String, Sendable, Hashable, CaseIterable {
    /// 64-bit float (not loadable).
    case F64
    /// 32-bit float.
    case F32
    /// 16-bit IEEE float.
    case F16
    /// bfloat16, widened to `Float` when loaded.
    case BF16
    /// 64-bit signed integer (not loadable).
    case I64
    /// 32-bit signed integer.
    case I32
    /// 16-bit signed integer (not loadable).
    case I16
    /// 8-bit signed integer (not loadable).
    case I8
    /// 8-bit unsigned integer (not loadable).
    case U8
    /// Boolean, one byte.
    case BOOL

    /// Bytes per element.
    public var byteCount: Int {
        switch self {
        case .F64, .I64: 8
        case .F32, .I32: 4
        case .F16, .BF16, .I16: 2
        case .I8, .U8, .BOOL: 1
        }
    }

    /// The scalar type a loaded tensor has, or `nil` when the engine cannot load the type.
    public var loadedType: ScalarType? {
        switch self {
        case .F32, .BF16: .float32
        case .F16: .float16
        case .I32: .int32
        case .BOOL: .bool
        case .F64, .I64, .I16, .I8, .U8: nil
        }
    }
}

/// One tensor's entry in a safetensors header: type, shape and byte range inside the data section.
public struct SafetensorsEntry: Sendable, Hashable {
    /// The declared element type.
    public let dtype: SafetensorsDType
    /// The declared shape.
    public let shape: [Int]
    /// The byte range inside the data section (after the header).
    public let byteRange: Range<Int>
}

/// The parsed and validated header of a safetensors file.
///
/// Layout: an 8-byte little-endian header length `N`, `N` bytes of JSON mapping each tensor name to
/// `{"dtype", "shape", "data_offsets": [begin, end]}` (plus an optional `"__metadata__"` map of
/// strings), then the data section.
struct SafetensorsHeader: Sendable {
    /// The largest header accepted (the reference implementation's limit).
    static let maximumHeaderLength = 100_000_000

    var entries: [String: SafetensorsEntry]
    var metadata: [String: String]
    /// The byte offset of the data section in the file.
    var dataOffset: Int

    /// Parses and validates the header of a file whose bytes are `bytes`: the length is checked
    /// against the file size, every entry's shape, type and offsets against each other and the
    /// data section, and no two entries may overlap.
    init(parsing bytes: UnsafeRawBufferPointer) throws(FileFormatError) {
        func fail(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
            FileFormatError(kind, format: "safetensors", message: message)
        }
        guard bytes.count >= 8 else { throw fail(.truncated, "the file has \(bytes.count) bytes, fewer than the 8 of the header length") }
        let declared = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[$1]) << (8 * UInt64($1)) }
        guard declared <= UInt64(SafetensorsHeader.maximumHeaderLength) else {
            throw fail(.badHeader, "the header claims \(declared) bytes, more than the \(SafetensorsHeader.maximumHeaderLength) accepted")
        }
        let length = Int(declared)
        guard length <= bytes.count - 8 else {
            throw fail(.truncated, "the header claims \(length) bytes but the file has \(bytes.count - 8) after the length")
        }
        guard length >= 2 else { throw fail(.badHeader, "a header of \(length) bytes cannot hold a JSON object") }
        let json = Data(UnsafeRawBufferPointer(rebasing: bytes[8..<(8 + length)]))
        let object: Any
        do { object = try JSONSerialization.jsonObject(with: json) } catch {
            throw fail(.badJSON, "the header is not valid JSON: \(error.localizedDescription)")
        }
        guard let dictionary = object as? [String: Any] else { throw fail(.badJSON, "the header is not a JSON object") }
        dataOffset = 8 + length
        let dataSize = bytes.count - dataOffset
        var entries: [String: SafetensorsEntry] = [:]
        var metadata: [String: String] = [:]
        for (name, value) in dictionary {
            if name == "__metadata__" {
                guard let map = value as? [String: Any] else { throw fail(.badHeader, "__metadata__ is not an object") }
                for (key, item) in map {
                    guard let text = item as? String else { throw fail(.badHeader, "__metadata__ value for '\(key)' is not a string") }
                    metadata[key] = text
                }
                continue
            }
            entries[name] = try SafetensorsHeader.entry(name, value, dataSize: dataSize)
        }
        let ordered = entries.sorted { ($0.value.byteRange.lowerBound, $0.value.byteRange.upperBound, $0.key) < ($1.value.byteRange.lowerBound, $1.value.byteRange.upperBound, $1.key) }
        for (previous, next) in zip(ordered, ordered.dropFirst())
        where !previous.value.byteRange.isEmpty && !next.value.byteRange.isEmpty && next.value.byteRange.lowerBound < previous.value.byteRange.upperBound {
            throw fail(.overlappingData, "tensors '\(previous.key)' (bytes \(previous.value.byteRange)) and '\(next.key)' (bytes \(next.value.byteRange)) overlap")
        }
        self.entries = entries
        self.metadata = metadata
    }

    private static func integer(_ value: Any) -> Int? {
        if let number = value as? NSNumber {
            // Reject booleans and fractions that JSONSerialization also reports as numbers.
            let double = number.doubleValue
            guard !isJSONBoolean(number), double.rounded() == double, abs(double) < 9.0e15 else { return nil }
            return number.intValue
        }
        return value as? Int
    }

    private static func entry(_ name: String, _ value: Any, dataSize: Int) throws(FileFormatError) -> SafetensorsEntry {
        func fail(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
            FileFormatError(kind, format: "safetensors", message: "tensor '\(name)': \(message)")
        }
        guard let fields = value as? [String: Any] else { throw fail(.badHeader, "the entry is not an object") }
        guard let dtypeName = fields["dtype"] as? String else { throw fail(.badHeader, "no dtype string") }
        guard let dtype = SafetensorsDType(rawValue: dtypeName) else { throw fail(.unsupportedDType, "unknown dtype '\(dtypeName)'") }
        guard let rawShape = fields["shape"] as? [Any] else { throw fail(.badHeader, "no shape array") }
        var shape: [Int] = []
        for dimension in rawShape {
            guard let extent = integer(dimension), extent >= 0 else { throw fail(.invalidShape, "the shape \(rawShape) holds something other than non-negative integers") }
            shape.append(extent)
        }
        guard let offsets = fields["data_offsets"] as? [Any], offsets.count == 2, let begin = integer(offsets[0]), let end = integer(offsets[1]) else {
            throw fail(.badHeader, "data_offsets is not a pair of integers")
        }
        guard let count = Shape.elementCount(shape), case let (size, overflow) = count.multipliedReportingOverflow(by: dtype.byteCount), !overflow else {
            throw fail(.invalidShape, "the shape \(describe(shape)) is too large to represent")
        }
        guard begin >= 0, begin <= end else { throw fail(.invalidOffsets, "data_offsets [\(begin), \(end)] are not an increasing pair") }
        guard end <= dataSize else { throw fail(.invalidOffsets, "the data end at byte \(end), past the \(dataSize) bytes of data") }
        guard end - begin == size else {
            throw fail(.invalidOffsets, "data_offsets [\(begin), \(end)] span \(end - begin) bytes but shape \(describe(shape)) of \(dtype) needs \(size)")
        }
        return SafetensorsEntry(dtype: dtype, shape: shape, byteRange: begin..<end)
    }
}

/// Whether an `NSNumber` came from a JSON `true` or `false`.
private func isJSONBoolean(_ number: NSNumber) -> Bool {
    // On every platform JSONSerialization reports `true`/`false` with the objCType "c".
    String(cString: number.objCType) == "c"
}
