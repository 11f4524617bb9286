import Foundation

/// Loads each model once and shares it across tasks, like the model-caching actor Core ML apps
/// write.
///
/// Concurrent requests for the same model wait for one load; a failed load is not kept, so a
/// later request tries again.
///
/// ```swift
/// let model = try await ModelCache.shared.model(at: url, configuration: config)
/// ```
public actor ModelCache {
    /// A process-wide cache.
    public static let shared = ModelCache()

    private var entries: [String: Task<any Sendable, any Error>] = [:]
    /// How many loads the cache has started, for diagnostics and tests.
    public private(set) var loadCount = 0

    /// Creates an empty cache.
    public init() {}

    /// The model at `url` under `configuration`'s compute units, loaded with ``Model/load(contentsOf:configuration:)``
    /// on the first request and shared afterwards.
    public func model(at url: URL, configuration: ModelConfiguration = ModelConfiguration()) async throws -> Model {
        let copied = configuration.copy()
        return try await model(at: url, variant: copied.description) { url in
            try await Model.load(contentsOf: url, configuration: copied)
        }
    }

    /// The model at `url`, loaded by `loader` on the first request and shared afterwards.
    ///
    /// Throws what `loader` throws, or ``ModelInputError`` when the cached model at `url` is not an `M`.
    public func model<M: Sendable>(
        at url: URL, variant: String = "", loader: @escaping @Sendable (URL) async throws -> M
    ) async throws -> M {
        let key = "\(M.self)|\(variant)|\(url.standardizedFileURL.path)"
        let task: Task<any Sendable, any Error>
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

    /// Forgets the models loaded from `url` (models still in use stay alive until released).
    public func remove(at url: URL) {
        let path = url.standardizedFileURL.path
        entries = entries.filter { !$0.key.hasSuffix("|\(path)") }
    }

    /// Forgets every model (models still in use stay alive until released).
    public func removeAll() { entries.removeAll() }
}
