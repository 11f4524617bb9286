import TensorEngine

/// Greedy decoding on a stateful model for the decoder rows, as a user's loop runs it: each step
/// feeds the last step's most likely token and reads its logits back.
///
/// A one-token row continues one generation from run to run, so every step extends the cache by
/// one (a new cache length, as in a real generation) and costs what a step costs at that length;
/// after ``window`` steps the generation starts over from the prefix's cache (one copy of it,
/// spread over the window). A longer row generates its tokens from the prefix's cache each run.
final class DecoderSession: @unchecked Sendable {
    /// How many steps a one-token row takes before starting over from the prefix.
    static let window = 200

    private let model: Model
    private let cache: [String: Tensor]
    private let first: DictionaryFeatureProvider
    private let options = PredictionOptions()
    private var state: State
    private var input: DictionaryFeatureProvider
    private var steps = 0

    init(model: Model, cache: [String: Tensor], first: DictionaryFeatureProvider, policy: ComputePolicy) {
        self.model = model
        self.cache = cache
        self.first = first
        options.computePolicy = policy
        state = model.makeState()
        input = first
        restart()
    }

    /// Starts over from the prefix's cache.
    private func restart() {
        state = model.makeState()
        for (name, tensor) in cache { state.store(tensor, for: name) }
        input = first
        steps = 0
    }

    /// One run of a row: one step of the continuing generation, or `tokens` steps from the prefix.
    func run(tokens: Int) async throws {
        if tokens > 1 || steps == Self.window { restart() }
        for _ in 0..<tokens { try await step() }
    }

    private func step() async throws {
        let output = try await model.prediction(from: input, using: state, options: options)
        steps += 1
        guard let logits = output.featureValue(for: "logits")?.tensorValue else { return }
        let scalars = try await logits.shapedArray(of: Float.self).scalars
        let last = scalars.suffix(logits.shape.last ?? 1)
        let next = last.indices.max { last[$0] < last[$1] }.map { $0 - last.startIndex } ?? 0
        input = DictionaryFeatureProvider(tensors: ["input_ids": Tensor([Int32(next)]).reshaped(to: [1, 1])])
    }
}
