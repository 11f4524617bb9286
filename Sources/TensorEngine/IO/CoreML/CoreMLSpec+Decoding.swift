/// Decoders of Core ML's model messages, one per message, by field number (`Model.proto`,
/// `FeatureTypes.proto`); like the ONNX decoders, each skips the fields it does not know.
extension CoreMLModelSpec {
    /// Decodes a `Model` from a whole `.mlmodel` file's bytes.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(FileFormatError) -> CoreMLModelSpec {
        var reader = ProtobufReader(bytes: bytes, context: "Model", format: "coreml")
        var model = CoreMLModelSpec()
        var sawDescription = false
        while let key = try reader.nextField() {
            switch key.number {
            case 1: model.specificationVersion = try reader.int32(key, field: "specificationVersion")
            case 2:
                model.description = try reader.message(key, field: "description", CoreMLModelDescriptionSpec.decode)
                sawDescription = true
            case 502:
                model.program = try reader.message(key, field: "mlProgram", MILProgramSpec.decode)
                model.kind = .mlProgram
            case 200...299, 300...399, 400...499, 500...501, 555...560, 600...699, 900, 2000...2999, 3000:
                try reader.skip(key)
                model.kind = .other(field: key.number)
            default: try reader.skip(key)
            }
        }
        guard sawDescription else { throw reader.error(field: "description", "is missing") }
        return model
    }
}

extension CoreMLModelDescriptionSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLModelDescriptionSpec {
        var description = CoreMLModelDescriptionSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1:
                let field = "input[\(description.inputs.count)]"
                description.inputs.append(try reader.message(key, field: field, CoreMLFeatureSpec.decode))
            case 10:
                let field = "output[\(description.outputs.count)]"
                description.outputs.append(try reader.message(key, field: field, CoreMLFeatureSpec.decode))
            case 13:
                let field = "state[\(description.states.count)]"
                description.states.append(try reader.message(key, field: field, CoreMLFeatureSpec.decode))
            case 11: description.predictedFeatureName = try reader.string(key, field: "predictedFeatureName")
            case 20:
                let field = "functions[\(description.functions.count)]"
                description.functions.append(
                    try reader.message(key, field: field, CoreMLFunctionDescriptionSpec.decode))
            case 21: description.defaultFunctionName = try reader.string(key, field: "defaultFunctionName")
            case 100: description.metadata = try reader.message(key, field: "metadata", CoreMLMetadataSpec.decode)
            default: try reader.skip(key)
            }
        }
        return description
    }
}

extension CoreMLFunctionDescriptionSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLFunctionDescriptionSpec {
        var function = CoreMLFunctionDescriptionSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: function.name = try reader.string(key, field: "name")
            case 2: function.inputs.append(try reader.message(key, field: "input", CoreMLFeatureSpec.decode))
            case 3: function.outputs.append(try reader.message(key, field: "output", CoreMLFeatureSpec.decode))
            case 6: function.states.append(try reader.message(key, field: "state", CoreMLFeatureSpec.decode))
            default: try reader.skip(key)
            }
        }
        return function
    }
}

extension CoreMLMetadataSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLMetadataSpec {
        var metadata = CoreMLMetadataSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: metadata.shortDescription = try reader.string(key, field: "shortDescription")
            case 2: metadata.versionString = try reader.string(key, field: "versionString")
            case 3: metadata.author = try reader.string(key, field: "author")
            case 4: metadata.license = try reader.string(key, field: "license")
            case 100:
                let (name, value) = try reader.message(key, field: "userDefined", decodeStringPair)
                metadata.userDefined[name] = value
            default: try reader.skip(key)
            }
        }
        return metadata
    }
}

extension CoreMLFeatureSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLFeatureSpec {
        var feature = CoreMLFeatureSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: feature.name = try reader.string(key, field: "name")
            case 2: feature.shortDescription = try reader.string(key, field: "shortDescription")
            case 3:
                (feature.type, feature.isOptional) = try reader.message(key, field: "type", decodeFeatureType)
            default: try reader.skip(key)
            }
        }
        return feature
    }

    /// Decodes a `FeatureType`: its kind and `isOptional`.
    private static func decodeFeatureType(_ reader: inout ProtobufReader) throws(FileFormatError) -> (
        CoreMLFeatureTypeSpec, Bool
    ) {
        var type = CoreMLFeatureTypeSpec.unknown
        var isOptional = false
        while let key = try reader.nextField() {
            switch key.number {
            case 1:
                try reader.skip(key)
                type = .int64
            case 2:
                try reader.skip(key)
                type = .double
            case 3:
                try reader.skip(key)
                type = .string
            case 4:
                try reader.skip(key)
                type = .image
            case 5: type = .multiArray(try reader.message(key, field: "multiArrayType", CoreMLArrayTypeSpec.decode))
            case 6:
                try reader.skip(key)
                type = .dictionary
            case 7:
                try reader.skip(key)
                type = .sequence
            case 8: type = .state(try reader.message(key, field: "stateType", decodeStateType))
            case 1000: isOptional = try reader.int64(key, field: "isOptional") != 0
            default: try reader.skip(key)
            }
        }
        return (type, isOptional)
    }

    /// Decodes a `StateFeatureType`: the multi-array it wraps.
    private static func decodeStateType(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLArrayTypeSpec {
        var array = CoreMLArrayTypeSpec()
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            array = try reader.message(key, field: "arrayType", CoreMLArrayTypeSpec.decode)
        }
        return array
    }
}

extension CoreMLArrayTypeSpec {
    static func decode(_ reader: inout ProtobufReader) throws(FileFormatError) -> CoreMLArrayTypeSpec {
        var array = CoreMLArrayTypeSpec()
        while let key = try reader.nextField() {
            switch key.number {
            case 1: try reader.appendInt64s(key, field: "shape", to: &array.shape)
            case 2: array.dataType = try reader.int64(key, field: "dataType")
            case 21: array.enumeratedShapes = try reader.message(key, field: "enumeratedShapes", decodeShapes)
            case 31: array.shapeRanges = try reader.message(key, field: "shapeRange", decodeRanges)
            default: try reader.skip(key)
            }
        }
        return array
    }

    /// `EnumeratedShapes`: repeated `Shape` messages, each a repeated `shape` field.
    private static func decodeShapes(_ reader: inout ProtobufReader) throws(FileFormatError) -> [[Int64]] {
        var shapes: [[Int64]] = []
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            shapes.append(
                try reader.message(key, field: "shapes[\(shapes.count)]") { inner throws(FileFormatError) in
                    var shape: [Int64] = []
                    try inner.forEachField(1) { inner, field throws(FileFormatError) in
                        try inner.appendInt64s(field, field: "shape", to: &shape)
                    }
                    return shape
                })
        }
        return shapes
    }

    /// `ShapeRange`: repeated `SizeRange` messages (`lowerBound` = 1, `upperBound` = 2).
    private static func decodeRanges(_ reader: inout ProtobufReader) throws(FileFormatError) -> [(
        lower: Int64, upper: Int64
    )] {
        var ranges: [(lower: Int64, upper: Int64)] = []
        try reader.forEachField(1) { reader, key throws(FileFormatError) in
            ranges.append(
                try reader.message(key, field: "sizeRanges[\(ranges.count)]") { inner throws(FileFormatError) in
                    var range: (lower: Int64, upper: Int64) = (0, -1)
                    while let field = try inner.nextField() {
                        switch field.number {
                        case 1: range.lower = try inner.int64(field, field: "lowerBound")
                        case 2: range.upper = try inner.int64(field, field: "upperBound")
                        default: try inner.skip(field)
                        }
                    }
                    return range
                })
        }
        return ranges
    }
}
