import Foundation

/// A collection of feature providers, one per prediction, like Core ML's `MLBatchProvider`.
public protocol BatchProvider {
    /// The number of providers.
    var count: Int { get }
    /// The provider at `index` (`0..<count`).
    func features(at index: Int) -> any FeatureProvider
}

/// A batch held as an array of providers, like Core ML's `MLArrayBatchProvider`.
///
/// ```swift
/// let batch = try ArrayBatchProvider(array: sentences.map { ids in
///     try DictionaryFeatureProvider(dictionary: ["input_ids": FeatureValue(multiArray: ids)])
/// })
/// let outputs = try model.predictions(from: batch)
/// ```
public struct ArrayBatchProvider: BatchProvider {
    /// The providers.
    public let array: [any FeatureProvider]

    /// A batch of these providers.
    public init(array: [any FeatureProvider]) { self.array = array }

    /// A batch from columns: each feature name maps to one value per provider (values of any type
    /// ``DictionaryFeatureProvider/init(dictionary:)`` takes).
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` when the columns differ in length or a value
    ///   cannot be a feature value.
    public init(dictionary: [String: [Any]]) throws(ModelError) {
        let lengths = Set(dictionary.values.map(\.count))
        guard lengths.count <= 1 else {
            let described = dictionary.map { "\($0.key): \($0.value.count)" }.sorted().joined(separator: ", ")
            throw ModelError(.invalidInput, "a batch's columns must have one length, given \(described)")
        }
        let count = lengths.first ?? 0
        var providers: [any FeatureProvider] = []
        for index in 0..<count {
            var row: [String: Any] = [:]
            for (name, column) in dictionary { row[name] = column[index] }
            providers.append(try DictionaryFeatureProvider(dictionary: row))
        }
        array = providers
    }

    /// The number of providers.
    public var count: Int { array.count }

    /// The provider at `index`; an index out of range gives an empty provider.
    public func features(at index: Int) -> any FeatureProvider {
        array.indices.contains(index) ? array[index] : DictionaryFeatureProvider([:])
    }
}
