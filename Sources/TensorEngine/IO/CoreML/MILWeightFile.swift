/// A Core ML weight file (`weights/weight.bin`, MIL's "blob storage" version 2), memory-mapped.
///
/// The file starts with a 64-byte header (`count`: UInt32, `version`: UInt32 = 2, reserved). Each
/// blob has 64 bytes of metadata — a sentinel `0xDEADBEEF` (UInt32), the element type (UInt32),
/// the data's size in bytes (UInt64), the data's offset in the file (UInt64), the padding bits at
/// the end of sub-byte data (UInt64), reserved — and its data, 64-byte aligned. A constant in the
/// program names the file and the offset of its blob's metadata.
///
/// Blobs are read in place: a constant wraps the mapped pages without a copy. Every offset and
/// size is checked against the file, and a mismatch is a ``FileFormatError``.
final class MILWeightFile: Sendable {
    let file: MappedFile

    /// The blob element types of the format, by their code in the metadata.
    enum BlobType: UInt32, Sendable {
        case float16 = 1
        case float32 = 2
        case uint8 = 3
        case int8 = 4
        case bfloat16 = 5
        case int16 = 6
        case uint16 = 7
        case int4 = 8
        case uint1 = 9
        case uint2 = 10
        case uint4 = 11
        case uint3 = 12
        case uint6 = 13
        case int32 = 14
        case uint32 = 15
        case float8E4M3FN = 16
        case float8E5M2 = 17

        /// The MIL element type a constant of this blob type declares.
        var milType: MILDataType {
            switch self {
            case .float16: .float16
            case .float32: .float32
            case .uint8: .uint8
            case .int8: .int8
            case .bfloat16: .bfloat16
            case .int16: .int16
            case .uint16: .uint16
            case .int4: .int4
            case .uint1: .uint1
            case .uint2: .uint2
            case .uint4: .uint4
            case .uint3: .uint3
            case .uint6: .uint6
            case .int32: .int32
            case .uint32: .uint32
            case .float8E4M3FN: MILDataType(rawValue: 40)
            case .float8E5M2: MILDataType(rawValue: 41)
            }
        }
    }

    /// One blob: its element type and its bytes in the mapping.
    struct Blob {
        /// The mapping the bytes live in (a tensor wrapping them keeps it alive).
        let owner: MappedFile
        let type: BlobType
        let bytes: UnsafeRawBufferPointer
        /// Unused bits at the end of sub-byte data.
        let paddingBits: Int
    }

    init(file: MappedFile) throws(FileFormatError) {
        self.file = file
        let bytes = file.bytes
        guard bytes.count >= 64 else {
            throw error(.truncated, "the file has \(bytes.count) bytes, fewer than its 64-byte header")
        }
        let version = bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian
        guard version == 2 else {
            throw error(.unsupportedVersion, "blob storage version \(version); the engine reads version 2")
        }
    }

    private func error(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
        FileFormatError(kind, format: "coreml weights", path: file.path, message: message)
    }

    /// The blob whose metadata starts at `offset`.
    func blob(at offset: UInt64) throws(FileFormatError) -> Blob {
        let bytes = file.bytes
        guard offset >= 64, offset <= UInt64(bytes.count), UInt64(bytes.count) - offset >= 64 else {
            throw error(.invalidOffsets, "a blob's metadata at byte \(offset) is outside the \(bytes.count)-byte file")
        }
        let start = Int(offset)
        func load<T: FixedWidthInteger>(_ position: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: start + position, as: T.self))
        }
        let sentinel = load(0, UInt32.self)
        guard sentinel == 0xDEAD_BEEF else {
            throw error(.badMagic, "no blob metadata at byte \(offset) (sentinel 0x\(String(sentinel, radix: 16)))")
        }
        let code = load(4, UInt32.self)
        guard let type = BlobType(rawValue: code) else {
            throw error(.unsupportedDType, "the blob at byte \(offset) has the unknown element type \(code)")
        }
        let size = load(8, UInt64.self)
        let dataOffset = load(16, UInt64.self)
        let padding = load(24, UInt64.self)
        guard dataOffset <= UInt64(bytes.count), size <= UInt64(bytes.count) - dataOffset else {
            throw error(
                .invalidOffsets,
                "the blob at byte \(offset) holds \(size) bytes at byte \(dataOffset), past the "
                    + "\(bytes.count)-byte file")
        }
        guard padding < 8 else {
            throw error(.invalidValue, "the blob at byte \(offset) pads \(padding) bits, more than a byte")
        }
        let data = UnsafeRawBufferPointer(rebasing: bytes[Int(dataOffset)..<(Int(dataOffset) + Int(size))])
        return Blob(owner: file, type: type, bytes: data, paddingBits: Int(padding))
    }
}
