import Foundation

/// A model that turns input features into output features, like Core ML's `MLModel`.
public protocol Model: Sendable {
    /// The names of the input features the model reads.
    var inputFeatureNames: Set<String> { get }
    /// The names of the output features the model gives.
    var outputFeatureNames: Set<String> { get }
    /// Predicts the outputs for one input.
    func prediction(from input: any FeatureProvider) async throws -> any FeatureProvider
    /// Predicts the outputs for several inputs, in order; a model may batch them.
    func predictions(from inputs: [any FeatureProvider]) async throws -> [any FeatureProvider]
}

extension Model {
    /// One ``prediction(from:)`` after another.
    public func predictions(from inputs: [any FeatureProvider]) async throws -> [any FeatureProvider] {
        var outputs: [any FeatureProvider] = []
        for input in inputs { outputs.append(try await prediction(from: input)) }
        return outputs
    }
}

/// The error a ``Model`` throws for input features it cannot use.
public struct ModelInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The feature at fault.
    public let featureName: String
    /// What is wrong with it.
    public let message: String

    /// Creates an error.
    public init(featureName: String, message: String) {
        self.featureName = featureName
        self.message = message
    }

    /// `feature 'text': message`.
    public var description: String { "feature '\(featureName)': \(message)" }
}

/// Loads each model once and shares it across tasks, like a Core ML model cache.
///
/// Concurrent requests for the same model wait for one load; a failed load is not kept, so a
/// later request tries again.
///
/// ```swift
/// let embedder = try await ModelCache.shared.model(at: folder) { try SentenceEmbedder(folder: $0) }
/// ```
public actor ModelCache {
    /// A process-wide cache.
    public static let shared = ModelCache()

    private var entries: [String: Task<any Model, any Error>] = [:]
    /// How many loads the cache has started, for diagnostics and tests.
    public private(set) var loadCount = 0

    /// Creates an empty cache.
    public init() {}

    /// The model at `url`, loaded by `loader` on the first request and shared afterwards.
    ///
    /// Throws what `loader` throws, or ``ModelInputError`` when the cached model at `url` is not an `M`.
    public func model<M: Model>(at url: URL, loader: @escaping @Sendable (URL) async throws -> M) async throws -> M {
        let key = "\(M.self)|\(url.standardizedFileURL.path)"
        let task: Task<any Model, any Error>
        if let existing = entries[key] {
            task = existing
        } else {
            task = Task { try await loader(url) }
            entries[key] = task
            loadCount += 1
        }
        do {
            guard let model = try await task.value as? M else {
                throw ModelInputError(featureName: url.path, message: "the cached model is not a \(M.self)")
            }
            return model
        } catch {
            if entries[key] == task { entries[key] = nil }
            throw error
        }
    }

    /// Forgets every model (models still in use stay alive until released).
    public func removeAll() { entries.removeAll() }
}
