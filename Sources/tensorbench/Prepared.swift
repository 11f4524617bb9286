import TensorEngine
import TensorEngineChecks

/// A workload made ready to measure, once per workload and untimed: a graph workload's inputs
/// made and materialized, an embedding workload's model loaded.
enum Prepared {
    /// Inputs made once; each run builds the graph on them.
    case graph(inputs: [Tensor], graph: @Sendable ([Tensor]) -> [Tensor])
    /// A loaded embedder; each run embeds the sentences (strings in, vectors out).
    case embedding(SentenceEmbedder, sentences: [String])
    /// A loaded ONNX model and its inputs; each run predicts and reads every output back.
    case onnx(ONNXModel, inputs: [String: Tensor])
    /// A loaded model and one provider per sentence; each run predicts them all (stacked or one
    /// by one) and reads every output back.
    case modelBatch(Model, providers: [DictionaryFeatureProvider], batching: ONNXWorkload.Batching)
    /// A stateful model, the cache a prefix left (copied into a new state per run), the first
    /// step and how many greedy tokens a run generates.
    case decoderStep(Model, cache: [String: Tensor], step: DictionaryFeatureProvider, tokens: Int)
    /// Nothing can run (the reason is returned beside it).
    case unavailable

    /// Why a workload's engine rows are skipped.
    struct Failure {
        let reason: String
        let detail: String
    }

    /// Prepares a workload; on failure, `.unavailable` and the reason its rows are skipped. A
    /// missing model also prints one line, so a quick suite on a machine without it says why.
    static func make(_ workload: Workload) async -> (Prepared, Failure?) {
        switch workload.body {
        case .graph(let makeInputs, let graph):
            let inputs = makeInputs()
            do {
                try await Tensor.evaluate(inputs)
            } catch {
                return (.graph(inputs: inputs, graph: graph), Failure(reason: "failed", detail: "\(error)"))
            }
            return (.graph(inputs: inputs, graph: graph), nil)
        case .sentenceEmbedding(let embedding):
            do {
                return (.embedding(try embedding.loadEmbedder(), sentences: embedding.sentences), nil)
            } catch let missing as EmbeddingWorkload.ModelMissing {
                Progress.note("tensorbench: skipping \(workload.name): \(missing)")
                return (.unavailable, Failure(reason: "no model", detail: missing.description))
            } catch {
                return (.unavailable, Failure(reason: "failed", detail: "\(error)"))
            }
        case .onnxModel(let onnx):
            do {
                let (model, inputs) = try onnx.load()
                if case .decoderStep(let prefix, let tokens) = onnx.inputs {
                    let wrapped = Model(implementation: model)
                    let state = wrapped.makeState()
                    let ids = Tensor((0..<prefix).map { Int32($0 % 50) }).reshaped(to: [1, prefix])
                    _ = try await wrapped.prediction(
                        from: DictionaryFeatureProvider(tensors: ["input_ids": ids]), using: state)
                    var cache: [String: Tensor] = [:]
                    for name in state.stateNames { cache[name] = state.tensor(for: name) }
                    let step = DictionaryFeatureProvider(tensors: ["input_ids": Tensor([Int32(7)]).reshaped(to: [1, 1])])
                    return (.decoderStep(wrapped, cache: cache, step: step, tokens: tokens), nil)
                }
                if let batching = onnx.batching {
                    let providers = try onnx.sentenceProviders(for: model)
                    return (.modelBatch(Model(implementation: model), providers: providers, batching: batching), nil)
                }
                return (.onnx(model, inputs: inputs), nil)
            } catch let missing as ONNXModelMissing {
                Progress.note("tensorbench: skipping \(workload.name): \(missing)")
                return (.unavailable, Failure(reason: "no model", detail: missing.description))
            } catch {
                return (.unavailable, Failure(reason: "failed", detail: "\(error)"))
            }
        }
    }

    /// The graph one run evaluates, for the planner's estimate: the encoder's graph on the
    /// tokenized sentences when they fit one batch; `nil` when there is no single graph.
    /// `prepared`: runs of the model run its kept plan again, without recording or planning.
    var planningGraph: (graph: () -> [Tensor], prepared: Bool)? {
        switch self {
        case .graph(let inputs, let graph):
            return ({ graph(inputs) }, false)
        case .embedding(let embedder, let sentences):
            guard sentences.count <= embedder.batchSize else { return nil }
            let batch = embedder.tokenizer.encodeBatch(sentences)
            return ({ [embedder.embeddings(of: batch)] }, false)
        case .onnx(let model, let inputs):
            return ({ (try? model.outputs(for: inputs)).map { Array($0.values) } ?? [] }, true)
        case .modelBatch, .decoderStep, .unavailable:
            return nil
        }
    }
}
