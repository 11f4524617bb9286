import Synchronization

/// A named input or output of a ``Model``: a tensor, or text for models that tokenize.
public enum FeatureValue: Sendable {
    /// A tensor (lazy: it runs when materialized).
    case tensor(Tensor)
    /// A string.
    case string(String)

    /// The tensor, if the value is one.
    public var tensorValue: Tensor? {
        switch self {
        case .tensor(let tensor): tensor
        case .string: nil
        }
    }

    /// The string, if the value is one.
    public var stringValue: String? {
        switch self {
        case .tensor: nil
        case .string(let string): string
        }
    }
}

/// A source of named feature values, like Core ML's `MLFeatureProvider`.
///
/// Values are produced when asked for: a provider may compute them on the first request, and the
/// tensors it returns are themselves lazy until materialized.
public protocol FeatureProvider: Sendable {
    /// The names of the features the provider can give.
    var featureNames: Set<String> { get }
    /// The value of a feature, or `nil` if the provider has none of that name.
    func featureValue(for featureName: String) -> FeatureValue?
}

/// A provider backed by a dictionary of values, like Core ML's `MLDictionaryFeatureProvider`.
///
/// ```swift
/// let input = DictionaryFeatureProvider(["text": .string("A man is eating food.")])
/// ```
public struct DictionaryFeatureProvider: FeatureProvider {
    /// The values by name.
    public let dictionary: [String: FeatureValue]

    /// Creates a provider from values.
    public init(_ dictionary: [String: FeatureValue]) { self.dictionary = dictionary }

    /// Creates a provider from tensors.
    public init(tensors: [String: Tensor]) { self.dictionary = tensors.mapValues(FeatureValue.tensor) }

    /// The dictionary's keys.
    public var featureNames: Set<String> { Set(dictionary.keys) }

    /// The value stored under the name.
    public func featureValue(for featureName: String) -> FeatureValue? { dictionary[featureName] }
}

/// A provider that computes each value the first time it is asked for, then keeps it.
///
/// ```swift
/// let output = LazyFeatureProvider(["embedding": { .tensor(expensiveGraph()) }])
/// ```
public final class LazyFeatureProvider: FeatureProvider {
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
