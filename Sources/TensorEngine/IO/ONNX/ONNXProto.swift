/// The messages of ONNX's `onnx.proto` that the engine reads, as plain Swift values.
///
/// Field numbers and meanings follow ONNX's published schema; fields the engine has no use for
/// (documentation strings, training information, quantization annotations) are skipped when read.
/// Tensor data stay in the file: ``ONNXTensorProto/rawData`` is a range of the mapped file, so
/// weights are wrapped, not copied.

/// An ONNX element type (`TensorProto.DataType`), kept as the file's number so that an unknown one
/// can be reported by number.
struct ONNXDataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32

    static let undefined = ONNXDataType(rawValue: 0)
    static let float = ONNXDataType(rawValue: 1)
    static let uint8 = ONNXDataType(rawValue: 2)
    static let int8 = ONNXDataType(rawValue: 3)
    static let uint16 = ONNXDataType(rawValue: 4)
    static let int16 = ONNXDataType(rawValue: 5)
    static let int32 = ONNXDataType(rawValue: 6)
    static let int64 = ONNXDataType(rawValue: 7)
    static let string = ONNXDataType(rawValue: 8)
    static let bool = ONNXDataType(rawValue: 9)
    static let float16 = ONNXDataType(rawValue: 10)
    static let double = ONNXDataType(rawValue: 11)
    static let uint32 = ONNXDataType(rawValue: 12)
    static let uint64 = ONNXDataType(rawValue: 13)
    static let bfloat16 = ONNXDataType(rawValue: 16)

    private static let names: [Int32: String] = [
        0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
        8: "string", 9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64",
        15: "complex128", 16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
        20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
    ]

    /// ONNX's name of the type (`float`, `int64`, ...), or `type N` for a number ONNX does not define.
    var description: String { Self.names[rawValue] ?? "type \(rawValue)" }

    /// The bytes one element takes in `raw_data`, for the types the engine reads.
    var rawByteCount: Int? {
        switch rawValue {
        case 1, 6, 12: 4
        case 2, 3, 9: 1
        case 4, 5, 10, 16: 2
        case 7, 11, 13: 8
        default: nil
        }
    }

    /// Whether the type is an integer type (signed or unsigned).
    var isInteger: Bool { [2, 3, 4, 5, 6, 7, 12, 13].contains(rawValue) }

    /// Whether the type is a floating-point type the engine reads.
    var isFloatingPoint: Bool { [1, 10, 11, 16].contains(rawValue) }

    /// The engine's scalar type that holds this type's values: exactly for float, float16, double,
    /// int32, int64, uint32, bool and the narrow integers (in `Int32`); uint64 in `Int64` (values
    /// above `Int64.max` keep their bits); bfloat16 in `Float`. `nil` for strings, complex and
    /// 8-bit or 4-bit floats.
    var engineType: ScalarType? {
        switch rawValue {
        case 1, 16: .float32
        case 10: .float16
        case 11: .float64
        case 2, 3, 4, 5, 6: .int32
        case 7, 12, 13: .int64
        case 9: .bool
        default: nil
        }
    }
}

/// `OperatorSetIdProto`: an operator set and its version.
struct ONNXOperatorSet: Sendable, Hashable {
    var domain = ""
    var version: Int64 = 0
}

/// `ModelProto`.
struct ONNXModelProto: Sendable {
    var irVersion: Int64 = 0
    var producerName = ""
    var producerVersion = ""
    var domain = ""
    var modelVersion: Int64 = 0
    var docString = ""
    var graph = ONNXGraphProto()
    var opsetImports: [ONNXOperatorSet] = []
    var metadata: [String: String] = [:]
    var functions: [ONNXFunctionProto] = []
}

/// `GraphProto`.
struct ONNXGraphProto: Sendable {
    var name = ""
    var nodes: [ONNXNodeProto] = []
    var initializers: [ONNXTensorProto] = []
    var inputs: [ONNXValueInfo] = []
    var outputs: [ONNXValueInfo] = []
    var valueInfo: [ONNXValueInfo] = []
    /// How many sparse initializers the graph holds (the engine does not read them).
    var sparseInitializerCount = 0
}

/// `NodeProto`.
struct ONNXNodeProto: Sendable {
    var inputs: [String] = []
    var outputs: [String] = []
    var name = ""
    var opType = ""
    var domain = ""
    var attributes: [ONNXAttribute] = []
}

/// `FunctionProto`: a model-local function, called by nodes whose domain and op type name it.
struct ONNXFunctionProto: Sendable {
    var name = ""
    var domain = ""
    var inputs: [String] = []
    var outputs: [String] = []
    /// The names of the function's attributes that have no default.
    var attributeNames: [String] = []
    /// The attributes with defaults.
    var attributeDefaults: [ONNXAttribute] = []
    var nodes: [ONNXNodeProto] = []
    var opsetImports: [ONNXOperatorSet] = []
}

/// `AttributeProto`: a named constant of a node.
struct ONNXAttribute: Sendable {
    /// `AttributeProto.AttributeType`.
    enum Kind: Int64, Sendable {
        case undefined = 0
        case float, int, string, tensor, graph, floats, ints, strings, tensors, graphs
        case sparseTensor, sparseTensors, typeProto, typeProtos
    }

    var name = ""
    var kind = Kind.undefined
    /// For an attribute of a function body: the caller's attribute it stands for.
    var referenceName = ""
    var float: Float = 0
    var int: Int64 = 0
    var string: [UInt8] = []
    var tensor: ONNXTensorProto?
    var graph: ONNXGraphBox?
    var floats: [Float] = []
    var ints: [Int64] = []
    var strings: [[UInt8]] = []
    var tensors: [ONNXTensorProto] = []
    var graphs: [ONNXGraphBox] = []
}

/// A graph held by reference (graphs nest inside attributes; a struct cannot contain itself).
final class ONNXGraphBox: Sendable {
    let graph: ONNXGraphProto
    init(_ graph: ONNXGraphProto) { self.graph = graph }
}

/// `TensorProto`: a constant tensor (an initializer, a `Constant`, a test's input or output).
struct ONNXTensorProto: Sendable {
    var dims: [Int64] = []
    var dataType = ONNXDataType.undefined
    var name = ""
    /// `raw_data`: where its bytes lie in the file, or `nil` when the field is absent.
    var rawData: Range<Int>?
    var floatData: [Float] = []
    var int32Data: [Int32] = []
    var int64Data: [Int64] = []
    var doubleData: [Double] = []
    var uint64Data: [UInt64] = []
    var stringCount = 0
    /// `external_data`'s key–value pairs (`location`, `offset`, `length`, `checksum`).
    var externalData: [String: String] = [:]
    /// Whether `data_location` is `EXTERNAL`.
    var isExternal = false
    /// Whether the tensor is split in segments (a deprecated form the engine does not read).
    var isSegmented = false
}

/// `ValueInfoProto`: the name and type of a graph input, output or intermediate value.
struct ONNXValueInfo: Sendable {
    var name = ""
    var type = ONNXType.unknown
}

/// One dimension of a declared shape.
enum ONNXDimension: Sendable, Hashable, CustomStringConvertible {
    /// A fixed size.
    case value(Int64)
    /// A named size fixed by the inputs (`batch`, `sequence`).
    case symbol(String)
    /// A size the model does not state.
    case unknown

    var description: String {
        switch self {
        case .value(let value): "\(value)"
        case .symbol(let name): name
        case .unknown: "?"
        }
    }
}

/// `TypeProto`, as far as the engine uses it.
enum ONNXType: Sendable {
    /// A tensor of an element type, with a shape when the model declares one.
    case tensor(ONNXDataType, [ONNXDimension]?)
    /// A sequence, map, optional or sparse tensor type (named for errors).
    case other(String)
    /// No type given.
    case unknown
}
