import Foundation

/// The state a stateful model carries from one prediction to the next (a decoder's key/value
/// cache, an audio model's context), like Core ML's `MLState`.
///
/// ```swift
/// let state = model.makeState()
/// for token in prompt {
///     let output = try await model.prediction(from: step(token), using: state)
/// }
/// ```
///
/// Each independent sequence needs its own state; a new state starts over. A state is updated by
/// each prediction that uses it, so predictions with one state must not overlap (the engine
/// serialises them: a second waits for the first).
public final class State: Sendable {
    /// The state features, named by the model input each one feeds.
    public let descriptions: [FeatureDescription]
    /// The current values; a name not here has not been written yet (it starts empty).
    private let values = Guarded<[String: Tensor]>([:])
    /// Held while a prediction reads and updates the state.
    let stepLock = Guarded<Void>(())

    /// Sizes the state shares with the model's ordinary inputs (`batch`): 1 in a state not yet
    /// written, until a prediction fixes them.
    let sharedSymbols: Set<String>

    /// A state of these features, with nothing written yet; `sharedSymbols` names the sizes it
    /// shares with the model's ordinary inputs.
    public init(descriptions: [FeatureDescription], sharedSymbols: Set<String> = []) {
        self.descriptions = descriptions
        self.sharedSymbols = sharedSymbols
    }

    /// The names of the state features.
    public var stateNames: [String] { descriptions.map(\.name) }

    /// The current value of a state feature, or `nil` before the first prediction writes it.
    ///
    /// The state keeps a cache where the last prediction left it: in a buffer with room to grow,
    /// on the device that computed it. This tensor is a row-major host copy of it, made when
    /// asked for.
    public func tensor(for stateName: String) -> Tensor? {
        guard let held = held(stateName) else { return nil }
        guard let value = held.node?.storedResult else { return held }
        if value.memorySpace == .host, value.layout.isRowMajor(shape: value.shape) { return held }
        let copy = Tensor.record(.contiguous, [held], at: nil)
        // Computed now, so the copy is host memory like any evaluated tensor's (a failure stays
        // for the first read to report).
        try? Tensor.evaluateNow([copy])
        return copy
    }

    /// The value as the state holds it (possibly a prefix of a growable buffer, possibly in a
    /// device's memory), for the model to bind.
    func held(_ stateName: String) -> Tensor? { values.withLock { $0[stateName] } }

    /// Replaces the value of a state feature.
    package func store(_ tensor: Tensor, for stateName: String) { values.withLock { $0[stateName] = tensor } }

    /// The number of elements the state holds across its features.
    public var scalarCount: Int { values.withLock { $0.values.reduce(0) { $0 + $1.scalarCount } } }

    /// Calls `handle` with a state feature's buffer as a multi-array (Core ML's
    /// `withMultiArray(for:_:)`): reads share the buffer; writes through the array become the
    /// state's new value. A feature not yet written is an empty array of its declared shape
    /// (sizes shared with ordinary inputs 1, its own open sizes 0). A name that is not a state feature gives `handle` an empty `float32` array
    /// of shape `[0]`, and nothing is stored.
    public func withMultiArray(for stateName: String, _ handle: (MultiArray) throws -> Void) rethrows {
        guard let description = descriptions.first(where: { $0.name == stateName }),
            let array = try? MultiArray(
                tensor(for: stateName)
                    ?? State.initialValue(
                        of: description, sizes: Dictionary(uniqueKeysWithValues: sharedSymbols.map { ($0, 1) })))
        else {
            if let empty = try? MultiArray(shape: [0], dataType: .float32) { try handle(empty) }
            return
        }
        let before = array.readStorage
        try handle(array)
        if array.readStorage !== before { store(Tensor(array), for: stateName) }
    }

    /// The value a state feature starts from: its declared shape with each size named in `sizes`
    /// taken from there, other open sizes 0 (an empty cache), of the declared type.
    static func initialValue(of description: FeatureDescription, sizes: [String: Int]) -> Tensor {
        guard let constraint = description.multiArrayConstraint else {
            return Tensor(
                failed: TensorError(
                    .invalidArgument, op: "state", message: "state '\(description.name)' is not a tensor"))
        }
        let shape = (constraint.shape ?? []).map { dimension -> Int in
            switch dimension {
            case .fixed(let size): size
            case .symbolic(let name): sizes[name] ?? 0
            case .unknown: 0
            }
        }
        return Tensor(zerosOf: constraint.dataType, shape: shape)
    }
}
