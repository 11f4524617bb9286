import Foundation

/// Rewrites an ONNX file at the wire level so that its large initializers' bytes move to one
/// weights file at 64-byte-aligned offsets (ONNX's external data), every other byte kept as it is.
///
/// Only `ModelProto.graph` (field 7) and, in it, `GraphProto.initializer` (field 5) are re-encoded;
/// in each initializer `raw_data` (field 9), or the external data it already points to, becomes
/// `external_data` entries (field 13) with `data_location = EXTERNAL` (field 14). Tensors under
/// 64 bytes, and tensors held in typed fields (`float_data`, ...), stay inline.
struct ONNXWeightRelayout {
    /// The model file and the folder its own external data are relative to: tensor data are read
    /// as the importer reads them.
    let source: ONNXDataSource
    /// The weights file's name, relative to the rewritten model.
    let weightsName: String

    /// The smallest tensor moved out of the graph.
    static let minimumExternalBytes = 64
    /// The alignment of each tensor in the weights file.
    static let alignment = 64

    /// The rewritten model; the moved bytes are appended to `weights`.
    func model(appendingWeightsTo weights: inout Data) throws(FileFormatError) -> Data {
        try ONNXWeightRelayout.rewriting(source.file.bytes, at: 0, context: "ModelProto", depth: 0, field: 7) {
            (graph: UnsafeRawBufferPointer, graphStart: Int) throws(FileFormatError) -> Data in
            try ONNXWeightRelayout.rewriting(graph, at: graphStart, context: "ModelProto.graph", depth: 1, field: 5) {
                (tensor: UnsafeRawBufferPointer, tensorStart: Int) throws(FileFormatError) -> Data in
                try initializer(tensor, at: tensorStart, weights: &weights)
            }
        }
    }

    /// A message's bytes (starting at file offset `start`) with each length-delimited field `number`
    /// replaced by what `transform` makes of its value and the value's file offset, every other
    /// field copied as it is.
    private static func rewriting(
        _ bytes: UnsafeRawBufferPointer, at start: Int, context: String, depth: Int, field number: Int,
        _ transform: (UnsafeRawBufferPointer, Int) throws(FileFormatError) -> Data
    ) throws(FileFormatError) -> Data {
        var output = Data()
        var reader = ProtobufReader(bytes: bytes, fileOffset: start, context: context, format: "onnx", depth: depth)
        while true {
            let start = reader.position
            guard let key = try reader.nextField() else { break }
            if key.number == number, key.wireType == .lengthDelimited {
                let (value, valueStart) = try reader.lengthDelimited(key, field: "field \(number)")
                appendField(number, bytes: try transform(value, valueStart), to: &output)
            } else {
                try reader.skip(key)
                output.append(contentsOf: bytes[start..<reader.position])
            }
        }
        return output
    }

    /// One initializer (starting at file offset `start`), with its data moved to `weights` when it
    /// is external data, or `raw_data` of at least ``minimumExternalBytes``.
    private func initializer(
        _ bytes: UnsafeRawBufferPointer, at start: Int, weights: inout Data
    ) throws(FileFormatError) -> Data {
        var decoder = ProtobufReader(bytes: bytes, fileOffset: start, context: "GraphProto.initializer", format: "onnx")
        let tensor = try ONNXTensorProto.decode(&decoder)
        // External data always moves: the compiled folder holds no other file to point to.
        guard let data = try tensor.storedBytes(in: source),
            data.count >= ONNXWeightRelayout.minimumExternalBytes || tensor.isExternal
        else {
            // Small or typed: the tensor stays as it was.
            return Data(bytes)
        }
        // Every field but the data's own (raw_data 9, external_data 13, data_location 14), as it is.
        var kept = Data()
        var reader = ProtobufReader(bytes: bytes, context: "GraphProto.initializer", format: "onnx", depth: 2)
        while true {
            let fieldStart = reader.position
            guard let key = try reader.nextField() else { break }
            try reader.skip(key)
            if ![9, 13, 14].contains(key.number) { kept.append(contentsOf: bytes[fieldStart..<reader.position]) }
        }
        let padding =
            (ONNXWeightRelayout.alignment - weights.count % ONNXWeightRelayout.alignment) % ONNXWeightRelayout.alignment
        weights.append(Data(count: padding))
        let offset = weights.count
        weights.append(contentsOf: data)
        for (entryKey, value) in [("location", weightsName), ("offset", "\(offset)"), ("length", "\(data.count)")] {
            var entry = Data()
            ONNXWeightRelayout.appendField(1, bytes: Data(entryKey.utf8), to: &entry)
            ONNXWeightRelayout.appendField(2, bytes: Data(value.utf8), to: &entry)
            ONNXWeightRelayout.appendField(13, bytes: entry, to: &kept)
        }
        ONNXWeightRelayout.appendVarint(UInt64(14 << 3), to: &kept)
        ONNXWeightRelayout.appendVarint(1, to: &kept)
        return kept
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
