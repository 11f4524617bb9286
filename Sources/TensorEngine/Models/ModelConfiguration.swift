import Foundation

/// How a ``Model`` is loaded and run, like Core ML's `MLModelConfiguration`.
///
/// ```swift
/// let config = ModelConfiguration()
/// config.computeUnits = .cpuOnly
/// let model = try await Model.load(contentsOf: url, configuration: config)
/// ```
///
/// A model copies its configuration when it loads: changing the object afterwards does not change
/// a loaded model.
public final class ModelConfiguration: Sendable, CustomStringConvertible {
    private struct Settings: Sendable {
        var computeUnits: ComputeUnits = .all
        var computePolicy: ComputePolicy?
        var functionName: String?
        var optimizationHints = OptimizationHints()
        var statePairs: [String: String] = [:]
        var modelDisplayName: String?
    }

    private let settings: Guarded<Settings>

    /// A configuration with every compute unit, the main function and no extra state pairs.
    public init() { settings = Guarded(Settings()) }

    private init(_ copied: Settings) { settings = Guarded(copied) }

    /// A copy that later changes to this one do not affect.
    public func copy() -> ModelConfiguration { ModelConfiguration(settings.withLock { $0 }) }

    /// The processors the model may run on (`.all` by default).
    public var computeUnits: ComputeUnits {
        get { settings.withLock { $0.computeUnits } }
        set { settings.withLock { $0.computeUnits = newValue } }
    }

    /// A compute policy that overrides ``computeUnits`` (for example `.only(.naive)`, one backend).
    public var computePolicy: ComputePolicy? {
        get { settings.withLock { $0.computePolicy } }
        set { settings.withLock { $0.computePolicy = newValue } }
    }

    /// The function of a multi-function model to run; `nil` (or `"main"`) is the main graph, the
    /// only function an ONNX model has.
    public var functionName: String? {
        get { settings.withLock { $0.functionName } }
        set { settings.withLock { $0.functionName = newValue } }
    }

    /// Hints about how the model will be used.
    public var optimizationHints: OptimizationHints {
        get { settings.withLock { $0.optimizationHints } }
        set { settings.withLock { $0.optimizationHints = newValue } }
    }

    /// The name shown for the model in plans and errors; `nil` is the file's name.
    public var modelDisplayName: String? {
        get { settings.withLock { $0.modelDisplayName } }
        set { settings.withLock { $0.modelDisplayName = newValue } }
    }

    /// Extra state of an ONNX model: output name → the input it feeds at the next prediction.
    /// Hugging Face's `present.N.key` → `past_key_values.N.key` pairs are found without this.
    public var statePairs: [String: String] {
        get { settings.withLock { $0.statePairs } }
        set { settings.withLock { $0.statePairs = newValue } }
    }

    /// The policy the model runs under: ``computePolicy`` if set, else ``computeUnits``'.
    public var resolvedPolicy: ComputePolicy {
        settings.withLock { $0.computePolicy ?? ComputePolicy($0.computeUnits) }
    }

    /// `computeUnits: all, function: main`.
    public var description: String {
        settings.withLock { settings in
            var parts = ["computeUnits: \(settings.computeUnits)"]
            if let policy = settings.computePolicy { parts.append("policy: \(policy)") }
            parts.append("function: \(settings.functionName ?? "main")")
            parts.append("reshapeFrequency: \(settings.optimizationHints.reshapeFrequency)")
            if !settings.statePairs.isEmpty { parts.append("statePairs: \(settings.statePairs.count)") }
            return parts.joined(separator: ", ")
        }
    }
}

/// How a model's inputs will vary, like Core ML's `MLOptimizationHints`.
public struct OptimizationHints: Sendable, Hashable {
    /// How often the input shapes change between predictions.
    public enum ReshapeFrequency: Sendable, Hashable, CaseIterable {
        /// Shapes change often: the model keeps no prepared plan per shape (each prediction plans).
        case frequent
        /// Shapes repeat: the model keeps the prepared plan of each recent input shape, so a
        /// repeated shape neither rebuilds nor plans its graph.
        case infrequent
    }

    /// `.infrequent` by default.
    public var reshapeFrequency: ReshapeFrequency = .infrequent

    /// The default hints.
    public init() {}
}

/// Options for one prediction, like Core ML's `MLPredictionOptions`.
public final class PredictionOptions: Sendable {
    private let policyOverride = Guarded<ComputePolicy?>(nil)

    /// Options that change nothing.
    public init() {}

    /// Runs this prediction on the host backends only (Core ML's `usesCPUOnly`).
    public var usesCPUOnly: Bool {
        get { policyOverride.withLock { $0 == .cpuOnly } }
        set { policyOverride.withLock { $0 = newValue ? .cpuOnly : nil } }
    }

    /// A policy for this prediction, overriding the model's configuration.
    public var computePolicy: ComputePolicy? {
        get { policyOverride.withLock { $0 } }
        set { policyOverride.withLock { $0 = newValue } }
    }
}
