/// Decoders of MIL's messages (`MIL.proto`), one per message, by field number. Maps are repeated
/// entries with the key in field 1 and the value in field 2, as protobuf writes them.
extension MILProgramSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILProgramSpec {
        var program = MILProgramSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: program.version = try reader.int64(key, field: "version")
            case 2:
                let (name, function) = try reader.message(key, field: "functions") {
                    reader throws(FileFormatError) in try decodeEntry(&reader, MILFunctionSpec.decode)
                }
                program.functions[name] = function
            case 3: program.docString = try reader.string(key, field: "docString")
            default: try reader.skip(key)
            }
        }
        return program
    }
}

/// Decodes a map entry whose key is a string and whose value is a message.
private func decodeEntry<Value>(
    _ reader: inout ProtobufReader, _ decode: (inout ProtobufReader) throws(FileFormatError) -> Value
) throws(FileFormatError) -> (String, Value) {
    var name = ""
    var value: Value?
    while let key = try reader.nextField() {
        switch key.number {
        case 1: name = try reader.string(key, field: "key")
        case 2: value = try reader.message(key, field: name.isEmpty ? "value" : name, decode)
        default: try reader.skip(key)
        }
    }
    guard let value else { throw reader.error(field: "value", "the entry '\(name)' has no value") }
    return (name, value)
}

extension MILFunctionSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILFunctionSpec {
        var function = MILFunctionSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: function.inputs.append(try reader.message(key, field: "inputs", MILNamedValueType.decode))
            case 2: function.opset = try reader.string(key, field: "opset")
            case 3:
                let (opset, block) = try reader.message(key, field: "block_specializations") {
                    reader throws(FileFormatError) in try decodeEntry(&reader, MILBlockSpec.decode)
                }
                function.blockSpecializations[opset] = block
            default: try reader.skip(key)
            }
        }
        return function
    }
}

extension MILBlockSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILBlockSpec {
        var block = MILBlockSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: block.inputs.append(try reader.message(key, field: "inputs", MILNamedValueType.decode))
            case 2: block.outputs.append(try reader.string(key, field: "outputs"))
            case 3:
                let field = "operations[\(block.operations.count)]"
                block.operations.append(try reader.message(key, field: field, MILOperationSpec.decode))
            default: try reader.skip(key)
            }
        }
        return block
    }
}

extension MILOperationSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILOperationSpec {
        var operation = MILOperationSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: operation.type = try reader.string(key, field: "type")
            case 2:
                let (name, bindings) = try reader.message(key, field: "inputs") { reader throws(FileFormatError) in
                    try decodeEntry(&reader, decodeArgument)
                }
                operation.inputs[name] = bindings
            case 3: operation.outputs.append(try reader.message(key, field: "outputs", MILNamedValueType.decode))
            case 4: operation.blocks.append(try reader.message(key, field: "blocks", MILBlockSpec.decode))
            case 5:
                let (name, value) = try reader.message(key, field: "attributes") { reader throws(FileFormatError) in
                    try decodeEntry(&reader, MILValueSpec.decode)
                }
                operation.attributes[name] = value
            default: try reader.skip(key)
            }
        }
        return operation
    }

    /// Decodes an `Argument`: its bindings (`name` = 1 or `value` = 2 each).
    private static func decodeArgument(_ reader: inout ProtobufReader) throws(FileFormatError) -> [MILBinding] {
        var bindings: [MILBinding] = []
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            let binding = try reader.message(key, field: "arguments[\(bindings.count)]") {
                reader throws(FileFormatError) -> MILBinding? in
                var binding: MILBinding?
                while let field = try reader.nextField() {
                    switch field.number {
                    case 1: binding = .name(try reader.string(field, field: "name"))
                    case 2: binding = .value(try reader.message(field, field: "value", MILValueSpec.decode))
                    default: try reader.skip(field)
                    }
                }
                return binding
            }
            guard let binding else { throw reader.error(field: "arguments", "a binding names no value") }
            bindings.append(binding)
        }
        return bindings
    }
}

extension MILNamedValueType {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILNamedValueType {
        var value = MILNamedValueType()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: value.name = try reader.string(key, field: "name")
            case 2: value.type = try reader.message(key, field: "type", MILValueType.decode)
            default: try reader.skip(key)
            }
        }
        return value
    }
}

extension MILValueType {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILValueType {
        var type = MILValueType.unknown
        while let key = try reader.nextField() {
            switch key.number {
            case 1: type = .tensor(try reader.message(key, field: "tensorType", MILTensorType.decode))
            case 2:
                type = .list(
                    try reader.message(key, field: "listType") { reader throws(FileFormatError) in
                        try decodeWrapped(&reader, field: "type")
                    })
            case 3:
                type = .tuple(
                    try reader.message(key, field: "tupleType") { reader throws(FileFormatError) in
                        var types: [MILValueType] = []
                        try reader.forEachField(1) { reader, field throws(FileFormatError) in
                            types.append(try reader.message(field, field: "types", MILValueType.decode))
                        }
                        return types
                    })
            case 4:
                try reader.skip(key)
                type = .dictionary
            case 5:
                type = .state(
                    try reader.message(key, field: "stateType") { reader throws(FileFormatError) in
                        try decodeWrapped(&reader, field: "wrappedType")
                    })
            default: try reader.skip(key)
            }
        }
        return type
    }

    /// The `ValueType` in field 1 of a list or state type.
    private static func decodeWrapped(_ reader: inout ProtobufReader, field: String) throws(FileFormatError)
        -> MILValueType
    {
        var wrapped = MILValueType.unknown
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            wrapped = try reader.message(key, field: field, MILValueType.decode)
        }
        return wrapped
    }
}

extension MILTensorType {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILTensorType {
        var type = MILTensorType()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: type.dataType = MILDataType(rawValue: try reader.int64(key, field: "dataType"))
            case 2: type.rank = try reader.int64(key, field: "rank")
            case 3:
                let field = "dimensions[\(type.dimensions.count)]"
                type.dimensions.append(try reader.message(key, field: field, decodeDimension))
            default: try reader.skip(key)
            }
        }
        guard type.rank == -1 || type.rank == Int64(type.dimensions.count) else {
            throw reader.error(field: "rank", "is \(type.rank) but \(type.dimensions.count) dimensions are given")
        }
        return type
    }

    /// Decodes a `Dimension`: `constant` (its `size`) or `unknown`.
    private static func decodeDimension(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILDimension {
        var dimension = MILDimension.unknown
        while let key = try reader.nextField() {
            switch key.number {
            case 1:
                let size = try reader.message(key, field: "constant") { reader throws(FileFormatError) -> Int64 in
                    var size: Int64 = 0
                    try reader.forEachField(1) { reader, field throws(FileFormatError) in
                        size = try reader.int64(field, field: "size")
                    }
                    return size
                }
                guard size >= 0, let exact = Int(exactly: size) else {
                    throw reader.error(field: "constant.size", "\(UInt64(bitPattern: size)) is not a valid size")
                }
                dimension = .fixed(exact)
            case 2:
                try reader.skip(key)
                dimension = .unknown
            default: try reader.skip(key)
            }
        }
        return dimension
    }
}

extension MILValueSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILValueSpec {
        var value = MILValueSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 2: value.type = try reader.message(key, field: "type", MILValueType.decode)
            case 3: value.storage = .immediate(try reader.message(key, field: "immediateValue", decodeImmediate))
            case 5:
                value.storage = try reader.message(key, field: "blobFileValue") {
                    reader throws(FileFormatError) -> Storage in
                    var fileName = ""
                    var offset: UInt64 = 0
                    while let field = try reader.nextField() {
                        switch field.number {
                        case 1: fileName = try reader.string(field, field: "fileName")
                        case 2: offset = UInt64(bitPattern: try reader.int64(field, field: "offset"))
                        default: try reader.skip(field)
                        }
                    }
                    return .blob(fileName: fileName, offset: offset)
                }
            default: try reader.skip(key)
            }
        }
        return value
    }

    /// Decodes an `ImmediateValue`.
    private static func decodeImmediate(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILImmediateValue {
        var immediate = MILImmediateValue.dictionary
        while let key = try reader.nextField() {
            switch key.number {
            case 1: immediate = .tensor(try reader.message(key, field: "tensor", decodeTensorValue))
            case 2: immediate = .tuple(try reader.message(key, field: "tuple", decodeValues))
            case 3: immediate = .list(try reader.message(key, field: "list", decodeValues))
            case 4:
                try reader.skip(key)
                immediate = .dictionary
            default: try reader.skip(key)
            }
        }
        return immediate
    }

    /// The `values` (field 1) of a `TupleValue` or `ListValue`.
    private static func decodeValues(_ reader: inout ProtobufReader) throws(FileFormatError) -> [MILValueSpec] {
        var values: [MILValueSpec] = []
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            values.append(try reader.message(key, field: "values[\(values.count)]", MILValueSpec.decode))
        }
        return values
    }

    /// Decodes a `TensorValue`: one repeated field of one kind, each in a message of its own.
    private static func decodeTensorValue(_ reader: inout ProtobufReader) throws(FileFormatError) -> MILTensorValue {
        var value = MILTensorValue.floats([])
        while let key = try reader.nextField() {
            let kind = key.number
            guard (1...7).contains(kind) else {
                try reader.skip(key)
                continue
            }
            value = try reader.message(key, field: "values") { reader throws(FileFormatError) -> MILTensorValue in
                var floats: [Float] = []
                var integers: [Int64] = []
                var doubles: [Double] = []
                var strings: [String] = []
                var bytes: [UInt8] = []
                while let field = try reader.nextField() {
                    guard field.number == 1 else {
                        try reader.skip(field)
                        continue
                    }
                    switch kind {
                    case 1: try reader.appendFloats(field, field: "floats", to: &floats)
                    case 2, 3, 5: try reader.appendInt64s(field, field: "values", to: &integers)
                    case 4: strings.append(try reader.string(field, field: "strings"))
                    case 6: try reader.appendDoubles(field, field: "doubles", to: &doubles)
                    default: bytes.append(contentsOf: try reader.lengthDelimited(field, field: "bytes").0)
                    }
                }
                switch kind {
                case 1: return .floats(floats)
                case 2:
                    var narrowed: [Int32] = []
                    for integer in integers {
                        guard let exact = Int32(exactly: integer) else {
                            throw reader.error(field: "ints", "\(integer) does not fit 32 bits")
                        }
                        narrowed.append(exact)
                    }
                    return .ints(narrowed)
                case 3: return .bools(integers.map { $0 != 0 })
                case 4: return .strings(strings)
                case 5: return .longInts(integers)
                case 6: return .doubles(doubles)
                default: return .bytes(bytes)
                }
            }
        }
        return value
    }
}
