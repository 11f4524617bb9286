import Foundation

/// Reading and writing NumPy `.npy` files (format versions 1.0, 2.0 and 3.0; C order;
/// little-endian `float32`, `float16`, `float64`, `int32`, `int64` and `bool`).
package enum NPY {
    /// The header of `bytes` and the slice holding exactly its data, after checking the data's
    /// length against the file's (before anything is allocated) and, for `bool`, every byte.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer
    ) throws(FileFormatError) -> (NPYHeader, UnsafeRawBufferPointer) {
        let header = try NPYHeader(parsing: bytes)
        let available = bytes.count - header.dataOffset
        guard available >= header.dataByteCount else {
            throw FileFormatError(.truncated, format: "npy", message: "shape \(describe(header.shape)) of \(header.scalarType) needs \(header.dataByteCount) bytes of data but the file has \(available)")
        }
        guard available == header.dataByteCount else {
            throw FileFormatError(.trailingData, format: "npy", message: "\(available - header.dataByteCount) bytes follow the \(header.dataByteCount) bytes of data")
        }
        let data = UnsafeRawBufferPointer(rebasing: bytes[header.dataOffset...])
        if header.scalarType == .bool, let bad = data.firstIndex(where: { $0 > 1 }) {
            throw FileFormatError(.invalidValue, format: "npy", message: "boolean element \(bad) is \(data[bad]), not 0 or 1")
        }
        return (header, data)
    }

    /// The bytes of a `.npy` file (version 1.0, or 2.0 when the header needs it) holding `data`.
    package static func encode(shape: [Int], type: ScalarType, data: UnsafeRawBufferPointer) -> Data {
        let dimensions = shape.map(String.init).joined(separator: ", ") + (shape.count == 1 ? "," : "")
        var text = "{'descr': '\(NPYHeader.descr(type))', 'fortran_order': False, 'shape': (\(dimensions)), }"
        // Version 1.0 stores the header length in 2 bytes; pad so the data start 64-byte aligned.
        let version: UInt8 = text.utf8.count + 1 + 10 + 64 <= 65_535 ? 1 : 2
        let preamble = version == 1 ? 10 : 12
        let padding = (64 - (preamble + text.utf8.count + 1) % 64) % 64
        text += String(repeating: " ", count: padding) + "\n"
        let length = text.utf8.count
        var file = Data(NPYHeader.magic + [version, 0])
        let lengthBytes = version == 1 ? 2 : 4
        file.append(contentsOf: (0..<lengthBytes).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) })
        file.append(contentsOf: Array(text.utf8))
        file.append(contentsOf: data)
        return file
    }

    /// Writes `bytes` to `url` atomically.
    static func write(_ bytes: Data, to url: URL) throws(FileFormatError) {
        do { try bytes.write(to: url, options: .atomic) } catch {
            throw FileFormatError(.unreadable, format: "npy", path: url.path, message: "cannot write the file: \(error.localizedDescription)")
        }
    }
}

extension ShapedArray {
    /// Reads an array from the bytes of a `.npy` file.
    ///
    /// Throws a ``FileFormatError``: ``FileFormatError/Kind/unsupportedDType`` when the file's
    /// element type is not `Scalar`'s, and the other kinds for malformed or unsupported files.
    ///
    /// ```swift
    /// let weights = try ShapedArray<Float>(npyData: Data(contentsOf: url))
    /// ```
    public init(npyData: Data) throws(FileFormatError) {
        let result: Result<ShapedArray, FileFormatError> = npyData.withUnsafeBytes { bytes in
            Result { () throws(FileFormatError) in try ShapedArray(npyBytes: bytes) }
        }
        self = try result.get()
    }

    /// Reads an array from a `.npy` file.
    public init(npyFile url: URL) throws(FileFormatError) {
        let file = try MappedFile(url: url, format: "npy")
        do { self = try ShapedArray(npyBytes: file.bytes) } catch { throw error.at(url.path) }
    }

    init(npyBytes bytes: UnsafeRawBufferPointer) throws(FileFormatError) {
        let (header, data) = try NPY.decode(bytes)
        guard header.scalarType == Scalar.scalarType else {
            throw FileFormatError(.unsupportedDType, format: "npy", message: "the file holds \(header.scalarType), not \(Scalar.scalarType)")
        }
        let count = data.count / Swift.max(Scalar.scalarType.byteCount, 1)
        self.init(unsafeUninitializedShape: header.shape) { buffer, _ in
            if let source = data.baseAddress, let target = buffer.baseAddress, count == buffer.count {
                UnsafeMutableRawPointer(target).copyMemory(from: source, byteCount: data.count)
            }
        }
    }

    /// The bytes of a `.npy` file (version 1.0; 2.0 for very high ranks) holding the array.
    public var npyData: Data {
        withUnsafeShapedBufferPointer { scalars, shape, _ in
            NPY.encode(shape: shape, type: Scalar.scalarType, data: UnsafeRawBufferPointer(scalars))
        }
    }

    /// Writes the array to a `.npy` file, replacing it atomically.
    public func write(npy url: URL) throws(FileFormatError) {
        try NPY.write(npyData, to: url)
    }
}

extension Tensor {
    /// Reads a tensor from a `.npy` file, whatever its supported element type.
    ///
    /// The file is memory-mapped; its data (64-byte aligned in files NumPy writes) are wrapped
    /// without copying when aligned to the element size, and copied once otherwise.
    ///
    /// ```swift
    /// let x = try Tensor(npyFile: URL(fileURLWithPath: "x.npy"))
    /// ```
    public init(npyFile url: URL) throws(FileFormatError) {
        let file = try MappedFile(url: url, format: "npy")
        do { self = try Tensor(npyBytes: file.bytes, owner: file) } catch { throw error.at(url.path) }
    }

    /// Reads a tensor from the bytes of a `.npy` file (copied once).
    public init(npyData: Data) throws(FileFormatError) {
        let result: Result<Tensor, FileFormatError> = npyData.withUnsafeBytes { bytes in
            Result { () throws(FileFormatError) in try Tensor(npyBytes: bytes, owner: nil) }
        }
        self = try result.get()
    }

    init(npyBytes bytes: UnsafeRawBufferPointer, owner: (any AnyObject & Sendable)?) throws(FileFormatError) {
        let (header, data) = try NPY.decode(bytes)
        do {
            self = try Tensor.constant(bytes: data, shape: header.shape, type: header.scalarType, owner: owner, op: "npy")
        } catch {
            throw FileFormatError(.invalidShape, format: "npy", message: error.message)
        }
    }

    /// Evaluates the tensor and returns the bytes of a `.npy` file holding it.
    public func npyData() async throws(TensorError) -> Data {
        switch dtype {
        case .float32: try await shapedArray(of: Float.self).npyData
        case .float16: try await shapedArray(of: Float16.self).npyData
        case .int32: try await shapedArray(of: Int32.self).npyData
        case .bool: try await shapedArray(of: Bool.self).npyData
        case .int64: try await shapedArray(of: Int64.self).npyData
        case .float64: try await shapedArray(of: Double.self).npyData
        }
    }

    /// Evaluates the tensor and writes it to a `.npy` file, replacing it atomically.
    ///
    /// Throws the tensor's ``TensorError`` or a ``FileFormatError`` when the file cannot be written.
    public func write(npy url: URL) async throws {
        try NPY.write(try await npyData(), to: url)
    }
}
