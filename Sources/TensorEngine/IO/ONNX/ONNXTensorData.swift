import Foundation

/// Where a model's tensor data lie: the mapped model file, and the external-data files beside it
/// (mapped on first use and kept, so weights in them are wrapped without copying).
final class ONNXDataSource: @unchecked Sendable {
    /// The mapped file the `raw_data` ranges point into.
    let file: MappedFile
    /// The folder external-data locations are relative to.
    let directory: URL
    private let externalFiles = Guarded<[String: MappedFile]>([:])

    init(file: MappedFile, directory: URL) {
        self.file = file
        self.directory = directory
    }

    /// Maps a file holding tensor bytes in memory (a test's `input_0.pb`) as a source.
    convenience init(url: URL) throws(FileFormatError) {
        self.init(file: try MappedFile(url: url, format: "onnx"), directory: url.deletingLastPathComponent())
    }

    /// The bytes of a tensor's data, and the mapping that owns them.
    func bytes(of tensor: ONNXTensorProto, expected byteCount: Int) throws(FileFormatError) -> (
        UnsafeRawBufferPointer, MappedFile
    ) {
        if tensor.isExternal { return try externalBytes(of: tensor, expected: byteCount) }
        guard let range = tensor.rawData else { return (UnsafeRawBufferPointer(start: nil, count: 0), file) }
        guard range.lowerBound >= 0, range.upperBound <= file.bytes.count else {
            throw self.error(tensor, .invalidOffsets, "raw_data lies outside the file")
        }
        return (UnsafeRawBufferPointer(rebasing: file.bytes[range]), file)
    }

    private func externalBytes(
        of tensor: ONNXTensorProto, expected byteCount: Int
    ) throws(FileFormatError) -> (UnsafeRawBufferPointer, MappedFile) {
        guard let location = tensor.externalData["location"], !location.isEmpty else {
            throw self.error(tensor, .missingEntry, "external data without a location")
        }
        let parts = location.split(separator: "/")
        guard !location.hasPrefix("/"), !parts.contains(".."), !location.contains("\\") else {
            throw self.error(tensor, .invalidOffsets, "external data location '\(location)' leaves the model's folder")
        }
        func number(_ key: String) throws(FileFormatError) -> Int? {
            guard let text = tensor.externalData[key] else { return nil }
            guard let value = Int(text), value >= 0 else {
                throw self.error(tensor, .invalidOffsets, "external data \(key) '\(text)' is not a byte count")
            }
            return value
        }
        let offset = try number("offset") ?? 0
        let mapped: MappedFile
        if let known = externalFiles.withLock({ $0[location] }) {
            mapped = known
        } else {
            do {
                mapped = try MappedFile(url: directory.appendingPathComponent(location), format: "onnx")
            } catch {
                throw error.at(location)
            }
            externalFiles.withLock { $0[location] = mapped }
        }
        let length = try number("length") ?? (mapped.byteCount - Swift.min(offset, mapped.byteCount))
        guard length == byteCount else {
            throw self.error(
                tensor, .invalidOffsets, "external data holds \(length) bytes, its shape and type need \(byteCount)")
        }
        guard offset <= mapped.byteCount, length <= mapped.byteCount - offset else {
            throw self.error(
                tensor, .truncated,
                "external data of \(length) bytes at offset \(offset) runs past the \(mapped.byteCount) bytes of '\(location)'")
        }
        return (UnsafeRawBufferPointer(rebasing: mapped.bytes[offset..<(offset + length)]), mapped)
    }

    func error(_ tensor: ONNXTensorProto, _ kind: FileFormatError.Kind, _ message: String) -> FileFormatError {
        FileFormatError(kind, format: "onnx", path: file.path, message: "tensor '\(tensor.name)': \(message)")
    }
}

/// A model value the importer holds: known on the host, or a lazy engine tensor.
enum ONNXValue: Sendable {
    case constant(ONNXConstant)
    /// An engine tensor and the ONNX type it stands for (an `int64` value is held as `Int32`).
    case tensor(Tensor, ONNXDataType)

    var dataType: ONNXDataType {
        switch self {
        case .constant(let constant): constant.dataType
        case .tensor(_, let type): type
        }
    }

    var shape: [Int] {
        switch self {
        case .constant(let constant): constant.shape
        case .tensor(let tensor, _): tensor.shape
        }
    }
}

extension ONNXTensorProto {
    /// The tensor's shape, checked: every size fits `Int` and the element count does too.
    func checkedShape(_ source: ONNXDataSource?) throws(FileFormatError) -> ([Int], Int) {
        var count = 1
        var shape: [Int] = []
        for dim in dims {
            guard let size = Int(exactly: dim) else {
                throw invalid(source, .invalidShape, "dimension \(dim) is too large")
            }
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else { throw invalid(source, .invalidShape, "shape \(dims) has too many elements") }
            count = product
            shape.append(size)
        }
        return (shape, count)
    }

    private func invalid(_ source: ONNXDataSource?, _ kind: FileFormatError.Kind, _ message: String) -> FileFormatError
    {
        source?.error(self, kind, message)
            ?? FileFormatError(kind, format: "onnx", message: "tensor '\(name)': \(message)")
    }

    /// The tensor as an importer value: small ones (and every type the engine computes in a
    /// wider or narrower form) on the host; large float, float16, int32 and bool ones as engine
    /// tensors over the file's memory without a copy when aligned.
    func value(in source: ONNXDataSource) throws(FileFormatError) -> ONNXValue {
        let (shape, count) = try checkedShape(source)
        guard let engineType = dataType.engineType, let width = dataType.rawByteCount else {
            throw invalid(source, .unsupportedDType, "the engine cannot hold \(dataType) tensors")
        }
        let direct = engineType.byteCount == width && (tensorDataIsRaw || isExternal) && dataType != .double
        if direct && count > ONNXConstant.hostElementLimit && dataType != .bool {
            let (bytes, owner) = try source.bytes(of: self, expected: try byteCount(count, width, source))
            do {
                let tensor = try Tensor.constant(
                    bytes: bytes, shape: shape, type: engineType, owner: owner, op: "onnx initializer")
                return .tensor(tensor, dataType)
            } catch {
                throw invalid(source, .invalidValue, error.message)
            }
        }
        return .constant(try constant(source: source))
    }

    private var tensorDataIsRaw: Bool { rawData != nil }

    /// The bytes of a tensor stored as `raw_data` or external data, checked against its shape and
    /// type as the importer checks them; `nil` for a tensor held in the typed fields or of a type
    /// without a fixed width (strings).
    func storedBytes(in source: ONNXDataSource) throws(FileFormatError) -> UnsafeRawBufferPointer? {
        guard tensorDataIsRaw || isExternal, let width = dataType.rawByteCount else { return nil }
        let (_, count) = try checkedShape(source)
        return try source.bytes(of: self, expected: try byteCount(count, width, source)).0
    }

    private func byteCount(_ count: Int, _ width: Int, _ source: ONNXDataSource?) throws(FileFormatError) -> Int {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: width)
        guard !overflow else { throw invalid(source, .invalidShape, "shape \(dims) has too many bytes") }
        return bytes
    }

    /// The tensor's values on the host, from `raw_data`, external data or the typed fields.
    func constant(source: ONNXDataSource?) throws(FileFormatError) -> ONNXConstant {
        let (shape, count) = try checkedShape(source)
        guard dataType.engineType != nil, let width = dataType.rawByteCount else {
            throw invalid(source, .unsupportedDType, "the engine cannot hold \(dataType) tensors")
        }
        guard !isSegmented else { throw invalid(source, .badHeader, "segmented tensors are not supported") }
        if rawData != nil || isExternal {
            guard let source else { throw invalid(nil, .badHeader, "raw data without a file") }
            let expected = try byteCount(count, width, source)
            let (bytes, _) = try source.bytes(of: self, expected: expected)
            guard bytes.count == expected else {
                throw invalid(
                    source, .invalidOffsets,
                    "raw_data holds \(bytes.count) bytes, shape \(dims) of \(dataType) needs \(expected)")
            }
            return ONNXConstant(dataType: dataType, shape: shape, values: try decodeRaw(bytes, count: count, source))
        }
        return ONNXConstant(dataType: dataType, shape: shape, values: try decodeTyped(count: count, source))
    }

    private func decodeRaw(_ bytes: UnsafeRawBufferPointer, count: Int, _ source: ONNXDataSource?)
        throws(FileFormatError) -> ONNXConstant.Values
    {
        func load<T: FixedWidthInteger>(_: T.Type) -> [Int64] {
            (0..<count).map {
                Int64(T(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self)))
            }
        }
        switch dataType.rawValue {
        case 1:
            return .reals(
                (0..<count).map {
                    Double(
                        Float(
                            bitPattern: UInt32(
                                littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))))
                })
        case 10:
            return .reals(
                (0..<count).map {
                    Double(
                        Float(
                            Float16(
                                bitPattern: UInt16(
                                    littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)))))
                })
        case 16:
            return .reals(
                (0..<count).map {
                    Double(
                        Float(
                            bitPattern: UInt32(
                                UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 2, as: UInt16.self)))
                                << 16))
                })
        case 11:
            return .reals(
                (0..<count).map {
                    Double(
                        bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)))
                })
        case 9:
            var values: [Bool] = []
            values.reserveCapacity(count)
            for index in 0..<count {
                let byte = bytes[index]
                guard byte <= 1 else {
                    throw invalid(source, .invalidValue, "boolean byte \(byte) at element \(index)")
                }
                values.append(byte == 1)
            }
            return .booleans(values)
        case 2: return .integers(load(UInt8.self))
        case 3: return .integers(load(Int8.self))
        case 4: return .integers(load(UInt16.self))
        case 5: return .integers(load(Int16.self))
        case 6: return .integers(load(Int32.self))
        case 7: return .integers(load(Int64.self))
        case 12: return .integers(load(UInt32.self))
        case 13:
            return .integers(
                (0..<count).map {
                    Int64(
                        bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)))
                })
        default: throw invalid(source, .unsupportedDType, "the engine cannot hold \(dataType) tensors")
        }
    }

    private func decodeTyped(count: Int, _ source: ONNXDataSource?) throws(FileFormatError) -> ONNXConstant.Values {
        func checked<T>(_ values: [T], _ field: String) throws(FileFormatError) -> [T] {
            guard values.count == count else {
                throw invalid(
                    source, .invalidShape, "\(field) holds \(values.count) values, shape \(dims) needs \(count)")
            }
            return values
        }
        switch dataType.rawValue {
        case 1: return .reals(try checked(floatData, "float_data").map { Double($0) })
        case 11: return .reals(try checked(doubleData, "double_data"))
        case 10:
            return .reals(
                try checked(int32Data, "int32_data").map {
                    Double(Float(Float16(bitPattern: UInt16(truncatingIfNeeded: $0))))
                })
        case 16:
            return .reals(
                try checked(int32Data, "int32_data").map {
                    Double(Float(bitPattern: UInt32(UInt16(truncatingIfNeeded: $0)) << 16))
                })
        case 9: return .booleans(try checked(int32Data, "int32_data").map { $0 != 0 })
        case 2, 3, 4, 5, 6: return .integers(try checked(int32Data, "int32_data").map { dataType.wrap(Int64($0)) })
        case 7: return .integers(try checked(int64Data, "int64_data"))
        case 12, 13: return .integers(try checked(uint64Data, "uint64_data").map { Int64(bitPattern: $0) })
        default: throw invalid(source, .unsupportedDType, "the engine cannot hold \(dataType) tensors")
        }
    }
}
