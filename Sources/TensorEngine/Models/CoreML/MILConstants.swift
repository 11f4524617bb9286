/// MIL constants (`const` operations, values bound in place, weights in the package's weight
/// file) as program values.
///
/// Large float weights stored in a weight file become engine tensors over the mapped file without
/// a copy (when aligned to their element size); small ones and integers stay on the host, where
/// operations read sizes and axes from them; narrow integers (compressed weights) stay packed.
enum MILConstants {
    /// The value of a constant, checked against its declared type and shape.
    static func value(_ spec: MILValueSpec, package: CoreMLPackage?, name: String) throws(ModelError) -> MILValue {
        func invalid(_ message: String) -> ModelError {
            ModelError(.invalidModel, "constant '\(name)': \(message)")
        }
        if case .immediate(.list(let values)) = spec.storage {
            return .list(
                try values.map { value throws(ModelError) in try Self.value(value, package: package, name: name) })
        }
        if case .immediate(.tuple(let values)) = spec.storage {
            return .list(
                try values.map { value throws(ModelError) in try Self.value(value, package: package, name: name) })
        }
        guard let type = spec.type.tensorType else { throw invalid("its type \(spec.type) is not a tensor type") }
        guard let shape = type.fixedShape else { throw invalid("its shape \(type) is not fixed") }
        var count = 1
        for size in shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else { throw invalid("its shape \(shape) has too many elements") }
            count = product
        }
        switch spec.storage {
        case .none, .immediate(.dictionary):
            throw invalid("it holds no value the engine reads")
        case .immediate(.list), .immediate(.tuple):
            throw invalid("a list is not a tensor")
        case .immediate(.tensor(let values)):
            return try immediate(values, type: type.dataType, shape: shape, count: count, invalid: invalid)
        case .blob(let fileName, let offset):
            guard let package else { throw invalid("its weights are in a file, and the model has no folder") }
            do {
                let blob = try package.weightFile(named: fileName).blob(at: offset)
                return try stored(blob, type: type.dataType, shape: shape, count: count, invalid: invalid)
            } catch let error as FileFormatError {
                throw invalid(error.description)
            } catch let error as ModelError {
                throw error
            } catch {
                throw invalid("\(error)")
            }
        }
    }

    private static func immediate(
        _ values: MILTensorValue, type: MILDataType, shape: [Int], count: Int, invalid: (String) -> ModelError
    ) throws(ModelError) -> MILValue {
        func checked<T>(_ values: [T]) throws(ModelError) -> [T] {
            guard values.count == count else {
                throw invalid("it holds \(values.count) values, its shape \(shape) needs \(count)")
            }
            return values
        }
        guard let imported = type.importedType else {
            if type == .string, case .strings(let strings) = values { return .strings(try checked(strings)) }
            throw ModelError(.unsupportedType, "the engine cannot hold \(type) values")
        }
        let decoded: ONNXConstant.Values
        switch values {
        case .floats(let floats): decoded = .reals(try checked(floats).map { Double($0) })
        case .doubles(let doubles): decoded = .reals(try checked(doubles))
        case .ints(let ints): decoded = .integers(try checked(ints).map { Int64($0) })
        case .longInts(let longs): decoded = .integers(try checked(longs))
        case .bools(let bools): decoded = .booleans(try checked(bools))
        case .strings: throw invalid("strings declared as \(type)")
        case .bytes(let bytes):
            return try fromBytes(bytes, type: type, shape: shape, count: count, invalid: invalid)
        }
        return .imported(.constant(ONNXConstant(dataType: imported, shape: shape, values: decoded).cast(to: imported)))
    }

    private static func stored(
        _ blob: MILWeightFile.Blob, type: MILDataType, shape: [Int], count: Int, invalid: (String) -> ModelError
    ) throws(ModelError) -> MILValue {
        guard blob.type.milType == type else {
            throw invalid("declared \(type), but its weights are stored as \(blob.type.milType)")
        }
        if let engineType = type.importedType?.engineType, type == .float32 || type == .float16,
            count > ONNXConstant.hostElementLimit
        {
            let (expected, overflow) = count.multipliedReportingOverflow(by: engineType.byteCount)
            guard !overflow, blob.bytes.count == expected else {
                throw invalid("its weights take \(blob.bytes.count) bytes, shape \(shape) of \(type) needs \(expected)")
            }
            do {
                let tensor = try Tensor.constant(
                    bytes: blob.bytes, shape: shape, type: engineType, owner: blob.owner, op: "coreml weight")
                return .imported(.tensor(tensor, type.importedType ?? .float))
            } catch {
                throw invalid(error.message)
            }
        }
        return try fromBytes(Array(blob.bytes), type: type, shape: shape, count: count, invalid: invalid)
    }

    /// Values stored as little-endian bytes of `type`.
    private static func fromBytes(
        _ bytes: [UInt8], type: MILDataType, shape: [Int], count: Int, invalid: (String) -> ModelError
    ) throws(ModelError) -> MILValue {
        guard let width = type.bitWidth, let imported = type.importedType else {
            throw ModelError(.unsupportedType, "the engine cannot hold \(type) values")
        }
        if width <= 8 && type != .bool { return .packed(try MILPackedIntegers(type: type, shape: shape, bytes: bytes)) }
        let (bits, overflow) = count.multipliedReportingOverflow(by: width)
        let expected = bits / 8
        guard !overflow, bytes.count == expected else {
            throw invalid("it takes \(bytes.count) bytes, shape \(shape) of \(type) needs \(expected)")
        }
        func load<T: FixedWidthInteger>(_: T.Type) -> [T] {
            bytes.withUnsafeBytes { raw in
                (0..<count).map {
                    T(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * MemoryLayout<T>.size, as: T.self))
                }
            }
        }
        let values: ONNXConstant.Values
        switch type {
        case .float16: values = .reals(load(UInt16.self).map { Double(Float(Float16(bitPattern: $0))) })
        case .bfloat16: values = .reals(load(UInt16.self).map { Double(Float(bitPattern: UInt32($0) << 16)) })
        case .float32: values = .reals(load(UInt32.self).map { Double(Float(bitPattern: $0)) })
        case .float64: values = .reals(load(UInt64.self).map { Double(bitPattern: $0) })
        case .bool: values = .booleans(bytes.map { $0 != 0 })
        case .int16: values = .integers(load(Int16.self).map { Int64($0) })
        case .uint16: values = .integers(load(UInt16.self).map { Int64($0) })
        case .int32: values = .integers(load(Int32.self).map { Int64($0) })
        case .uint32: values = .integers(load(UInt32.self).map { Int64($0) })
        case .int64, .uint64: values = .integers(load(Int64.self))
        default: throw ModelError(.unsupportedType, "the engine cannot hold \(type) values")
        }
        return .imported(.constant(ONNXConstant(dataType: imported, shape: shape, values: values)))
    }
}
