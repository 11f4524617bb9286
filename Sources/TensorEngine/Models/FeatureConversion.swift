import Foundation

extension Tensor {
    /// Reads a `.npy` file as the value of a model's input feature, converting its element type
    /// where the conversion is exact: an `int64` file is narrowed to the engine's `Int32` (which
    /// holds a model's `int64`; a value outside it is an error), an `int32` file serves any integer
    /// input, a `float16` file a `float` one. A `float64` file serves only a `double` input (the
    /// engine holds `double` as `Float`).
    ///
    /// - Throws: ``FileFormatError`` for an unreadable file, ``ModelError/Kind/invalidInput`` for
    ///   an element type that does not convert exactly to the feature's.
    public init(npyFile url: URL, converting feature: FeatureDescription) throws {
        guard let constraint = feature.multiArrayConstraint else {
            throw ModelError(.invalidInput, "input '\(feature.name)' is not a tensor (\(feature))")
        }
        let bytes = try Data(contentsOf: url, options: .alwaysMapped)
        let descr: String = bytes.withUnsafeBytes { raw in
            guard let header = try? NPYHeader(parsing: raw, wide: true) else { return "" }
            return header.wideSource == .int64
                ? "i8" : header.wideSource == .float64 ? "f8" : header.scalarType.rawValue
        }
        let tensor = try Tensor(npyFileConverting: url)
        let model = constraint.modelElementType
        let accepted: Bool =
            switch (descr, constraint.dataType) {
            case ("f8", _): model == "double"
            case ("i8", .int32): true
            case (_, .float32): tensor.dtype == .float32 || tensor.dtype == .float16
            case (_, let type): tensor.dtype == type
            }
        guard accepted else {
            let given = descr == "i8" ? "int64" : descr == "f8" ? "float64" : tensor.dtype.description
            throw ModelError(
                .invalidInput,
                "input '\(feature.name)' expects \(constraint); the file \(url.lastPathComponent) holds \(given), which does not convert exactly"
            )
        }
        self = tensor
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
        let isDouble = constraint.modelElementType == "double"
        switch value {
        case .tensor(let tensor):
            return tensor
        case .multiArray(let array):
            let accepted: Bool =
                switch array.dataType {
                case .double: isDouble
                case .float32, .float16: constraint.dataType == .float32 || constraint.dataType == .float16
                case .int32: constraint.dataType == .int32
                }
            guard accepted else { throw mismatch("a \(array.dataType) multi-array \(describe(array.sizes))") }
            return Tensor(array)
        case .int64(let integer):
            guard constraint.dataType == .int32, let narrow = Int32(exactly: integer) else {
                throw mismatch("the integer \(integer)")
            }
            return Tensor(repeating: narrow, shape: Self.scalarShape(of: constraint))
        case .double(let number):
            guard constraint.dataType == .float32, isDouble || Double(Float(number)) == number else {
                throw mismatch("the number \(number)")
            }
            return Tensor(repeating: Float(number), shape: Self.scalarShape(of: constraint))
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
