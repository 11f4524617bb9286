import Foundation

/// Rewrites an ONNX file at the wire level so that its large initializers' bytes move to one
/// weights file at 64-byte-aligned offsets (ONNX's external data), every other byte kept as it is.
///
/// Only `ModelProto.graph` (field 7) and, in it, `GraphProto.initializer` (field 5) are re-encoded;
/// in each initializer `raw_data` (field 9), or the external data it already points to, becomes
/// `external_data` entries (field 13) with `data_location = EXTERNAL` (field 14). Tensors under
/// 64 bytes, and tensors held in typed fields (`float_data`, ...), stay inline.
struct ONNXWeightRelayout {
    let source: UnsafeRawBufferPointer
    /// The folder the source's own external data are relative to.
    let directory: URL
    /// The weights file's name, relative to the rewritten model.
    let weightsName: String

    /// The smallest tensor moved out of the graph.
    static let minimumExternalBytes = 64
    /// The alignment of each tensor in the weights file.
    static let alignment = 64

    /// The rewritten model; the moved bytes are appended to `weights`.
    func model(appendingWeightsTo weights: inout Data) throws(FileFormatError) -> Data {
        try ONNXWeightRelayout.rewriting(source, context: "ModelProto", depth: 0, field: 7) {
            (graph: UnsafeRawBufferPointer) throws(FileFormatError) -> Data in
            try ONNXWeightRelayout.rewriting(graph, context: "ModelProto.graph", depth: 1, field: 5) {
                (tensor: UnsafeRawBufferPointer) throws(FileFormatError) -> Data in
                try initializer(tensor, weights: &weights)
            }
        }
    }

    /// A message's bytes with each length-delimited field `number` replaced by what `transform`
    /// makes of its value, every other field copied as it is.
    private static func rewriting(
        _ bytes: UnsafeRawBufferPointer, context: String, depth: Int, field number: Int,
        _ transform: (UnsafeRawBufferPointer) throws(FileFormatError) -> Data
    ) throws(FileFormatError) -> Data {
        var output = Data()
        var reader = ProtobufReader(bytes: bytes, context: context, format: "onnx", depth: depth)
        while true {
            let start = reader.position
            guard let key = try reader.nextField() else { break }
            if key.number == number, key.wireType == .lengthDelimited {
                let (value, _) = try reader.lengthDelimited(key, field: "field \(number)")
                appendField(number, bytes: try transform(value), to: &output)
            } else {
                try reader.skip(key)
                output.append(contentsOf: bytes[start..<reader.position])
            }
        }
        return output
    }

    /// One initializer, with its data moved to `weights` when it is large enough.
    private func initializer(_ bytes: UnsafeRawBufferPointer, weights: inout Data) throws(FileFormatError) -> Data {
        var kept = Data()
        var data: UnsafeRawBufferPointer?
        var external: [String: String] = [:]
        var isExternal = false
        var reader = ProtobufReader(bytes: bytes, context: "GraphProto.initializer", format: "onnx", depth: 2)
        while true {
            let start = reader.position
            guard let key = try reader.nextField() else { break }
            switch (key.number, key.wireType) {
            case (9, .lengthDelimited): data = try reader.lengthDelimited(key, field: "raw_data").0
            case (13, .lengthDelimited):
                let entry = try reader.message(key, field: "external_data") {
                    (inner: inout ProtobufReader) throws(FileFormatError) in
                    var pair = ("", "")
                    while let field = try inner.nextField() {
                        switch field.number {
                        case 1: pair.0 = try inner.string(field, field: "key")
                        case 2: pair.1 = try inner.string(field, field: "value")
                        default: try inner.skip(field)
                        }
                    }
                    return pair
                }
                external[entry.0] = entry.1
            case (14, .varint): isExternal = try reader.varint(field: "data_location") == 1
            default:
                try reader.skip(key)
                kept.append(contentsOf: bytes[start..<reader.position])
            }
        }
        var moved: Data?
        if isExternal {
            moved = try externalBytes(external)
        } else if let data, data.count >= ONNXWeightRelayout.minimumExternalBytes {
            moved = Data(data)
        }
        guard let moved else {
            // Small or typed: the tensor stays as it was.
            return Data(bytes)
        }
        let padding =
            (ONNXWeightRelayout.alignment - weights.count % ONNXWeightRelayout.alignment) % ONNXWeightRelayout.alignment
        weights.append(Data(count: padding))
        let offset = weights.count
        weights.append(moved)
        for (entryKey, value) in [("location", weightsName), ("offset", "\(offset)"), ("length", "\(moved.count)")] {
            var entry = Data()
            ONNXWeightRelayout.appendField(1, bytes: Data(entryKey.utf8), to: &entry)
            ONNXWeightRelayout.appendField(2, bytes: Data(value.utf8), to: &entry)
            ONNXWeightRelayout.appendField(13, bytes: entry, to: &kept)
        }
        ONNXWeightRelayout.appendVarint(UInt64(14 << 3), to: &kept)
        ONNXWeightRelayout.appendVarint(1, to: &kept)
        return kept
    }

    /// The bytes an initializer's own external data point to, relative to the source's folder.
    private func externalBytes(_ entries: [String: String]) throws(FileFormatError) -> Data {
        guard let location = entries["location"], !location.isEmpty, !location.hasPrefix("/"),
            !location.split(separator: "/").contains("..")
        else {
            throw FileFormatError(.invalidOffsets, format: "onnx", message: "external data without a usable location")
        }
        let file = try MappedFile(url: directory.appendingPathComponent(location), format: "onnx")
        let offset = Int(entries["offset"] ?? "0") ?? -1
        let length = entries["length"].map { Int($0) ?? -1 } ?? (file.byteCount - Swift.max(offset, 0))
        guard offset >= 0, length >= 0, offset <= file.byteCount, length <= file.byteCount - offset else {
            throw FileFormatError(
                .invalidOffsets, format: "onnx",
                message: "external data \(location) at \(offset)+\(length) is out of range")
        }
        return Data(file.bytes[offset..<offset + length])
    }

    static func appendVarint(_ value: UInt64, to data: inout Data) {
        var rest = value
        repeat {
            let byte = UInt8(rest & 0x7f)
            rest >>= 7
            data.append(rest == 0 ? byte : byte | 0x80)
        } while rest != 0
    }

    /// A length-delimited field: key, length, bytes.
    static func appendField(_ number: Int, bytes: some DataProtocol, to data: inout Data) {
        appendVarint(UInt64(number << 3 | 2), to: &data)
        appendVarint(UInt64(bytes.count), to: &data)
        data.append(contentsOf: bytes)
    }
}
