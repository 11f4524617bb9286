/// A reader of Protocol Buffers' binary wire format, over bytes that stay where they are.
///
/// The engine reads ONNX and Core ML files with this reader rather than a generated
/// protobuf library: no Swift package can be fetched where the engine is built, and the few
/// messages it needs decode in a few hundred lines. The reader knows the wire format only (varints,
/// fixed-width values, length-delimited fields); each message's decoder (`ONNXProto+Decoding.swift`,
/// `IO/CoreML/*+Decoding.swift`) says which field number means what and skips the ones it does not
/// know, as protobuf requires.
///
/// Every malformed input — a varint longer than ten bytes, a length past the end of its message, a
/// field number 0, a wire type a field cannot have, the deprecated group wire types — is a
/// ``FileFormatError`` naming the message and the field, never a trap or an unbounded allocation.
struct ProtobufReader {
    /// How a field's value is encoded on the wire.
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case startGroup = 3
        case endGroup = 4
        case fixed32 = 5
    }

    /// A field's key: its number and how its value is encoded.
    struct FieldKey {
        let number: Int
        let wireType: WireType
    }

    /// The bytes of the message being read.
    let bytes: UnsafeRawBufferPointer
    /// Where `bytes` starts in the file, so that a length-delimited value can be located in it.
    let fileOffset: Int
    /// The message's name in errors (`TensorProto`, `ModelProto.graph.node[3]`).
    let context: String
    /// The format in errors (`onnx`).
    let format: String
    /// How deeply this message is nested in the file (bounded, against stack exhaustion).
    let depth: Int
    /// The next byte to read.
    private(set) var position = 0

    /// The deepest nesting of messages the reader accepts (ONNX graphs nest in attributes).
    static let maximumDepth = 64

    init(bytes: UnsafeRawBufferPointer, fileOffset: Int = 0, context: String, format: String, depth: Int = 0) {
        self.bytes = bytes
        self.fileOffset = fileOffset
        self.context = context
        self.format = format
        self.depth = depth
    }

    /// Whether every byte of the message has been read.
    var isAtEnd: Bool { position >= bytes.count }

    /// An error about this message.
    func error(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
        FileFormatError(kind, format: format, message: "\(context): \(message)")
    }

    /// A malformed-header error about this message.
    func error(_ message: String) -> FileFormatError { error(.badHeader, message) }

    /// An error about one field of this message.
    func error(field: String, _ message: String) -> FileFormatError {
        FileFormatError(.badHeader, format: format, message: "\(context).\(field): \(message)")
    }

    /// Reads the next field's key, or returns `nil` at the end of the message.
    mutating func nextField() throws(FileFormatError) -> FieldKey? {
        guard !isAtEnd else { return nil }
        let key = try varint(field: "key")
        guard let wireType = WireType(rawValue: UInt8(key & 7)) else {
            throw self.error("field key \(key) has the unknown wire type \(key & 7) at byte \(fileOffset + position)")
        }
        let number = key >> 3
        guard number > 0, number <= 0x1FFF_FFFF else {
            throw self.error("field number \(number) at byte \(fileOffset + position) is not a valid field number")
        }
        return FieldKey(number: Int(number), wireType: wireType)
    }

    /// Reads a base-128 varint (at most ten bytes).
    mutating func varint(field: String) throws(FileFormatError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard position < bytes.count else { throw self.error(.truncated, "\(field): the varint runs past the end") }
            let byte = bytes[position]
            position += 1
            guard shift < 64, shift < 63 || byte <= 1 else {
                throw self.error(field: field, "the varint is longer than 64 bits")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// Reads `count` bytes and returns them (they stay in the file's memory).
    private mutating func take(_ count: Int, field: String) throws(FileFormatError) -> UnsafeRawBufferPointer {
        guard count >= 0, count <= bytes.count - position else {
            throw self.error(
                .truncated,
                "\(field): \(count) bytes announced at byte \(fileOffset + position), \(bytes.count - position) left")
        }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
        position += count
        return slice
    }

    /// Checks that a field has the wire type its schema gives it.
    func expect(_ key: FieldKey, _ wireType: WireType, field: String) throws(FileFormatError) {
        guard key.wireType == wireType else {
            throw self.error(field: field, "has wire type \(key.wireType.rawValue), expected \(wireType.rawValue)")
        }
    }

    /// A signed 64-bit integer field (`int64`, `int32` and enums: two's complement varints).
    mutating func int64(_ key: FieldKey, field: String) throws(FileFormatError) -> Int64 {
        try expect(key, .varint, field: field)
        return Int64(bitPattern: try varint(field: field))
    }

    /// A 32-bit integer field; values outside `Int32` are an error.
    mutating func int32(_ key: FieldKey, field: String) throws(FileFormatError) -> Int32 {
        let value = try int64(key, field: field)
        guard let narrowed = Int32(exactly: value) else {
            throw self.error(field: field, "\(value) does not fit 32 bits")
        }
        return narrowed
    }

    /// A `float` field (fixed32).
    mutating func float(_ key: FieldKey, field: String) throws(FileFormatError) -> Float {
        try expect(key, .fixed32, field: field)
        return Float(bitPattern: try fixed32(field: field))
    }

    private mutating func fixed32(field: String) throws(FileFormatError) -> UInt32 {
        let raw = try take(4, field: field)
        return raw.loadUnaligned(as: UInt32.self).littleEndian
    }

    private mutating func fixed64(field: String) throws(FileFormatError) -> UInt64 {
        let raw = try take(8, field: field)
        return raw.loadUnaligned(as: UInt64.self).littleEndian
    }

    /// A length-delimited field's bytes, and where they start in the file.
    mutating func lengthDelimited(_ key: FieldKey, field: String) throws(FileFormatError) -> (
        UnsafeRawBufferPointer, Int
    ) {
        try expect(key, .lengthDelimited, field: field)
        let length = try varint(field: field)
        guard length <= UInt64(Int.max) else { throw self.error(field: field, "length \(length) is too large") }
        let start = fileOffset + position
        return (try take(Int(length), field: field), start)
    }

    /// A `string` field (invalid UTF-8 is replaced, as protobuf runtimes do when reading leniently).
    mutating func string(_ key: FieldKey, field: String) throws(FileFormatError) -> String {
        let (raw, _) = try lengthDelimited(key, field: field)
        return String(decoding: raw, as: UTF8.self)
    }

    /// An embedded message, decoded by `decode` with a reader of its own.
    mutating func message<T>(
        _ key: FieldKey, field: String, _ decode: (inout ProtobufReader) throws(FileFormatError) -> T
    ) throws(FileFormatError) -> T {
        let (raw, start) = try lengthDelimited(key, field: field)
        guard depth < Self.maximumDepth else {
            throw self.error(field: field, "messages nest deeper than \(Self.maximumDepth)")
        }
        var inner = ProtobufReader(
            bytes: raw, fileOffset: start, context: "\(context).\(field)", format: format, depth: depth + 1)
        return try decode(&inner)
    }

    /// Appends a repeated integer field's values, packed or one per key.
    mutating func appendInt64s(_ key: FieldKey, field: String, to values: inout [Int64]) throws(FileFormatError) {
        if key.wireType == .varint {
            values.append(try int64(key, field: field))
            return
        }
        let (raw, start) = try lengthDelimited(key, field: field)
        var inner = ProtobufReader(bytes: raw, fileOffset: start, context: context, format: format, depth: depth)
        while !inner.isAtEnd { values.append(Int64(bitPattern: try inner.varint(field: field))) }
    }

    /// Appends a repeated 32-bit integer field's values (each must fit `Int32`).
    mutating func appendInt32s(_ key: FieldKey, field: String, to values: inout [Int32]) throws(FileFormatError) {
        var wide: [Int64] = []
        try appendInt64s(key, field: field, to: &wide)
        for value in wide {
            guard let narrowed = Int32(exactly: value) else {
                throw self.error(field: field, "\(value) does not fit 32 bits")
            }
            values.append(narrowed)
        }
    }

    /// Appends a repeated unsigned 64-bit field's values.
    mutating func appendUInt64s(_ key: FieldKey, field: String, to values: inout [UInt64]) throws(FileFormatError) {
        var signed: [Int64] = []
        try appendInt64s(key, field: field, to: &signed)
        values.append(contentsOf: signed.map { UInt64(bitPattern: $0) })
    }

    /// Appends a repeated `float` field's values, packed or one per key.
    mutating func appendFloats(_ key: FieldKey, field: String, to values: inout [Float]) throws(FileFormatError) {
        if key.wireType == .fixed32 {
            values.append(try float(key, field: field))
            return
        }
        let (raw, _) = try lengthDelimited(key, field: field)
        guard raw.count % 4 == 0 else {
            throw self.error(field: field, "packed floats take \(raw.count) bytes, not a multiple of 4")
        }
        values.reserveCapacity(values.count + raw.count / 4)
        for index in 0..<(raw.count / 4) {
            values.append(Float(bitPattern: raw.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self).littleEndian))
        }
    }

    /// Appends a repeated `double` field's values, packed or one per key.
    mutating func appendDoubles(_ key: FieldKey, field: String, to values: inout [Double]) throws(FileFormatError) {
        if key.wireType == .fixed64 {
            values.append(Double(bitPattern: try fixed64(field: field)))
            return
        }
        let (raw, _) = try lengthDelimited(key, field: field)
        guard raw.count % 8 == 0 else {
            throw self.error(field: field, "packed doubles take \(raw.count) bytes, not a multiple of 8")
        }
        values.reserveCapacity(values.count + raw.count / 8)
        for index in 0..<(raw.count / 8) {
            values.append(
                Double(bitPattern: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self).littleEndian))
        }
    }

    /// Reads the message to its end, calling `read` for each occurrence of field `number` and
    /// skipping every other field (messages that wrap one field, or repeat one).
    mutating func forEachField(
        _ number: Int, _ read: (inout ProtobufReader, FieldKey) throws(FileFormatError) -> Void
    ) throws(FileFormatError) {
        while let key = try nextField() {
            if key.number == number { try read(&self, key) } else { try skip(key) }
        }
    }

    /// Skips a field this decoder does not know.
    mutating func skip(_ key: FieldKey) throws(FileFormatError) {
        let field = "field \(key.number)"
        switch key.wireType {
        case .varint: _ = try varint(field: field)
        case .fixed64: _ = try take(8, field: field)
        case .fixed32: _ = try take(4, field: field)
        case .lengthDelimited: _ = try lengthDelimited(key, field: field)
        case .startGroup, .endGroup:
            throw self.error(field: field, "uses the deprecated group encoding, which neither ONNX nor Core ML writes")
        }
    }
}
