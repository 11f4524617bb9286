/// MIL's weight decompression (`constexpr_*`, computed once when the model loads) and its state
/// operations (iOS 18's stateful programs).
extension MILOperators {
    static let constexpr: [String: MILOperator] = [
        // (data - zero_point) · scale, with per-channel parameters along `axis` (iOS 16).
        "constexpr_affine_dequantize": MILOperator { context throws(ModelError) in
            let data = try integers(context, "quantized_data")
            let zeroPoint = try integers(context, "zero_point")
            let scale = try context.constant("scale").reals
            let shape = try shapeOf(context, "quantized_data")
            var inner = 1
            var channels = 1
            if !shape.isEmpty {
                let axis = try axis(try context.int("axis", default: 0), rank: shape.count, context)
                inner = try elementCount(Array(shape[(axis + 1)...]), context)
                channels = shape[axis]
            }
            for (name, count) in [("zero_point", zeroPoint.count), ("scale", scale.count)]
            where count != 1 && count != channels {
                throw context.error("\(name) holds \(count) values; the quantization axis has \(channels)")
            }
            let values = (0..<data.count).map { index -> Float in
                let channel = channels == 0 ? 0 : (index / Swift.max(inner, 1)) % channels
                let zero = zeroPoint.count == 1 ? zeroPoint[0] : zeroPoint[channel]
                let factor = scale.count == 1 ? scale[0] : scale[channel]
                return Float(Double(data[index] - zero) * factor)
            }
            return [try dense(values, shape: shape, context)]
        },
        "constexpr_cast": MILOperator { context throws(ModelError) in
            let source = try context.tensor("source")
            let name = try context.string("output_dtype")
            guard let type = castTypes[name] else { throw context.error("cast to '\(name)' is not supported") }
            return [try context.output(source.converted(to: type))]
        },
        "constexpr_lut_to_dense": MILOperator(lower: lookUpTable),
        // (data - offset) · scale, each parameter one value per block of the data (iOS 18).
        "constexpr_blockwise_shift_scale": MILOperator { context throws(ModelError) in
            let shape = try shapeOf(context, "data")
            let data = try reals(context, "data")
            let scale = try context.constant("scale")
            let offset = context.has("offset") ? try reals(context, "offset") : nil
            guard scale.shape.count == shape.count, zip(shape, scale.shape).allSatisfy({ $1 > 0 && $0 % $1 == 0 })
            else {
                throw context.error(
                    "scale \(describe(scale.shape)) does not divide data \(describe(shape)) into blocks")
            }
            let scales = scale.reals
            let blocks = zip(shape, scale.shape).map { $0 / $1 }
            let dataStrides = ONNXHost.strides(shape)
            let scaleStrides = ONNXHost.strides(scale.shape)
            let values = (0..<data.count).map { index -> Float in
                var position = 0
                for axis in 0..<shape.count {
                    position += (index / dataStrides[axis]) % shape[axis] / blocks[axis] * scaleStrides[axis]
                }
                return Float((data[index] - (offset?[position] ?? 0)) * scales[position])
            }
            return [try dense(values, shape: shape, context)]
        },
        // The non-zero values placed where the mask's bits are set.
        "constexpr_sparse_to_dense": MILOperator { context throws(ModelError) in
            let values = try context.constant("nonzero_data").reals
            guard case .packed(let mask) = try context.value("mask") else {
                throw context.error("mask is not a packed bit mask", .invalidModel)
            }
            let shape = try context.optionalInts("shape") ?? mask.shape
            let count = try elementCount(shape, context)
            guard mask.bytes.count * 8 >= count else { throw context.error("mask has fewer bits than \(count)") }
            var filled = [Float](repeating: 0, count: count)
            var next = 0
            for index in 0..<count where (mask.bytes[index >> 3] >> UInt8(index & 7)) & 1 == 1 {
                guard next < values.count else { throw context.error("the mask sets more bits than there are values") }
                filled[index] = Float(values[next])
                next += 1
            }
            return [try dense(filled, shape: shape, context)]
        },
    ]

    /// `constexpr_lut_to_dense`: each index picks an entry of a look-up table. iOS 16 packs the
    /// indices as bits into bytes, with the output shape given; iOS 18 gives them as a `uintN`
    /// tensor of the output's shape and a table per block (`lut`: the indices' rank plus the
    /// table's entries and vector axes).
    private static func lookUpTable(_ context: MILOperationContext) throws(ModelError) -> [MILValue] {
        let lut = try context.constant("lut")
        let table = lut.reals
        guard case .packed(let packed) = try context.value("indices") else {
            throw context.error("indices are not packed integers", .invalidModel)
        }
        if let shape = try context.optionalInts("shape") {
            let entries = table.count
            let width = entries.trailingZeroBitCount
            guard entries > 0, entries == 1 << width else { throw context.error("the table has \(entries) entries") }
            let count = try elementCount(shape, context)
            guard count <= packed.bytes.count * 8 / width else { throw context.error("too few index bits") }
            let values = (0..<count).map { index -> Float in
                var raw = 0
                for bit in 0..<width {
                    let position = index * width + bit
                    raw |= Int((packed.bytes[position >> 3] >> UInt8(position & 7)) & 1) << bit
                }
                return Float(table[raw])
            }
            return [try dense(values, shape: shape, context)]
        }
        let shape = packed.shape
        guard lut.shape.count == shape.count + 2, lut.shape.last == 1 else {
            throw context.error(
                "a table of shape \(describe(lut.shape)) for indices \(describe(shape)) is not supported")
        }
        let entries = lut.shape[shape.count]
        let blocks = zip(shape, lut.shape.prefix(shape.count)).map { $1 > 0 && $0 % $1 == 0 ? $0 / $1 : 0 }
        guard !blocks.contains(0) else { throw context.error("the table's blocks do not divide the indices") }
        let strides = ONNXHost.strides(shape)
        let tableStrides = ONNXHost.strides(lut.shape)
        let indices = packed.elements
        var values: [Float] = []
        values.reserveCapacity(indices.count)
        for (flat, index) in indices.enumerated() {
            guard index < entries else { throw context.error("index \(index) is past the table's \(entries) entries") }
            var position = index * tableStrides[shape.count]
            for axis in 0..<shape.count {
                position += (flat / strides[axis]) % shape[axis] / blocks[axis] * tableStrides[axis]
            }
            values.append(Float(table[position]))
        }
        return [try dense(values, shape: shape, context)]
    }

    /// A parameter's integers: packed narrow ones, or a constant's.
    private static func integers(_ context: MILOperationContext, _ parameter: String) throws(ModelError) -> [Int] {
        if case .packed(let packed) = try context.value(parameter) { return packed.elements }
        return try context.ints(parameter)
    }

    /// A parameter's values as reals: packed integers widened, or a constant's.
    private static func reals(_ context: MILOperationContext, _ parameter: String) throws(ModelError) -> [Double] {
        if case .packed(let packed) = try context.value(parameter) { return packed.elements.map { Double($0) } }
        return try context.constant(parameter).reals
    }

    /// A parameter's shape.
    private static func shapeOf(_ context: MILOperationContext, _ parameter: String) throws(ModelError) -> [Int] {
        switch try context.value(parameter) {
        case .packed(let packed): return packed.shape
        case .imported(let value): return value.shape
        case .strings, .state, .list: throw context.error("'\(parameter)' is not a tensor", .invalidModel)
        }
    }

    /// Decompressed weights as the operation's output, in its declared precision.
    private static func dense(_ values: [Float], shape: [Int], _ context: MILOperationContext) throws(ModelError)
        -> MILValue
    {
        guard try elementCount(shape, context) == values.count else {
            throw context.error("\(values.count) values do not fill the shape \(describe(shape))")
        }
        let tensor: Tensor =
            context.declaredType()?.dataType == .float16
            ? Tensor.constant(values.map { Float16($0) }, shape: shape, op: "coreml weight", at: nil)
            : Tensor.constant(values, shape: shape, op: "coreml weight", at: nil)
        return try context.output(tensor)
    }

    static let stateOperations: [String: MILOperator] = [
        "read_state": MILOperator { context throws(ModelError) in
            [try context.output(try stateValue(context, "input"))]
        },
        // Writes `value` into the state and gives it.
        "coreml_update_state": MILOperator { context throws(ModelError) in
            let name = try stateName(context, "state")
            let value = try context.tensor("value")
            try store(value, in: name, context)
            return [try context.output(value)]
        },
        "write_state": MILOperator { context throws(ModelError) in
            try store(try context.tensor("data"), in: try stateName(context, "input"), context)
            return []
        },
    ]

    private static func stateName(_ context: MILOperationContext, _ parameter: String) throws(ModelError) -> String {
        guard case .state(let name) = try context.value(parameter) else {
            throw context.error("'\(parameter)' is not a state", .invalidModel)
        }
        return name
    }

    private static func stateValue(_ context: MILOperationContext, _ parameter: String) throws(ModelError) -> Tensor {
        let name = try stateName(context, parameter)
        guard let value = context.run.states[name] else { throw context.error("state '\(name)' has no value") }
        return value
    }

    /// Replaces a state's value with one of its shape and type.
    private static func store(_ value: Tensor, in name: String, _ context: MILOperationContext) throws(ModelError) {
        guard let current = context.run.states[name] else { throw context.error("state '\(name)' has no value") }
        guard value.shape == current.shape else {
            throw context.error("writes \(describe(value.shape)) into state '\(name)' of \(describe(current.shape))")
        }
        context.run.states[name] = value.dtype == current.dtype ? value : value.converted(to: current.dtype)
    }
}
