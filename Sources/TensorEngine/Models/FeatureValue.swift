import Foundation

/// The kind of a feature's value, like Core ML's `MLFeatureType`.
public enum FeatureType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No value.
    case invalid
    /// A 64-bit integer.
    case int64
    /// A double-precision number.
    case double
    /// A string.
    case string
    /// An image (Core ML's pixel buffers; the engine takes images as tensors).
    case image
    /// A multidimensional array: a ``MultiArray`` or a ``Tensor``.
    case multiArray
    /// A dictionary from strings or integers to numbers.
    case dictionary
    /// A sequence of strings or integers.
    case sequence
    /// A model's state (``State``).
    case state

    /// `multiArray`, `string`, ...
    public var description: String {
        switch self {
        case .invalid: "invalid"
        case .int64: "int64"
        case .double: "double"
        case .string: "string"
        case .image: "image"
        case .multiArray: "multiArray"
        case .dictionary: "dictionary"
        case .sequence: "sequence"
        case .state: "state"
        }
    }
}

/// A sequence of strings or of integers, like Core ML's `MLSequence`.
public enum FeatureSequence: Sendable, Hashable {
    /// Strings.
    case strings([String])
    /// Integers.
    case int64s([Int64])

    /// A sequence of strings.
    public init(strings: [String]) { self = .strings(strings) }
    /// A sequence of integers.
    public init(int64s: [NSNumber]) { self = .int64s(int64s.map(\.int64Value)) }

    /// The strings (empty for an integer sequence).
    public var stringValues: [String] {
        switch self {
        case .strings(let values): values
        case .int64s: []
        }
    }

    /// The integers (empty for a string sequence).
    public var int64Values: [NSNumber] {
        switch self {
        case .strings: []
        case .int64s(let values): values.map { NSNumber(value: $0) }
        }
    }
}

/// A named input or output of a ``Model``, like Core ML's `MLFeatureValue`.
///
/// ```swift
/// let value = FeatureValue(multiArray: try MultiArray(shape: [1, 128], dataType: .int32))
/// let probabilities = output.featureValue(for: "probs")?.shapedArrayValue(of: Float.self)
/// ```
///
/// A model's outputs are ``tensor(_:)`` values, already computed: ``multiArrayValue`` and
/// ``shapedArrayValue(of:)`` wrap their results without a copy.
public enum FeatureValue: Sendable {
    /// A tensor (lazy until materialized; a model's outputs are computed).
    case tensor(Tensor)
    /// A multi-array.
    case multiArray(MultiArray)
    /// An integer.
    case int64(Int64)
    /// A number.
    case double(Double)
    /// A string.
    case string(String)
    /// A dictionary from strings to numbers (a classifier's probabilities).
    case stringDictionary([String: Double])
    /// A dictionary from integers to numbers.
    case int64Dictionary([Int64: Double])
    /// A sequence of strings or integers.
    case sequence(FeatureSequence)
    /// No value, of the given type (Core ML's `init(undefined:)`).
    case undefined(FeatureType)

    /// A multi-array value.
    public init(multiArray: MultiArray) { self = .multiArray(multiArray) }
    /// A shaped array's value (held as a tensor over its scalars, without a copy).
    public init<S: TensorScalar>(shapedArray: ShapedArray<S>) { self = .tensor(Tensor(shapedArray)) }
    /// A tensor value.
    public init(tensor: Tensor) { self = .tensor(tensor) }
    /// An integer value.
    public init(int64: Int64) { self = .int64(int64) }
    /// A number value.
    public init(double: Double) { self = .double(double) }
    /// A string value.
    public init(string: String) { self = .string(string) }
    /// A sequence value.
    public init(sequence: FeatureSequence) { self = .sequence(sequence) }
    /// No value, of `type`.
    public init(undefined type: FeatureType) { self = .undefined(type) }

    /// A dictionary value: every key a `String`, or every key an integer.
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for keys of other types or of mixed types.
    public init(dictionary: [AnyHashable: NSNumber]) throws(ModelError) {
        if dictionary.keys.allSatisfy({ $0.base is String }) {
            var values: [String: Double] = [:]
            for (key, value) in dictionary { if let key = key.base as? String { values[key] = value.doubleValue } }
            self = .stringDictionary(values)
            return
        }
        var values: [Int64: Double] = [:]
        for (key, value) in dictionary {
            switch key.base {
            case let key as Int: values[Int64(key)] = value.doubleValue
            case let key as Int64: values[key] = value.doubleValue
            case let key as Int32: values[Int64(key)] = value.doubleValue
            default:
                throw ModelError(
                    .invalidInput, "a dictionary feature's keys must all be strings or all integers, found \(key.base)")
            }
        }
        self = .int64Dictionary(values)
    }

    /// The kind of the value.
    public var type: FeatureType {
        switch self {
        case .tensor, .multiArray: .multiArray
        case .int64: .int64
        case .double: .double
        case .string: .string
        case .stringDictionary, .int64Dictionary: .dictionary
        case .sequence: .sequence
        case .undefined(let type): type
        }
    }

    /// Whether the value is ``undefined(_:)``.
    public var isUndefined: Bool {
        if case .undefined = self { return true }
        return false
    }

    /// The tensor: a tensor value itself, or a tensor over a multi-array's memory;
    /// `nil` for other kinds.
    public var tensorValue: Tensor? {
        switch self {
        case .tensor(let tensor): tensor
        case .multiArray(let array): Tensor(array)
        case .int64, .double, .string, .stringDictionary, .int64Dictionary, .sequence, .undefined: nil
        }
    }

    /// The multi-array: a multi-array value itself, or a tensor's result (evaluating it first if it
    /// has not run); `nil` for other kinds or a tensor that fails.
    public var multiArrayValue: MultiArray? {
        switch self {
        case .multiArray(let array): array
        case .tensor(let tensor): try? MultiArray(tensor)
        case .int64, .double, .string, .stringDictionary, .int64Dictionary, .sequence, .undefined: nil
        }
    }

    /// The values as a shaped array of `S`: a tensor of type `S` shares its result, a multi-array
    /// shares or converts its memory; `nil` for other kinds, another tensor type, or a failure.
    public func shapedArrayValue<S: TensorScalar & MultiArrayScalar>(of type: S.Type) -> ShapedArray<S>? {
        switch self {
        case .multiArray(let array): return ShapedArray<S>(array)
        case .tensor(let tensor):
            guard tensor.dtype == S.scalarType, (try? Tensor.evaluateNow([tensor])) != nil,
                let value = tensor.node?.storedResult, let buffer = value.buffer as? HostBuffer
            else { return nil }
            return ShapedArray(
                sharing: buffer, offset: value.layout.offset, shape: tensor.shape, count: tensor.scalarCount)
        case .int64, .double, .string, .stringDictionary, .int64Dictionary, .sequence, .undefined: return nil
        }
    }

    /// The integer (a `double` truncated); 0 for other kinds, as Core ML gives.
    public var int64Value: Int64 {
        switch self {
        case .int64(let value): value
        case .double(let value):
            value.isFinite ? Int64(clamping: Int64(Swift.max(-9.2e18, Swift.min(9.2e18, value)))) : 0
        case .tensor, .multiArray, .string, .stringDictionary, .int64Dictionary, .sequence, .undefined: 0
        }
    }

    /// The number (an `int64` widened); 0 for other kinds, as Core ML gives.
    public var doubleValue: Double {
        switch self {
        case .double(let value): value
        case .int64(let value): Double(value)
        case .tensor, .multiArray, .string, .stringDictionary, .int64Dictionary, .sequence, .undefined: 0
        }
    }

    /// The string; empty for other kinds, as Core ML gives.
    public var stringValue: String {
        switch self {
        case .string(let value): value
        case .tensor, .multiArray, .int64, .double, .stringDictionary, .int64Dictionary, .sequence, .undefined: ""
        }
    }

    /// The dictionary, keyed by `String` or `Int64`; empty for other kinds.
    public var dictionaryValue: [AnyHashable: NSNumber] {
        switch self {
        case .stringDictionary(let values):
            Dictionary(uniqueKeysWithValues: values.map { (AnyHashable($0.key), NSNumber(value: $0.value)) })
        case .int64Dictionary(let values):
            Dictionary(uniqueKeysWithValues: values.map { (AnyHashable($0.key), NSNumber(value: $0.value)) })
        case .tensor, .multiArray, .int64, .double, .string, .sequence, .undefined: [:]
        }
    }

    /// The sequence; `nil` for other kinds.
    public var sequenceValue: FeatureSequence? {
        if case .sequence(let sequence) = self { return sequence }
        return nil
    }
}
