/// The error a file reader throws for a file it cannot read or does not accept.
///
/// Every malformed input (a truncated file, a header that lies about sizes, overlapping data,
/// unsupported element types, bad JSON, ...) becomes one of these, never a crash or an unbounded
/// allocation. The description reads `safetensors (model.safetensors): tensor 'w' ends at byte 96
/// past the 64 bytes of data`.
public struct FileFormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in categories a caller can switch over.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The file could not be opened, read, mapped or written.
        case unreadable
        /// The file ends before the data its header announces.
        case truncated
        /// The file does not start with the format's signature.
        case badMagic
        /// The format version is not one this reader knows.
        case unsupportedVersion
        /// The header cannot be parsed or lacks a required field.
        case badHeader
        /// The header is not valid JSON (safetensors, `config.json`).
        case badJSON
        /// The element type is not supported (or is not the one asked for).
        case unsupportedDType
        /// The array is stored in Fortran (column-major) order.
        case fortranOrder
        /// The array holds Python objects.
        case objectArray
        /// The data is big-endian.
        case bigEndian
        /// A shape is negative or its size overflows or exceeds what can be held.
        case invalidShape
        /// A tensor's data offsets are out of range or do not match its shape and type.
        case invalidOffsets
        /// Two tensors' data overlap.
        case overlappingData
        /// Bytes follow the data the header announces.
        case trailingData
        /// A value in the data is invalid for its type (a boolean byte other than 0 or 1).
        case invalidValue
        /// A named entry (tensor, configuration key, vocabulary token) is missing.
        case missingEntry
    }

    /// The category of the error.
    public let kind: Kind
    /// The format being read: `npy`, `safetensors`, `config.json`, `vocab.txt`, ...
    public let format: String
    /// The file's path, when reading a file.
    public let path: String?
    /// A sentence describing the problem, with the offending values.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, format: String, path: String? = nil, message: String) {
        self.kind = kind
        self.format = format
        self.path = path
        self.message = message
    }

    /// `format (file): message`.
    public var description: String {
        if let path { return "\(format) (\(path.split(separator: "/").last.map(String.init) ?? path)): \(message)" }
        return "\(format): \(message)"
    }

    /// The same error naming a file, if it named none.
    func at(_ path: String) -> FileFormatError {
        self.path == nil ? FileFormatError(kind, format: format, path: path, message: message) : self
    }
}
