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
    /// A constraint of a declared shape and types.
    public init(shape: [FeatureDimension]?, modelElementType: String, dataType: ScalarType) {
        self.shape = shape
        self.modelElementType = modelElementType
        self.dataType = dataType
    }

    /// The declared shape (`nil` when the model declares none).
    public let shape: [FeatureDimension]?
    /// The model's own name of the element type (`float`, `int64`, ...).
    public let modelElementType: String
    /// The engine scalar type that holds the values: inputs must be of this type (or one that
    /// converts exactly, as `Int32` to `Int64` or `Float16` to `Float`), outputs are of it.
    public let dataType: ScalarType

    /// `int64 [batch, sequence]`.
    public var description: String {
        guard let shape else { return modelElementType }
        return "\(modelElementType) [\(shape.map(\.description).joined(separator: ", "))]"
    }
}

/// What a model says about one input, output or state feature, like Core ML's
/// `MLFeatureDescription`.
public struct FeatureDescription: Sendable, Hashable, CustomStringConvertible {
    /// The feature's name.
    public let name: String
    /// The kind of value: `.multiArray` for a tensor, `.state` for a model's state, `.string` for
    /// text a model tokenizes.
    public let type: FeatureType
    /// Whether a prediction may leave the feature out.
    public let isOptional: Bool
    /// For a tensor or state feature, its element type and shape; `nil` for other kinds.
    public let multiArrayConstraint: MultiArrayConstraint?
    /// For a feature the engine cannot take, what the model says it is (`sequence`, `map`).
    public let otherType: String?

    /// A description of a feature of `type`.
    public init(
        name: String, type: FeatureType, isOptional: Bool = false, multiArrayConstraint: MultiArrayConstraint? = nil,
        otherType: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.multiArrayConstraint = multiArrayConstraint
        self.otherType = otherType
    }

    /// A tensor feature, or one of another kind when `multiArrayConstraint` is `nil`.
    init(name: String, multiArrayConstraint: MultiArrayConstraint?, otherType: String?) {
        self.init(
            name: name, type: multiArrayConstraint == nil ? .invalid : .multiArray,
            multiArrayConstraint: multiArrayConstraint, otherType: otherType)
    }

    /// The same feature described as a model's state.
    var asState: FeatureDescription {
        FeatureDescription(name: name, type: .state, multiArrayConstraint: multiArrayConstraint, otherType: otherType)
    }

    /// `input_ids: int64 [batch, sequence]`.
    public var description: String {
        let kind = multiArrayConstraint?.description ?? otherType ?? type.description
        return "\(name): \(type == .state ? "state " : "")\(kind)"
    }
}
