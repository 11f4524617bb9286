import Foundation

/// A safetensors file, memory-mapped, with its header validated when opened.
///
/// Tensors are loaded on request. `F32`, `F16`, `I32` and `BOOL` data aligned to their element size
/// in the mapping (as the format's writers lay them out) are wrapped without copying, the tensor
/// keeping the mapping alive; others are copied once. `BF16` is widened to `Float`.
///
/// ```swift
/// let file = try SafetensorsFile(url: folder.appending(path: "model.safetensors"))
/// let embeddings = try file.tensor(named: "embeddings.word_embeddings.weight")
/// ```
public final class SafetensorsFile: Sendable {
    private let file: MappedFile
    private let header: SafetensorsHeader

    /// Opens and maps the file and validates its header.
    ///
    /// Throws a ``FileFormatError`` for a file that cannot be read, is truncated, has a header
    /// length larger than the file, bad JSON, unknown types, shapes that overflow, or data offsets
    /// out of range, inconsistent with the shape or overlapping.
    public init(url: URL) throws(FileFormatError) {
        file = try MappedFile(url: url, format: "safetensors")
        do { header = try SafetensorsHeader(parsing: file.bytes) } catch { throw error.at(url.path) }
    }

    /// The names of the tensors in the file, sorted.
    public var tensorNames: [String] { header.entries.keys.sorted() }

    /// The string metadata of the file (`__metadata__`).
    public var metadata: [String: String] { header.metadata }

    /// The header entry of a tensor, or `nil` if the file has none of that name.
    public func entry(named name: String) -> SafetensorsEntry? { header.entries[name] }

    /// Loads a tensor, or throws ``FileFormatError/Kind/missingEntry`` or
    /// ``FileFormatError/Kind/unsupportedDType``.
    public func tensor(named name: String) throws(FileFormatError) -> Tensor {
        guard let entry = header.entries[name] else {
            throw FileFormatError(.missingEntry, format: "safetensors", path: file.path, message: "no tensor named '\(name)'")
        }
        let start = header.dataOffset + entry.byteRange.lowerBound
        let bytes = UnsafeRawBufferPointer(rebasing: file.bytes[start..<(start + entry.byteRange.count)])
        func failure(_ error: TensorError) -> FileFormatError {
            FileFormatError(.invalidShape, format: "safetensors", path: file.path, message: "tensor '\(name)': \(error.message)")
        }
        guard let type = entry.dtype.loadedType else {
            throw FileFormatError(.unsupportedDType, format: "safetensors", path: file.path, message: "tensor '\(name)' has dtype \(entry.dtype.rawValue), which cannot be loaded (F32, F16, BF16, I32 and BOOL can)")
        }
        switch entry.dtype {
        case .BF16:
            do { return try widenedBFloat16(bytes, shape: entry.shape) } catch { throw failure(error) }
        case .BOOL:
            if let bad = bytes.firstIndex(where: { $0 > 1 }) {
                throw FileFormatError(.invalidValue, format: "safetensors", path: file.path, message: "tensor '\(name)': boolean element \(bad) is \(bytes[bad]), not 0 or 1")
            }
            fallthrough
        case .F32, .F16, .I32, .F64, .I64, .I16, .I8, .U8:
            do { return try Tensor.constant(bytes: bytes, shape: entry.shape, type: type, owner: file, op: "safetensors") } catch { throw failure(error) }
        }
    }

    /// Loads every tensor whose type can be loaded, by name.
    public func tensors() throws(FileFormatError) -> [String: Tensor] {
        var result: [String: Tensor] = [:]
        for (name, entry) in header.entries where entry.dtype.loadedType != nil {
            result[name] = try tensor(named: name)
        }
        return result
    }

    /// A `Float` tensor from bfloat16 bytes: each value is the upper half of a `Float`'s bits.
    private func widenedBFloat16(_ bytes: UnsafeRawBufferPointer, shape: [Int]) throws(TensorError) -> Tensor {
        let count = bytes.count / 2
        let buffer = try HostBuffer(byteCount: count * 4, op: "safetensors")
        let target = buffer.elements(as: UInt32.self)
        for index in 0..<count {
            let half = UInt32(bytes[2 * index]) | UInt32(bytes[2 * index + 1]) << 8
            target[index] = half << 16
        }
        return Tensor.constant(value: Value(buffer: buffer, layout: Layout(contiguous: shape), scalarType: .float32), op: "safetensors")
    }
}
