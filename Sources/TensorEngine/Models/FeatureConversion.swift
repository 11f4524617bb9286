import Foundation

extension Tensor {
    /// Reads a `.npy` file as the value of a model's input feature, converting its element type
    /// where the conversion is exact: an `int32` file serves an `int64` input, a `float16` file a
    /// `float` or `double` one, a `float32` file a `double` one.
    ///
    /// - Throws: ``FileFormatError`` for an unreadable file, ``ModelError/Kind/invalidInput`` for
    ///   an element type that does not convert exactly to the feature's.
    public init(npyFile url: URL, converting feature: FeatureDescription) throws {
        guard let constraint = feature.multiArrayConstraint else {
            throw ModelError(.invalidInput, "input '\(feature.name)' is not a tensor (\(feature))")
        }
        let tensor = try Tensor(npyFile: url)
        guard let converted = MultiArrayConstraint.exactly(tensor, as: constraint.dataType) else {
            throw ModelError(
                .invalidInput,
                "input '\(feature.name)' expects \(constraint); the file \(url.lastPathComponent) holds \(tensor.dtype), which does not convert exactly"
            )
        }
        self = converted
    }
}

extension MultiArrayConstraint {
    /// The tensor as values of `type` when its own type converts to it without loss (the same
    /// type, `Int32` to `Int64`, a float to a wider float), else `nil`.
    static func exactly(_ tensor: Tensor, as type: ScalarType) -> Tensor? {
        let widening: [(ScalarType, ScalarType)] = [(.int32, .int64), (.float16, .float32), (.float16, .float64), (.float32, .float64)]
        guard tensor.dtype == type || widening.contains(where: { $0 == (tensor.dtype, type) }) else { return nil }
        return tensor.converted(to: type)
    }
}

extension FeatureDescription {
    /// The tensor of one feature value for an input, or an error naming both sides.
    func tensor(of value: FeatureValue) throws(ModelError) -> Tensor {
        let description = self
        guard let constraint = description.multiArrayConstraint else {
            throw ModelError(.unsupportedType, "input '\(description.name)' is of a type the engine cannot take")
        }
        func mismatch(_ given: String) -> ModelError {
            ModelError(
                .invalidInput,
                "input '\(description.name)' expects \(constraint), given \(given), which does not convert exactly")
        }
        let type = constraint.dataType
        switch value {
        case .tensor(let tensor):
            guard let converted = MultiArrayConstraint.exactly(tensor, as: type) else {
                throw mismatch("a \(tensor.dtype) tensor \(describe(tensor.shape))")
            }
            return converted
        case .multiArray(let array):
            guard let converted = MultiArrayConstraint.exactly(Tensor(array), as: type) else {
                throw mismatch("a \(array.dataType) multi-array \(describe(array.sizes))")
            }
            return converted
        case .int64(let integer):
            let shape = Self.scalarShape(of: constraint)
            switch type {
            case .int64: return Tensor(repeating: integer, shape: shape)
            case .int32:
                guard let narrow = Int32(exactly: integer) else { throw mismatch("the integer \(integer)") }
                return Tensor(repeating: narrow, shape: shape)
            case .float32, .float16, .float64, .bool: throw mismatch("the integer \(integer)")
            }
        case .double(let number):
            let shape = Self.scalarShape(of: constraint)
            switch type {
            case .float64: return Tensor(repeating: number, shape: shape)
            case .float32:
                guard Double(Float(number)) == number else { throw mismatch("the number \(number)") }
                return Tensor(repeating: Float(number), shape: shape)
            case .float16, .int32, .int64, .bool: throw mismatch("the number \(number)")
            }
        case .string, .stringDictionary, .int64Dictionary, .sequence, .undefined:
            throw mismatch("a \(value.type) value")
        }
    }

    /// The shape a single number takes for an input: its declared shape when every size is 1.
    private static func scalarShape(of constraint: MultiArrayConstraint) -> [Int] {
        guard let shape = constraint.shape else { return [] }
        let ones = shape.allSatisfy { if case .fixed(1) = $0 { true } else { false } }
        return ones ? shape.map { _ in 1 } : []
    }
}
