/// The header of a NumPy `.npy` file: element type, order and shape, and where the data start.
///
/// Format: the magic `\x93NUMPY`, a major and minor version byte, a little-endian header length
/// (2 bytes in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dictionary literal such as
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and a newline.
package struct NPYHeader: Sendable, Hashable {
    static let magic: [UInt8] = [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]
    /// The largest header this reader accepts (NumPy's own limit is 10 000 bytes by default).
    static let maximumHeaderLength = 1 << 20

    package var scalarType: ScalarType
    package var shape: [Int]
    /// The byte offset of the first element.
    var dataOffset: Int
    /// The byte size of the data, checked against overflow.
    var dataByteCount: Int
    /// Parses the header at the start of `bytes`.
    init(parsing bytes: UnsafeRawBufferPointer) throws(FileFormatError) {
        func fail(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
            FileFormatError(kind, format: "npy", message: message)
        }
        guard bytes.count >= 10 else { throw fail(.truncated, "the file has \(bytes.count) bytes, fewer than the 10 of the smallest header") }
        guard Array(bytes[0..<6]) == NPYHeader.magic else { throw fail(.badMagic, "the file does not start with \\x93NUMPY") }
        let major = bytes[6]
        let lengthStart = 8
        let headerLength: Int
        switch major {
        case 1:
            headerLength = Int(bytes[8]) | Int(bytes[9]) << 8
        case 2, 3:
            guard bytes.count >= 12 else { throw fail(.truncated, "the file ends inside the header length") }
            headerLength = (0..<4).reduce(0) { $0 | Int(bytes[lengthStart + $1]) << (8 * $1) }
        default:
            throw fail(.unsupportedVersion, "format version \(major).\(bytes[7]) is not 1.0, 2.0 or 3.0")
        }
        let headerStart = major == 1 ? 10 : 12
        guard headerLength <= NPYHeader.maximumHeaderLength else {
            throw fail(.badHeader, "the header claims \(headerLength) bytes, more than the \(NPYHeader.maximumHeaderLength) accepted")
        }
        guard headerStart + headerLength <= bytes.count else {
            throw fail(.truncated, "the header claims \(headerLength) bytes but the file has \(bytes.count - headerStart) after its start")
        }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[headerStart..<(headerStart + headerLength)])
        // Version 3.0 headers are UTF-8; 1.0 and 2.0 are Latin-1, which for the keys and values
        // accepted here is plain ASCII.
        let text = String(decoding: raw, as: UTF8.self)
        var parser = PythonLiteralParser(text)
        let dictionary: [String: PythonLiteral]
        do throws(PythonLiteralParser.Failure) {
            guard case .dictionary(let parsed) = try parser.parseValue() else { throw .init(message: "the header is not a dictionary") }
            dictionary = parsed
        } catch {
            throw fail(.badHeader, "cannot parse the header \(text.debugDescription): \(error.message)")
        }
        guard case .string(let descr)? = dictionary["descr"] else {
            if case .list? = dictionary["descr"] { throw fail(.unsupportedDType, "structured arrays are not supported") }
            throw fail(.badHeader, "the header has no 'descr' string")
        }
        guard case .bool(let fortran)? = dictionary["fortran_order"] else { throw fail(.badHeader, "the header has no 'fortran_order' boolean") }
        guard case .tuple(let dimensions)? = dictionary["shape"] else { throw fail(.badHeader, "the header has no 'shape' tuple") }
        scalarType = try NPYHeader.scalarType(descr)
        let elementBytes = scalarType.byteCount
        var shape: [Int] = []
        for dimension in dimensions {
            guard case .integer(let extent) = dimension, extent >= 0 else {
                throw fail(.invalidShape, "the shape \(dimensions) holds something other than non-negative integers")
            }
            shape.append(extent)
        }
        // A one-dimensional or empty array reads the same in both orders; NumPy writes such arrays
        // with 'fortran_order': False anyway, but accept the harmless case.
        guard !fortran || shape.filter({ $0 > 1 }).count <= 1 else {
            throw fail(.fortranOrder, "Fortran-order (column-major) arrays are not supported; save with np.ascontiguousarray")
        }
        guard let count = Shape.elementCount(shape), case let (size, overflow) = count.multipliedReportingOverflow(by: elementBytes), !overflow else {
            throw fail(.invalidShape, "the shape \(describe(shape)) is too large to represent")
        }
        self.shape = shape
        self.dataOffset = headerStart + headerLength
        self.dataByteCount = size
    }

    /// The engine's type for a NumPy type string, or the reason it is not accepted.
    package static func scalarType(_ descr: String) throws(FileFormatError) -> ScalarType {
        func fail(_ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
            FileFormatError(kind, format: "npy", message: message)
        }
        guard let order = descr.first, descr.count >= 2 else { throw fail(.unsupportedDType, "element type '\(descr)' is not understood") }
        let code = String(descr.dropFirst())
        if code.hasPrefix("O") { throw fail(.objectArray, "arrays of Python objects (descr '\(descr)') are not supported") }
        let type: ScalarType? = switch code {
        case "f4": .float32
        case "f2": .float16
        case "i4": .int32
        case "b1": .bool
        case "i8": .int64
        case "f8": .float64
        default: nil
        }
        guard let type else {
            throw fail(
                .unsupportedDType,
                "element type '\(descr)' is not supported; use float32, float16, float64, int32, int64 or bool")
        }
        switch order {
        case "<", "|": return type
        case "=": return type  // native order: every platform this engine runs on is little-endian
        case ">":
            if type.byteCount == 1 { return type }
            throw fail(.bigEndian, "big-endian data (descr '\(descr)') is not supported; save with arr.astype('<\(code)')")
        default:
            throw fail(.unsupportedDType, "element type '\(descr)' has an unknown byte-order mark")
        }
    }

    /// The NumPy type string for a scalar type.
    static func descr(_ type: ScalarType) -> String {
        switch type {
        case .float32: "<f4"
        case .float16: "<f2"
        case .int32: "<i4"
        case .bool: "|b1"
        case .int64: "<i8"
        case .float64: "<f8"
        }
    }
}
