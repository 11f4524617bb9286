/// Core ML's model specification (`Model.proto`, `FeatureTypes.proto` of Core ML's published
/// format), as far as the engine reads it: the model's description and which kind of model it is.
///
/// The engine runs ML Programs (`mlProgram`, specification version 7 and later); the other kinds
/// are recognised by their field so that loading one can say what it is.
struct CoreMLModelSpec: Sendable {
    /// The specification version (7: iOS 16, 8: iOS 17, 9: iOS 18).
    var specificationVersion: Int32 = 0
    var description = CoreMLModelDescriptionSpec()
    /// Which of `Model`'s `Type` fields is set.
    var kind: Kind = .none
    /// The program of an ML Program.
    var program: MILProgramSpec?

    /// The kind of model, from the field of `Model`'s `Type` one-of that is set.
    enum Kind: Sendable, Hashable, CustomStringConvertible {
        case none
        case mlProgram
        /// Any other model type, by field number (500: `neuralNetwork`, 202: `pipeline`, ...).
        case other(field: Int)

        var description: String {
            switch self {
            case .none: "no model"
            case .mlProgram: "an ML Program"
            case .other(let field): Self.names[field].map { "a \($0) model" } ?? "a model of type field \(field)"
            }
        }

        /// Names of `Model`'s other `Type` fields, for errors.
        private static let names: [Int: String] = [
            200: "pipeline classifier", 201: "pipeline regressor", 202: "pipeline", 300: "GLM regressor",
            301: "support vector regressor", 302: "tree ensemble regressor",
            303: "neural-network regressor (pre-ML-Program)", 304: "Bayesian probit regressor",
            400: "GLM classifier", 401: "support vector classifier", 402: "tree ensemble classifier",
            403: "neural-network classifier (pre-ML-Program)", 404: "k-nearest-neighbours classifier",
            500: "neural-network (pre-ML-Program)", 501: "item similarity recommender", 555: "custom",
            556: "linked", 600: "one-hot encoder", 601: "imputer", 602: "feature vectorizer",
            603: "dictionary vectorizer", 604: "scaler", 606: "categorical mapping", 607: "normalizer",
            609: "array feature extractor", 610: "non-maximum suppression", 900: "identity",
            2000: "text classifier", 2001: "word tagger", 2002: "vision feature print",
            2003: "sound analysis preprocessing",
        ]
    }
}

/// `ModelDescription`: the model's features and metadata.
struct CoreMLModelDescriptionSpec: Sendable {
    var inputs: [CoreMLFeatureSpec] = []
    var outputs: [CoreMLFeatureSpec] = []
    var states: [CoreMLFeatureSpec] = []
    var predictedFeatureName = ""
    var metadata = CoreMLMetadataSpec()
    /// The functions of a multi-function model, each with its own features.
    var functions: [CoreMLFunctionDescriptionSpec] = []
    var defaultFunctionName = ""
}

/// `FunctionDescription`: one function's features in a multi-function model.
struct CoreMLFunctionDescriptionSpec: Sendable {
    var name = ""
    var inputs: [CoreMLFeatureSpec] = []
    var outputs: [CoreMLFeatureSpec] = []
    var states: [CoreMLFeatureSpec] = []
}

/// `Metadata`.
struct CoreMLMetadataSpec: Sendable {
    var shortDescription = ""
    var versionString = ""
    var author = ""
    var license = ""
    var userDefined: [String: String] = [:]
}

/// `FeatureDescription`: a named, typed feature.
struct CoreMLFeatureSpec: Sendable {
    var name = ""
    var shortDescription = ""
    var type = CoreMLFeatureTypeSpec.unknown
    var isOptional = false
}

/// `FeatureType`'s one-of: the kinds of feature a model declares.
enum CoreMLFeatureTypeSpec: Sendable {
    case multiArray(CoreMLArrayTypeSpec)
    /// A state (`StateFeatureType`), wrapping a multi-array.
    case state(CoreMLArrayTypeSpec)
    case int64
    case double
    case string
    case image
    case dictionary
    case sequence
    case unknown
}

/// `ArrayFeatureType`: a multi-array's default shape, element type and allowed shapes.
struct CoreMLArrayTypeSpec: Sendable {
    var shape: [Int64] = []
    /// `ArrayDataType`'s value (65568: float32, 65552: float16, 65600: double, 131104: int32, 131080: int8).
    var dataType: Int64 = 0
    /// The shapes an input may take, when the model lists them.
    var enumeratedShapes: [[Int64]] = []
    /// Each axis's size range, when the model gives ranges (upper bound -1: unbounded).
    var shapeRanges: [(lower: Int64, upper: Int64)] = []

    /// The element type's name, for descriptions.
    var dataTypeName: String {
        switch dataType {
        case 65568: "float32"
        case 65552: "float16"
        case 65600: "double"
        case 131104: "int32"
        case 131080: "int8"
        default: "array type \(dataType)"
        }
    }
}
