import Foundation
import Testing

@testable import TensorEngine

/// The protobuf reader and the ONNX message decoders, on bytes built field by field.
@Suite("ONNX reader") struct ONNXReaderTests {
    private func decode(_ bytes: [UInt8]) throws -> ONNXModelProto {
        try bytes.withUnsafeBytes { raw in try ONNXModelProto.decode(raw) }
    }

    private func tensor(_ build: (inout ProtobufWriter) -> Void) throws -> ONNXConstant {
        var writer = ProtobufWriter()
        build(&writer)
        return try writer.bytes.withUnsafeBytes { raw in
            var reader = ProtobufReader(bytes: raw, context: "TensorProto", format: "onnx")
            return try ONNXTensorProto.decode(&reader).constant(source: nil)
        }
    }

    @Test func decodesAModelGraphNodesAndTypes() throws {
        let model = try decode(ONNXBytes.reluModel())
        #expect(model.irVersion == 8)
        #expect(model.producerName == "tests")
        #expect(model.opsetImports == [ONNXOperatorSet(domain: "", version: 17)])
        #expect(model.graph.nodes.map(\.opType) == ["MatMul", "Relu"])
        #expect(model.graph.nodes[0].inputs == ["x", "w"])
        #expect(model.graph.initializers.map(\.name) == ["w"])
        guard case .tensor(let type, let shape) = model.graph.inputs[0].type else {
            Issue.record("x is not a tensor")
            return
        }
        #expect(type == .float)
        #expect(shape == [.symbol("batch"), .value(2)])
    }

    @Test func readsTypedFieldsPackedAndUnpacked() throws {
        // int64_data packed, then the same values one key each: both forms are valid protobuf.
        let packed = try tensor { writer in
            writer.packedInts(1, [3])
            writer.int(2, 7)
            writer.packedInts(7, [-1, 5, Int64.max])
        }
        #expect(packed.integers == [-1, 5, Int64.max])
        let unpacked = try tensor { writer in
            writer.int(1, 3)
            writer.int(2, 7)
            for value: Int64 in [-1, 5, Int64.max] { writer.int(7, value) }
        }
        #expect(unpacked.integers == [-1, 5, Int64.max])
        let floats = try tensor { writer in
            writer.packedInts(1, [2])
            writer.int(2, 1)
            writer.float(4, 1.5)
            writer.float(4, -2)
        }
        #expect(floats.reals == [1.5, -2])
        let halves = try tensor { writer in
            writer.packedInts(1, [2])
            writer.int(2, 10)
            writer.packedInts(5, [0x3C00, 0xC000])  // float16 1.0 and -2.0 in int32_data
        }
        #expect(halves.reals == [1, -2])
    }

    @Test func skipsUnknownFieldsOfEveryWireType() throws {
        var writer = ProtobufWriter()
        writer.int(99, 12345)  // varint
        writer.key(98, 1)
        writer.raw([1, 2, 3, 4, 5, 6, 7, 8])  // fixed64
        writer.float(97, 3)  // fixed32
        writer.string(96, "ignored")  // length-delimited
        writer.raw(ONNXBytes.reluModel())
        let model = try decode(writer.bytes)
        #expect(model.graph.nodes.count == 2)
    }

    /// Every malformed input is a typed error naming the message and field, never a trap.
    @Test(
        arguments: [
            ("truncated varint", [0x08, 0x80], "ModelProto"),
            ("length past the end", [0x3A, 0x05, 0x01], "ModelProto"),
            ("field number 0", [0x00, 0x01], "field number 0"),
            ("group wire type", [0x9B, 0x06], "group"),
            ("unknown wire type", [0x0E], "wire type 6"),
            ("wrong wire type", [0x0D, 0, 0, 0, 0], "ir_version"),
            ("varint over 64 bits", [0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01], "64 bits"),
            ("no graph", [0x08, 0x08], "graph"),
        ] as [(String, [UInt8], String)])
    func malformedModelsAreTypedErrors(_ name: String, bytes: [UInt8], mentions: String) {
        do {
            _ = try decode(bytes)
            Issue.record("\(name): decoded")
        } catch let error as FileFormatError {
            #expect(error.format == "onnx")
            #expect(error.message.contains(mentions), "\(name): \(error.message)")
        } catch {
            Issue.record("\(name): not a FileFormatError: \(error)")
        }
    }

    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        // Graphs nest inside attributes: 200 levels of node → attribute → graph.
        var innermost: [UInt8] = []
        for _ in 0..<200 {
            var attribute = ProtobufWriter()
            attribute.string(1, "body")
            attribute.int(20, 5)
            attribute.bytes(6, innermost)
            var node = ProtobufWriter()
            node.string(4, "If")
            node.bytes(5, attribute.bytes)
            var graph = ProtobufWriter()
            graph.bytes(1, node.bytes)
            innermost = graph.bytes
        }
        var model = ProtobufWriter()
        model.bytes(7, innermost)
        #expect(throws: FileFormatError.self) { try decode(model.bytes) }
    }

    @Test func tensorDataMustMatchTheShape() {
        #expect(throws: FileFormatError.self) {
            _ = try tensor { writer in
                writer.packedInts(1, [4])
                writer.int(2, 1)
                writer.bytes(9, [0, 0, 128, 63])  // one float for four elements
            }
        }
        #expect(throws: FileFormatError.self) {
            _ = try tensor { writer in
                writer.int(1, -3)
                writer.int(2, 1)
            }
        }
        #expect(throws: FileFormatError.self) {
            _ = try tensor { writer in
                writer.packedInts(1, [Int64.max, Int64.max])
                writer.int(2, 1)
            }
        }
        do {
            _ = try tensor { writer in
                writer.packedInts(1, [1])
                writer.int(2, 8)  // string
            }
            Issue.record("a string tensor decoded")
        } catch {
            #expect((error as? FileFormatError)?.kind == .unsupportedDType)
        }
    }

    @Test func booleanBytesOtherThanZeroOrOneAreRejected() {
        #expect(throws: FileFormatError.self) {
            _ = try tensor { writer in
                writer.packedInts(1, [2])
                writer.int(2, 9)
                writer.bytes(9, [1, 2])
            }
        }
    }
}
