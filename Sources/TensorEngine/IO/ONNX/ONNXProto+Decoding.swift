/// Decoders of the ONNX messages, one per message, by field number (ONNX's `onnx.proto`).
///
/// Each decoder reads the fields it knows and skips the others; a known field with the wrong
/// wire type, or a value its message forbids (a negative dimension), is an error naming the field.
extension ONNXModelProto {
    /// Decodes a `ModelProto` from a whole file's bytes.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(FileFormatError) -> ONNXModelProto {
        var reader = ProtobufReader(bytes: bytes, context: "ModelProto", format: "onnx")
        var model = ONNXModelProto()
        var sawGraph = false
        while let key = try reader.nextField() {
            switch key.number {
            case 1: model.irVersion = try reader.int64(key, field: "ir_version")
            case 2: model.producerName = try reader.string(key, field: "producer_name")
            case 3: model.producerVersion = try reader.string(key, field: "producer_version")
            case 4: model.domain = try reader.string(key, field: "domain")
            case 5: model.modelVersion = try reader.int64(key, field: "model_version")
            case 6: model.docString = try reader.string(key, field: "doc_string")
            case 7:
                model.graph = try reader.message(key, field: "graph", ONNXGraphProto.decode)
                sawGraph = true
            case 8: model.opsetImports.append(try reader.message(key, field: "opset_import", ONNXOperatorSet.decode))
            case 14:
                let (name, value) = try reader.message(key, field: "metadata_props", decodeStringPair)
                model.metadata[name] = value
            case 25: model.functions.append(try reader.message(key, field: "functions", ONNXFunctionProto.decode))
            default: try reader.skip(key)
            }
        }
        guard sawGraph else { throw reader.error(field: "graph", "is missing: the file holds no graph") }
        return model
    }
}

/// Decodes a `StringStringEntryProto` (`key` = 1, `value` = 2).
func decodeStringPair(_ reader: inout ProtobufReader) throws(FileFormatError) -> (String, String) {
    var pair = ("", "")
    while let key = try reader.nextField() {
        switch key.number {
        case 1: pair.0 = try reader.string(key, field: "key")
        case 2: pair.1 = try reader.string(key, field: "value")
        default: try reader.skip(key)
        }
    }
    return pair
}

extension ONNXOperatorSet {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXOperatorSet {
        var set = ONNXOperatorSet()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: set.domain = try reader.string(key, field: "domain")
            case 2: set.version = try reader.int64(key, field: "version")
            default: try reader.skip(key)
            }
        }
        return set
    }
}

extension ONNXGraphProto {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXGraphProto {
        var graph = ONNXGraphProto()
        while let key = try reader.nextField() {
            switch key.number {
            case 1:
                let field = "node[\(graph.nodes.count)]"
                graph.nodes.append(try reader.message(key, field: field, ONNXNodeProto.decode))
            case 2: graph.name = try reader.string(key, field: "name")
            case 5:
                let field = "initializer[\(graph.initializers.count)]"
                graph.initializers.append(try reader.message(key, field: field, ONNXTensorProto.decode))
            case 11: graph.inputs.append(try reader.message(key, field: "input", ONNXValueInfo.decode))
            case 12: graph.outputs.append(try reader.message(key, field: "output", ONNXValueInfo.decode))
            case 13: graph.valueInfo.append(try reader.message(key, field: "value_info", ONNXValueInfo.decode))
            case 15:
                try reader.skip(key)
                graph.sparseInitializerCount += 1
            default: try reader.skip(key)
            }
        }
        return graph
    }
}

extension ONNXNodeProto {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXNodeProto {
        var node = ONNXNodeProto()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: node.inputs.append(try reader.string(key, field: "input"))
            case 2: node.outputs.append(try reader.string(key, field: "output"))
            case 3: node.name = try reader.string(key, field: "name")
            case 4: node.opType = try reader.string(key, field: "op_type")
            case 5: node.attributes.append(try reader.message(key, field: "attribute", ONNXAttribute.decode))
            case 7: node.domain = try reader.string(key, field: "domain")
            default: try reader.skip(key)
            }
        }
        return node
    }
}

extension ONNXFunctionProto {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXFunctionProto {
        var function = ONNXFunctionProto()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: function.name = try reader.string(key, field: "name")
            case 4: function.inputs.append(try reader.string(key, field: "input"))
            case 5: function.outputs.append(try reader.string(key, field: "output"))
            case 6: function.attributeNames.append(try reader.string(key, field: "attribute"))
            case 7:
                let field = "node[\(function.nodes.count)]"
                function.nodes.append(try reader.message(key, field: field, ONNXNodeProto.decode))
            case 9: function.opsetImports.append(try reader.message(key, field: "opset_import", ONNXOperatorSet.decode))
            case 10: function.domain = try reader.string(key, field: "domain")
            case 11:
                function.attributeDefaults.append(
                    try reader.message(key, field: "attribute_proto", ONNXAttribute.decode))
            default: try reader.skip(key)
            }
        }
        return function
    }
}

extension ONNXAttribute {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXAttribute {
        var attribute = ONNXAttribute()
        var typeNumber: Int64 = 0
        while let key = try reader.nextField() {
            switch key.number {
            case 1: attribute.name = try reader.string(key, field: "name")
            case 2: attribute.float = try reader.float(key, field: "f")
            case 3: attribute.int = try reader.int64(key, field: "i")
            case 4: attribute.string = Array(try reader.lengthDelimited(key, field: "s").0)
            case 5: attribute.tensor = try reader.message(key, field: "t", ONNXTensorProto.decode)
            case 6: attribute.graph = ONNXGraphBox(try reader.message(key, field: "g", ONNXGraphProto.decode))
            case 7: try reader.appendFloats(key, field: "floats", to: &attribute.floats)
            case 8: try reader.appendInt64s(key, field: "ints", to: &attribute.ints)
            case 9: attribute.strings.append(Array(try reader.lengthDelimited(key, field: "strings").0))
            case 10: attribute.tensors.append(try reader.message(key, field: "tensors", ONNXTensorProto.decode))
            case 11:
                attribute.graphs.append(ONNXGraphBox(try reader.message(key, field: "graphs", ONNXGraphProto.decode)))
            case 20: typeNumber = try reader.int64(key, field: "type")
            case 21: attribute.referenceName = try reader.string(key, field: "ref_attr_name")
            default: try reader.skip(key)
            }
        }
        guard let kind = Kind(rawValue: typeNumber) else {
            throw reader.error(field: "type", "attribute '\(attribute.name)' has the unknown type \(typeNumber)")
        }
        attribute.kind = kind
        return attribute
    }
}

extension ONNXTensorProto {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXTensorProto {
        var tensor = ONNXTensorProto()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: try reader.appendInt64s(key, field: "dims", to: &tensor.dims)
            case 2: tensor.dataType = ONNXDataType(rawValue: try reader.int32(key, field: "data_type"))
            case 3:
                try reader.skip(key)
                tensor.isSegmented = true
            case 4: try reader.appendFloats(key, field: "float_data", to: &tensor.floatData)
            case 5: try reader.appendInt32s(key, field: "int32_data", to: &tensor.int32Data)
            case 6:
                _ = try reader.lengthDelimited(key, field: "string_data")
                tensor.stringCount += 1
            case 7: try reader.appendInt64s(key, field: "int64_data", to: &tensor.int64Data)
            case 8: tensor.name = try reader.string(key, field: "name")
            case 9:
                let (raw, start) = try reader.lengthDelimited(key, field: "raw_data")
                tensor.rawData = start..<(start + raw.count)
            case 10: try reader.appendDoubles(key, field: "double_data", to: &tensor.doubleData)
            case 11: try reader.appendUInt64s(key, field: "uint64_data", to: &tensor.uint64Data)
            case 13:
                let (name, value) = try reader.message(key, field: "external_data", decodeStringPair)
                tensor.externalData[name] = value
            case 14: tensor.isExternal = try reader.int64(key, field: "data_location") == 1
            default: try reader.skip(key)
            }
        }
        for dim in tensor.dims where dim < 0 {
            throw reader.error(.invalidShape, "tensor '\(tensor.name)' has the negative dimension \(dim)")
        }
        return tensor
    }
}

extension ONNXValueInfo {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXValueInfo {
        var info = ONNXValueInfo()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: info.name = try reader.string(key, field: "name")
            case 2: info.type = try reader.message(key, field: "type", ONNXType.decode)
            default: try reader.skip(key)
            }
        }
        return info
    }
}

extension ONNXType {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXType {
        var type = ONNXType.unknown
        while let key = try reader.nextField() {
            switch key.number {
            case 1: type = try reader.message(key, field: "tensor_type", decodeTensorType)
            case 4:
                try reader.skip(key)
                type = .other("sequence")
            case 5:
                try reader.skip(key)
                type = .other("map")
            case 8:
                try reader.skip(key)
                type = .other("sparse tensor")
            case 9:
                try reader.skip(key)
                type = .other("optional")
            default: try reader.skip(key)
            }
        }
        return type
    }

    /// `TypeProto.Tensor`: `elem_type` = 1, `shape` = 2.
    private static func decodeTensorType(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXType {
        var elementType = ONNXDataType.undefined
        var shape: [ONNXDimension]?
        while let key = try reader.nextField() {
            switch key.number {
            case 1: elementType = ONNXDataType(rawValue: try reader.int32(key, field: "elem_type"))
            case 2: shape = try reader.message(key, field: "shape", decodeShape)
            default: try reader.skip(key)
            }
        }
        return .tensor(elementType, shape)
    }

    /// `TensorShapeProto`: repeated `dim` = 1.
    private static func decodeShape(_ reader: inout ProtobufReader) throws(FileFormatError) -> [ONNXDimension] {
        var dims: [ONNXDimension] = []
        while let key = try reader.nextField() {
            switch key.number {
            case 1: dims.append(try reader.message(key, field: "dim[\(dims.count)]", decodeDimension))
            default: try reader.skip(key)
            }
        }
        return dims
    }

    /// `TensorShapeProto.Dimension`: `dim_value` = 1, `dim_param` = 2.
    private static func decodeDimension(_ reader: inout ProtobufReader) throws(FileFormatError) -> ONNXDimension {
        var dimension = ONNXDimension.unknown
        while let key = try reader.nextField() {
            switch key.number {
            case 1:
                let value = try reader.int64(key, field: "dim_value")
                guard value >= 0 else { throw reader.error(.invalidShape, "dimension \(value) is negative") }
                dimension = .value(value)
            case 2:
                let name = try reader.string(key, field: "dim_param")
                dimension = name.isEmpty ? .unknown : .symbol(name)
            default: try reader.skip(key)
            }
        }
        return dimension
    }
}
