/// One size of a model's declared input or output shape.
public enum FeatureDimension: Sendable, Hashable, CustomStringConvertible {
    /// A fixed size.
    case fixed(Int)
    /// A size named by the model (`batch`, `sequence`) and fixed by the inputs at prediction time;
    /// every input with the same name must agree.
    case symbolic(String)
    /// A size the model leaves open.
    case unknown

    /// `384`, `batch`, or `?`.
    public var description: String {
        switch self {
        case .fixed(let size): "\(size)"
        case .symbolic(let name): name
        case .unknown: "?"
        }
    }
}

/// The element type and shape a model declares for a tensor feature, like Core ML's
/// `MLMultiArrayConstraint`.
public struct MultiArrayConstraint: Sendable, Hashable, CustomStringConvertible {
    /// The declared shape (`nil` when the model declares none).
    public let shape: [FeatureDimension]?
    /// The model's own name of the element type (`float`, `int64`, ...).
    public let modelElementType: String
    /// The engine scalar type that holds the values: inputs must be of this type (or one that
    /// converts exactly, as `Float16` to `Float`), outputs are of it. ONNX's `int64` is held as
    /// `Int32` (values outside its range are an error), `double` as `Float`.
    public let dataType: ScalarType

    /// `int64 [batch, sequence]`.
    public var description: String {
        guard let shape else { return modelElementType }
        return "\(modelElementType) [\(shape.map(\.description).joined(separator: ", "))]"
    }
}

/// What a model says about one input or output feature, like Core ML's `MLFeatureDescription`.
public struct FeatureDescription: Sendable, Hashable, CustomStringConvertible {
    /// The feature's name.
    public let name: String
    /// For a tensor feature, its element type and shape; `nil` for other kinds.
    public let multiArrayConstraint: MultiArrayConstraint?
    /// For a feature that is not a tensor, what the model says it is (`sequence`, `map`).
    public let otherType: String?

    /// `input_ids: int64 [batch, sequence]`.
    public var description: String {
        "\(name): \(multiArrayConstraint?.description ?? otherType ?? "unknown type")"
    }
}
