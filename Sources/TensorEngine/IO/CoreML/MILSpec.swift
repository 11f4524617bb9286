/// Core ML's Model Intermediate Language (`MIL.proto`): the program of an ML Program model, as
/// the engine reads it.
///
/// A program has functions; a function has typed inputs and a block per opset; a block is a
/// topologically sorted list of operations, each binding its named parameters to earlier values
/// or to constants (immediate, or stored in the package's weight file).
struct MILProgramSpec: Sendable {
    var version: Int64 = 0
    var functions: [String: MILFunctionSpec] = [:]
    var docString = ""
}

/// `Function`: inputs and the block of each opset it is written in.
struct MILFunctionSpec: Sendable {
    var inputs: [MILNamedValueType] = []
    /// The opset whose block runs (`CoreML7`, `CoreML8`).
    var opset = ""
    var blockSpecializations: [String: MILBlockSpec] = [:]
}

/// `Block`: operations in order and the names of the values it gives.
struct MILBlockSpec: Sendable {
    var inputs: [MILNamedValueType] = []
    var outputs: [String] = []
    var operations: [MILOperationSpec] = []
}

/// `Operation`: its type, its parameters' bindings, its outputs and any nested blocks.
struct MILOperationSpec: Sendable {
    var type = ""
    var inputs: [String: [MILBinding]] = [:]
    var outputs: [MILNamedValueType] = []
    var blocks: [MILBlockSpec] = []
    var attributes: [String: MILValueSpec] = [:]

    /// The operation's name: its `name` attribute, else its first output's name.
    var name: String {
        if case .immediate(.tensor(.strings(let names))) = attributes["name"]?.storage, let first = names.first {
            return first
        }
        return outputs.first?.name ?? ""
    }
}

/// `Argument.Binding`: a named value or a constant.
enum MILBinding: Sendable {
    case name(String)
    case value(MILValueSpec)
}

/// `NamedValueType`.
struct MILNamedValueType: Sendable {
    var name = ""
    var type = MILValueType.unknown
}

/// `ValueType`'s one-of.
indirect enum MILValueType: Sendable, CustomStringConvertible {
    case tensor(MILTensorType)
    case list(MILValueType)
    case tuple([MILValueType])
    case dictionary
    /// A state wrapping a tensor type (iOS 18's stateful programs).
    case state(MILValueType)
    case unknown

    var description: String {
        switch self {
        case .tensor(let tensor): tensor.description
        case .list(let element): "list<\(element)>"
        case .tuple(let types): "tuple<\(types.map(\.description).joined(separator: ", "))>"
        case .dictionary: "dictionary"
        case .state(let wrapped): "state<\(wrapped)>"
        case .unknown: "unknown"
        }
    }

    /// The tensor type, also inside a state.
    var tensorType: MILTensorType? {
        switch self {
        case .tensor(let tensor): tensor
        case .state(let wrapped): wrapped.tensorType
        case .list, .tuple, .dictionary, .unknown: nil
        }
    }
}

/// `TensorType`: element type and dimensions (rank -1: unknown rank).
struct MILTensorType: Sendable, CustomStringConvertible {
    var dataType = MILDataType.unused
    var rank: Int64 = 0
    var dimensions: [MILDimension] = []

    /// `fp32[1, 3, ?]`.
    var description: String {
        let dims = dimensions.map { dimension -> String in
            switch dimension {
            case .fixed(let size): "\(size)"
            case .unknown: "?"
            }
        }
        return "\(dataType)[\(dims.joined(separator: ", "))]"
    }

    /// The shape when every dimension is fixed.
    var fixedShape: [Int]? {
        var shape: [Int] = []
        for dimension in dimensions {
            guard case .fixed(let size) = dimension else { return nil }
            shape.append(size)
        }
        return shape
    }
}

/// `Dimension`: a fixed size or an unknown one.
enum MILDimension: Sendable {
    case fixed(Int)
    case unknown
}

/// `DataType`: MIL's element types.
struct MILDataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int64

    static let unused = MILDataType(rawValue: 0)
    static let bool = MILDataType(rawValue: 1)
    static let string = MILDataType(rawValue: 2)
    static let float16 = MILDataType(rawValue: 10)
    static let float32 = MILDataType(rawValue: 11)
    static let float64 = MILDataType(rawValue: 12)
    static let bfloat16 = MILDataType(rawValue: 13)
    static let int8 = MILDataType(rawValue: 21)
    static let int16 = MILDataType(rawValue: 22)
    static let int32 = MILDataType(rawValue: 23)
    static let int64 = MILDataType(rawValue: 24)
    static let int4 = MILDataType(rawValue: 25)
    static let uint8 = MILDataType(rawValue: 31)
    static let uint16 = MILDataType(rawValue: 32)
    static let uint32 = MILDataType(rawValue: 33)
    static let uint64 = MILDataType(rawValue: 34)
    static let uint4 = MILDataType(rawValue: 35)
    static let uint2 = MILDataType(rawValue: 36)
    static let uint1 = MILDataType(rawValue: 37)
    static let uint6 = MILDataType(rawValue: 38)
    static let uint3 = MILDataType(rawValue: 39)

    private static let names: [Int64: String] = [
        0: "unused", 1: "bool", 2: "string", 10: "fp16", 11: "fp32", 12: "fp64", 13: "bf16", 21: "int8", 22: "int16",
        23: "int32", 24: "int64", 25: "int4", 31: "uint8", 32: "uint16", 33: "uint32", 34: "uint64", 35: "uint4",
        36: "uint2", 37: "uint1", 38: "uint6", 39: "uint3", 40: "fp8e4m3fn", 41: "fp8e5m2",
    ]

    /// MIL's name of the type (`fp32`, `int32`).
    var description: String { Self.names[rawValue] ?? "type \(rawValue)" }

    /// The bits one element takes in a weight file or an immediate byte string (`nil` for strings
    /// and unknown types).
    var bitWidth: Int? {
        switch rawValue {
        case 1, 21, 31: 8
        case 10, 13, 22, 32: 16
        case 11, 23, 33: 32
        case 12, 24, 34: 64
        case 25, 35: 4
        case 36: 2
        case 37: 1
        case 38: 6
        case 39: 3
        default: nil
        }
    }

    /// The ONNX element type the importer holds values of this type as (the importer's host
    /// constants and engine tensors are shared by both model formats); `nil` for types the engine
    /// cannot hold.
    var importedType: ONNXDataType? {
        switch rawValue {
        case 1: .bool
        case 10: .float16
        case 11: .float
        case 12: .double
        case 13: .bfloat16
        case 21, 25: .int8
        case 22: .int16
        case 23: .int32
        case 24: .int64
        case 31, 35, 36, 37, 38, 39: .uint8
        case 32: .uint16
        case 33: .uint32
        case 34: .uint64
        default: nil
        }
    }
}

/// `Value`: a constant's type and where its data are.
struct MILValueSpec: Sendable {
    var type = MILValueType.unknown
    var storage = Storage.none

    enum Storage: Sendable {
        case none
        case immediate(MILImmediateValue)
        /// In a weight file of the package (`@model_path/weights/weight.bin`), at the offset of
        /// the blob's metadata.
        case blob(fileName: String, offset: UInt64)
    }
}

/// `Value.ImmediateValue`.
enum MILImmediateValue: Sendable {
    case tensor(MILTensorValue)
    case tuple([MILValueSpec])
    case list([MILValueSpec])
    case dictionary
}

/// `TensorValue`'s one-of: the values of an immediate tensor, row-major.
enum MILTensorValue: Sendable {
    case floats([Float])
    case ints([Int32])
    case bools([Bool])
    case strings([String])
    case longInts([Int64])
    case doubles([Double])
    /// Packed elements of a narrow type (`fp16`, `int8`, `uint4`...), as in a weight file.
    case bytes([UInt8])
}
