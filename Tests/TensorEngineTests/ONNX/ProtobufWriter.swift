import Foundation

/// A minimal protobuf encoder for the tests: builds ONNX messages (and malformed ones) byte by
/// byte, so the reader is checked against the wire format itself, not against its own decoder.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func key(_ field: Int, _ wireType: UInt8) { varint(UInt64(field) << 3 | UInt64(wireType)) }

    mutating func int(_ field: Int, _ value: Int64) {
        key(field, 0)
        varint(UInt64(bitPattern: value))
    }

    mutating func float(_ field: Int, _ value: Float) {
        key(field, 5)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func bytes(_ field: Int, _ data: [UInt8]) {
        key(field, 2)
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func string(_ field: Int, _ text: String) { bytes(field, Array(text.utf8)) }

    mutating func message(_ field: Int, _ build: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        build(&inner)
        bytes(field, inner.bytes)
    }

    mutating func packedInts(_ field: Int, _ values: [Int64]) {
        var inner = ProtobufWriter()
        for value in values { inner.varint(UInt64(bitPattern: value)) }
        bytes(field, inner.bytes)
    }

    mutating func packedFloats(_ field: Int, _ values: [Float]) {
        var data: [UInt8] = []
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        bytes(field, data)
    }

    mutating func raw(_ data: [UInt8]) { bytes.append(contentsOf: data) }
}

/// ONNX messages built with the writer (field numbers from onnx.proto).
enum ONNXBytes {
    /// A `TensorProto` of floats in `raw_data`.
    static func floatTensor(_ name: String, dims: [Int64], values: [Float], into writer: inout ProtobufWriter) {
        writer.packedInts(1, dims)
        writer.int(2, 1)
        writer.string(8, name)
        var data: [UInt8] = []
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        writer.bytes(9, data)
    }

    /// A `ValueInfoProto` of a float tensor with the given dimensions (an Int64 or a symbol name).
    static func valueInfo(_ name: String, type: Int64 = 1, dims: [Any], into writer: inout ProtobufWriter) {
        writer.string(1, name)
        writer.message(2) { type_ in
            type_.message(1) { tensor in
                tensor.int(1, type)
                tensor.message(2) { shape in
                    for dim in dims {
                        shape.message(1) { dimension in
                            if let size = dim as? Int { dimension.int(1, Int64(size)) }
                            if let symbol = dim as? String { dimension.string(2, symbol) }
                        }
                    }
                }
            }
        }
    }

    /// A model: `y = Relu(x · w)` with `x` [batch, 2] and an initializer `w` [2, 2], opset 17.
    static func reluModel(opType: String = "Relu", extraNodes: (inout ProtobufWriter) -> Void = { _ in }) -> [UInt8] {
        var model = ProtobufWriter()
        model.int(1, 8)
        model.string(2, "tests")
        model.message(8) { opset in
            opset.string(1, "")
            opset.int(2, 17)
        }
        model.message(7) { graph in
            graph.message(1) { node in
                node.string(1, "x")
                node.string(1, "w")
                node.string(2, "xw")
                node.string(3, "product")
                node.string(4, "MatMul")
            }
            graph.message(1) { node in
                node.string(1, "xw")
                node.string(2, "y")
                node.string(3, "activation")
                node.string(4, opType)
            }
            extraNodes(&graph)
            graph.string(2, "relu")
            graph.message(5) { floatTensor("w", dims: [2, 2], values: [1, -1, 2, 0.5], into: &$0) }
            graph.message(11) { valueInfo("x", dims: ["batch", 2], into: &$0) }
            graph.message(12) { valueInfo("y", dims: ["batch", 2], into: &$0) }
        }
        return model.bytes
    }
}

/// A node attribute for ``ONNXBytes/model(opset:nodes:initializers:inputs:outputs:)``.
enum TestAttribute {
    case int(Int64)
    case ints([Int64])
    case float(Float)
    case string(String)
}

/// A node for ``ONNXBytes/model(opset:nodes:initializers:inputs:outputs:)``.
struct TestNode {
    var op: String
    var inputs: [String]
    var outputs: [String]
    var attributes: [(String, TestAttribute)] = []
}

extension ONNXBytes {
    /// A model of one graph at an opset: float inputs and outputs with fixed shapes, initializers
    /// of floats (`values`) or int64s (`integers`).
    static func model(
        opset: Int64, nodes: [TestNode], initializers: [(name: String, dims: [Int64], integers: [Int64])] = [],
        inputs: [(String, [Int])], outputs: [String]
    ) -> [UInt8] {
        var model = ProtobufWriter()
        model.int(1, 8)
        model.message(8) { set in
            set.string(1, "")
            set.int(2, opset)
        }
        model.message(7) { graph in
            for (index, node) in nodes.enumerated() {
                graph.message(1) { writer in
                    for input in node.inputs { writer.string(1, input) }
                    for output in node.outputs { writer.string(2, output) }
                    writer.string(3, "\(node.op.lowercased())_\(index)")
                    writer.string(4, node.op)
                    for (name, value) in node.attributes {
                        writer.message(5) { attribute in
                            attribute.string(1, name)
                            switch value {
                            case .int(let int):
                                attribute.int(3, int)
                                attribute.int(20, 2)
                            case .ints(let ints):
                                attribute.packedInts(8, ints)
                                attribute.int(20, 7)
                            case .float(let float):
                                attribute.float(2, float)
                                attribute.int(20, 1)
                            case .string(let text):
                                attribute.string(4, text)
                                attribute.int(20, 3)
                            }
                        }
                    }
                }
            }
            for initializer in initializers {
                graph.message(5) { tensor in
                    tensor.packedInts(1, initializer.dims)
                    tensor.int(2, 7)
                    tensor.string(8, initializer.name)
                    tensor.packedInts(7, initializer.integers)
                }
            }
            for (name, dims) in inputs { graph.message(11) { valueInfo(name, dims: dims, into: &$0) } }
            for name in outputs { graph.message(12) { valueInfo(name, dims: [], into: &$0) } }
        }
        return model.bytes
    }
}
