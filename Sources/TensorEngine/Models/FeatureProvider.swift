import Foundation
import Synchronization

/// A source of named feature values, like Core ML's `MLFeatureProvider`.
///
/// Values are produced when asked for: a provider may compute them on the first request, and the
/// tensors it returns are themselves lazy until materialized. As in Core ML, a provider need not be
/// `Sendable`: a model's `async` predictions read the features they need on the caller's task,
/// then compute elsewhere.
public protocol FeatureProvider {
    /// The names of the features the provider can give.
    var featureNames: Set<String> { get }
    /// The value of a feature, or `nil` if the provider has none of that name.
    func featureValue(for featureName: String) -> FeatureValue?
}

/// A provider backed by a dictionary of values, like Core ML's `MLDictionaryFeatureProvider`.
///
/// ```swift
/// let input = try DictionaryFeatureProvider(dictionary: [
///     "input_ids": FeatureValue(multiArray: ids), "confidence_threshold": 0.5,
/// ])
/// ```
public struct DictionaryFeatureProvider: FeatureProvider, Sendable {
    /// The values by name.
    public let dictionary: [String: FeatureValue]

    /// Creates a provider from values.
    public init(_ dictionary: [String: FeatureValue]) { self.dictionary = dictionary }

    /// Creates a provider from tensors.
    public init(tensors: [String: Tensor]) { self.dictionary = tensors.mapValues(FeatureValue.tensor) }

    /// Creates a provider from values of any kind a feature can hold, as Core ML's does:
    /// ``FeatureValue``, ``MultiArray``, ``Tensor``, ``ShapedArray``, `String`, integers, floating
    /// point numbers, `NSNumber`, ``FeatureSequence`` and `[String: NSNumber]` / `[Int: NSNumber]`.
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` naming the feature whose value is of none of
    ///   these types.
    public init(dictionary: [String: Any]) throws(ModelError) {
        var values: [String: FeatureValue] = [:]
        for (name, value) in dictionary {
            guard let feature = try DictionaryFeatureProvider.featureValue(of: value) else {
                throw ModelError(
                    .invalidInput, "feature '\(name)': a value of type \(type(of: value)) cannot be a feature value")
            }
            values[name] = feature
        }
        self.dictionary = values
    }

    /// The feature value of `value`, or `nil` for a type no feature holds.
    static func featureValue(of value: Any) throws(ModelError) -> FeatureValue? {
        switch value {
        case let value as FeatureValue: return value
        case let value as MultiArray: return .multiArray(value)
        case let value as Tensor: return .tensor(value)
        case let value as any ShapedArrayTensorConvertible: return .tensor(value.tensor)
        case let value as String: return .string(value)
        case let value as Int: return .int64(Int64(value))
        case let value as Int64: return .int64(value)
        case let value as Int32: return .int64(Int64(value))
        case let value as Double: return .double(value)
        case let value as Float: return .double(Double(value))
        case let value as NSNumber: return .double(value.doubleValue)
        case let value as FeatureSequence: return .sequence(value)
        case let value as [String: NSNumber]: return .stringDictionary(value.mapValues(\.doubleValue))
        case let value as [Int: NSNumber]:
            return .int64Dictionary(
                Dictionary(uniqueKeysWithValues: value.map { (Int64($0.key), $0.value.doubleValue) }))
        case let value as [AnyHashable: NSNumber]: return try FeatureValue(dictionary: value)
        default: return nil
        }
    }

    /// The dictionary's keys.
    public var featureNames: Set<String> { Set(dictionary.keys) }

    /// The value stored under the name.
    public func featureValue(for featureName: String) -> FeatureValue? { dictionary[featureName] }

    /// The value stored under the name.
    public subscript(featureName: String) -> FeatureValue? { dictionary[featureName] }
}

/// A shaped array of any scalar type, for providers built from untyped values.
protocol ShapedArrayTensorConvertible {
    /// A tensor over the array's scalars.
    var tensor: Tensor { get }
}

extension ShapedArray: ShapedArrayTensorConvertible {
    var tensor: Tensor { Tensor(self) }
}

/// A provider that computes each value the first time it is asked for, then keeps it.
///
/// ```swift
/// let output = LazyFeatureProvider(["embedding": { .tensor(expensiveGraph()) }])
/// ```
public final class LazyFeatureProvider: FeatureProvider, Sendable {
    private let producers: [String: @Sendable () -> FeatureValue]
    private let computed = Guarded<[String: FeatureValue]>([:])

    /// Creates a provider from one closure per feature.
    public init(_ producers: [String: @Sendable () -> FeatureValue]) { self.producers = producers }

    /// The names of the closures.
    public var featureNames: Set<String> { Set(producers.keys) }

    /// The value, computed by its closure on the first request.
    public func featureValue(for featureName: String) -> FeatureValue? {
        if let value = computed.withLock({ $0[featureName] }) { return value }
        guard let producer = producers[featureName] else { return nil }
        let value = producer()
        return computed.withLock { stored in
            if let existing = stored[featureName] { return existing }
            stored[featureName] = value
            return value
        }
    }

    /// The names of the features computed so far.
    public var computedFeatureNames: Set<String> { computed.withLock { Set($0.keys) } }
}
