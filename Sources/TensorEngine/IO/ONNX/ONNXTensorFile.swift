import Foundation

/// A tensor stored alone in a file as one serialized `TensorProto`, the form of ONNX's test data
/// (`test_data_set_0/input_0.pb`).
package struct ONNXTensorFile: Sendable {
    /// The name the tensor carries (the graph input or output it belongs to; may be empty).
    package let name: String
    package let shape: [Int]
    /// ONNX's name of the element type (`float`, `int64`, ...).
    package let elementType: String
    /// Whether the elements are integers or booleans (compared exactly).
    package let isExact: Bool
    /// The elements as doubles, row-major (exact for every integer up to 2^53).
    package let values: [Double]
    private let constant: ONNXConstant

    /// Reads the file, or throws ``FileFormatError``.
    package init(contentsOf url: URL) throws(FileFormatError) {
        let source = try ONNXDataSource(url: url)
        var reader = ProtobufReader(bytes: source.file.bytes, context: "TensorProto", format: "onnx")
        let proto: ONNXTensorProto
        do { proto = try ONNXTensorProto.decode(&reader) } catch { throw error.at(url.path) }
        constant = try proto.constant(source: source)
        name = proto.name
        shape = constant.shape
        elementType = proto.dataType.description
        isExact = !proto.dataType.isFloatingPoint
        values = constant.reals
    }

    /// The tensor as an engine tensor (of its type's engine type; narrow integers outside `Int32`
    /// are an error).
    package func tensor() throws(ModelError) -> Tensor { try constant.tensor() }
}
