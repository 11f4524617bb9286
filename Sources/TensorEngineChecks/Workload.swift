import TensorEngine
/// What a workload's ceiling is measured against in the same run.
package enum ReferenceKernel: Sendable, Hashable {
    /// A bare `cblas_sgemm` on buffers of the same shapes (`batch` calls of m×k·k×n).
    case sgemm(m: Int, n: Int, k: Int, batch: Int)
    /// A bare `cblas_sgemv`: 1×k · k×n.
    case sgemv(k: Int, n: Int)
    /// A memory triad `a = b + s·c` moving the same number of bytes as the workload must.
    case triad(bytes: Int)
    /// No natural reference (composite graphs, dispatch overhead).
    case none
}

/// A named benchmark workload: inputs made once, and a graph built on them per run; or a model
/// loaded once and run end to end per run.
///
/// One descriptor serves `tensorbench` (timing), `tensorplan` (plan dumps) and the tests, so the
/// workload measured is the workload planned and checked.
package struct Workload: Sendable {
    /// What a run of the workload does.
    package enum Body: Sendable {
        /// `makeInputs` creates the inputs (constants) once; `graph` builds the graph on them per
        /// run and returns the tensors to materialize.
        case graph(makeInputs: @Sendable () -> [Tensor], graph: @Sendable ([Tensor]) -> [Tensor])
        /// Strings in, normalized embeddings out, through ``SentenceEmbedder/embed(_:policy:)``
        /// (tokenizing, batching and pooling included); the model is loaded once, untimed.
        case sentenceEmbedding(EmbeddingWorkload)
        /// Token ids in, every output read back, through ``ONNXModel/prediction(from:policy:)``;
        /// the model is loaded and the sentences tokenized once, untimed.
        case onnxModel(ONNXWorkload)
    }

    package let name: String
    package let summary: String
    /// Whether the quick suite runs it.
    package let quick: Bool
    package let reference: ReferenceKernel
    /// The bytes the workload must move at least (inputs read once, outputs written once).
    package let essentialBytes: Int
    /// Floating-point operations of the workload's arithmetic.
    package let flops: Double
    /// What a run does.
    package let body: Body
    /// Whether a run reads its results back (`shapedArray(of:)`), as a user does; `false` only
    /// for rows that time evaluation alone, beside a row that reads back.
    package var readsBack = true
}

extension Workload {
    /// A graph workload.
    init(name: String, summary: String, quick: Bool, reference: ReferenceKernel, essentialBytes: Int, flops: Double,
         makeInputs: @escaping @Sendable () -> [Tensor], graph: @escaping @Sendable ([Tensor]) -> [Tensor]) {
        self.init(name: name, summary: summary, quick: quick, reference: reference, essentialBytes: essentialBytes, flops: flops,
                  body: .graph(makeInputs: makeInputs, graph: graph))
    }

    /// A function that builds the workload's graph, ready to plan or run: a graph workload's
    /// inputs made and materialized, an embedding workload's model loaded and its sentences
    /// tokenized into one batch (the graph is then the encoder's on that batch).
    ///
    /// - Throws: ``EmbeddingWorkload/ModelMissing`` when the model folder is absent, or the
    ///   error of materializing the inputs or loading the model.
    package func preparedGraph() async throws -> @Sendable () -> [Tensor] {
        switch body {
        case .graph(let makeInputs, let graph):
            let inputs = makeInputs()
            try await Tensor.evaluate(inputs)
            return { graph(inputs) }
        case .sentenceEmbedding(let workload):
            let embedder = try workload.loadEmbedder()
            let batch = embedder.tokenizer.encodeBatch(workload.sentences)
            return { [embedder.embeddings(of: batch)] }
        case .onnxModel(let workload):
            let (model, inputs) = try workload.load()
            return { (try? model.outputs(for: inputs)).map { Array($0.values) } ?? [] }
        }
    }

    static func random(_ shape: [Int], seed: Int, scale: Float = 1) -> Tensor {
        Tensor(randomNormal: shape, standardDeviation: scale, seed: UInt64(seed))
    }

    static func gemm(_ size: Int, quick: Bool) -> Workload {
        Workload(
            name: "gemm-\(size)", summary: "\(size)×\(size) · \(size)×\(size) float32 matrix product", quick: quick,
            reference: .sgemm(m: size, n: size, k: size, batch: 1), essentialBytes: 3 * size * size * 4,
            flops: 2 * Double(size * size * size),
            makeInputs: { [random([size, size], seed: 1), random([size, size], seed: 2)] },
            graph: { [$0[0].matmul($0[1])] })
    }

    static func eltwise(_ count: Int, label: String, quick: Bool, readsBack: Bool = true) -> Workload {
        var workload = Workload(
            name: "eltwise-\(label)" + (readsBack ? "" : "-evaluate"),
            summary: "relu(a*b + c) * 0.5 + tanh(a) over \(label) floats" + (readsBack ? "" : ", not read back"),
            quick: quick, reference: .triad(bytes: 4 * count * 4), essentialBytes: 4 * count * 4,
            flops: Double(count) * 21,
            makeInputs: { [random([count], seed: 1), random([count], seed: 2), random([count], seed: 3)] },
            graph: { x in [(x[0] * x[1] + x[2]).relu() * 0.5 + x[0].tanh()] })
        workload.readsBack = readsBack
        return workload
    }

    /// Reading back a result already evaluated: what `shapedArray(of:)` costs alone.
    static func readBack(_ count: Int, label: String) -> Workload {
        Workload(
            name: "readback-\(label)", summary: "shapedArray(of:) of an evaluated \(label)-float result",
            quick: true, reference: .none, essentialBytes: 0, flops: 0,
            makeInputs: { [random([count], seed: 1)] }, graph: { x in [x[0]] })
    }

    static func lineWise(_ name: String, _ summary: String, shape: [Int], quick: Bool, _ op: @escaping @Sendable (Tensor) -> Tensor) -> Workload {
        let count = shape.reduce(1, *)
        return Workload(
            name: name, summary: summary, quick: quick, reference: .triad(bytes: 2 * count * 4), essentialBytes: 2 * count * 4,
            flops: Double(count) * 10, makeInputs: { [random(shape, seed: 1)] }, graph: { [op($0[0])] })
    }

    /// One encoder layer at MiniLM size: 12 heads of 32 over 128 tokens, FFN 1536, GELU.
    package static var bertLayer: Workload {
        let (tokens, hidden, heads, ffn) = (128, 384, 12, 1536)
        let head = hidden / heads
        let flops = 2.0 * Double(tokens * hidden * hidden * 4 + tokens * hidden * ffn * 2 + heads * tokens * tokens * head * 2)
        return Workload(
            name: "bert-layer", summary: "one encoder layer: 128 tokens, hidden 384, 12 heads, FFN 1536, GELU, two layer norms",
            quick: true, reference: .none, essentialBytes: (hidden * hidden * 4 + hidden * ffn * 2 + tokens * hidden * 2) * 4, flops: flops,
            makeInputs: {
                [random([tokens, hidden], seed: 1)]
                    + (0..<4).map { random([hidden, hidden], seed: 10 + $0, scale: 0.05) }
                    + [random([hidden, ffn], seed: 20, scale: 0.05), random([ffn, hidden], seed: 21, scale: 0.05)]
                    + [Tensor(ones: [hidden]), Tensor(zeros: [hidden])]
            },
            graph: { x in
                let (input, wq, wk, wv, wo, w1, w2, gamma, beta) = (x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8])
                func split(_ t: Tensor) -> Tensor { t.reshaped(to: [tokens, heads, head]).transposed(permutation: 1, 0, 2) }
                let q = split(input.matmul(wq))
                let k = split(input.matmul(wk))
                let v = split(input.matmul(wv))
                let context = Tensor.scaledDotProductAttention(query: q, key: k, value: v)
                    .transposed(permutation: 1, 0, 2).reshaped(to: [tokens, hidden])
                let attended = (input + context.matmul(wo)).layerNorm(alongAxis: -1, epsilon: 1e-12, scale: gamma, bias: beta)
                let output = attended + attended.matmul(w1).gelu().matmul(w2)
                return [output.layerNorm(alongAxis: -1, epsilon: 1e-12, scale: gamma, bias: beta)]
            })
    }

    /// Every workload, in suite order.
    package static let all: [Workload] = [
        gemm(64, quick: true), gemm(256, quick: true), gemm(512, quick: true), gemm(1024, quick: true), gemm(2048, quick: false),
        Workload(
            name: "gemv-768x3072", summary: "1×768 · 768×3072 (matrix·vector)", quick: true, reference: .sgemv(k: 768, n: 3072),
            essentialBytes: (768 + 768 * 3072 + 3072) * 4, flops: 2 * 768 * 3072,
            makeInputs: { [random([1, 768], seed: 1), random([768, 3072], seed: 2)] }, graph: { [$0[0].matmul($0[1])] }),
        Workload(
            name: "bmm-12x128x64", summary: "12 × (128×64 · 64×128) batched product", quick: true,
            reference: .sgemm(m: 128, n: 128, k: 64, batch: 12), essentialBytes: 12 * (128 * 64 * 2 + 128 * 128) * 4,
            flops: 2 * 12 * 128 * 128 * 64,
            makeInputs: { [random([12, 128, 64], seed: 1), random([12, 64, 128], seed: 2)] }, graph: { [$0[0].matmul($0[1])] }),
        eltwise(1 << 20, label: "1m", quick: true),
        eltwise(1 << 24, label: "16m", quick: false),
        eltwise(1 << 24, label: "16m", quick: false, readsBack: false),
        readBack(1 << 24, label: "16m"),
        lineWise("softmax-attn", "softmax over the last axis of [128, 128, 128]", shape: [128, 128, 128], quick: true) { $0.softmax(alongAxis: -1) },
        lineWise("softmax-vocab", "softmax over the last axis of [64, 30522]", shape: [64, 30522], quick: true) { $0.softmax(alongAxis: -1) },
        Workload(
            name: "sum-rows", summary: "sum over the last axis of [4096, 4096]", quick: false, reference: .triad(bytes: 4096 * 4097 * 4),
            essentialBytes: 4096 * 4097 * 4, flops: 4096 * 4096, makeInputs: { [random([4096, 4096], seed: 1)] },
            graph: { [$0[0].sum(alongAxes: -1)] }),
        Workload(
            name: "mean-all", summary: "mean of 16M floats", quick: false, reference: .triad(bytes: (1 << 24) * 4),
            essentialBytes: (1 << 24) * 4, flops: Double(1 << 24), makeInputs: { [random([1 << 24], seed: 1)] },
            graph: { [$0[0].mean()] }),
        lineWise("layernorm-384", "layer norm over the last axis of [128, 384]", shape: [128, 384], quick: true) { $0.layerNorm(alongAxis: -1) },
        lineWise("layernorm-1024", "layer norm over the last axis of [4096, 1024]", shape: [4096, 1024], quick: false) { $0.layerNorm(alongAxis: -1) },
        Workload(
            name: "transpose-4096", summary: "[4096, 4096] transposed and made contiguous", quick: false,
            reference: .triad(bytes: 2 * 4096 * 4096 * 4), essentialBytes: 2 * 4096 * 4096 * 4, flops: 0,
            makeInputs: { [random([4096, 4096], seed: 1)] }, graph: { [$0[0].transposed().reshaped(to: [4096 * 4096])] }),
        Workload(
            name: "mlp", summary: "x[64,784] → Linear 784×512 → relu → Linear 512×10 → softmax", quick: true, reference: .none,
            essentialBytes: (64 * 784 + 784 * 512 + 512 * 10 + 64 * 10) * 4, flops: 2 * 64 * (784 * 512 + 512 * 10),
            makeInputs: { [random([64, 784], seed: 1), random([784, 512], seed: 2, scale: 0.05), random([512], seed: 3, scale: 0.05), random([512, 10], seed: 4, scale: 0.05), random([10], seed: 5, scale: 0.05)] },
            graph: { x in [(x[0].matmul(x[1]) + x[2]).relu().matmul(x[3]).softmax(alongAxis: -1)] }),
        Workload(
            name: "attention", summary: "softmax(Q·Kᵀ/√32)·V with Q, K, V of [12, 128, 32]", quick: true, reference: .none,
            essentialBytes: 4 * 12 * 128 * 32 * 4, flops: 2 * 2 * 12 * 128 * 128 * 32,
            makeInputs: { (1...3).map { random([12, 128, 32], seed: $0) } },
            graph: { x in [(x[0].matmul(x[1].transposed(permutation: 0, 2, 1)) / Float(32).squareRoot()).softmax(alongAxis: -1).matmul(x[2])] }),
        bertLayer,
        miniLM(.single, quick: true),
        miniLM(.batch, quick: false),
        onnxMiniLM(.miniLML3, .single, quick: true),
        onnxMiniLM(.miniLML3, .batch, quick: false),
        onnxModelBatch(.stacked),
        onnxModelBatch(.oneByOne),
        decoderStep(prefix: 8),
        decoderStep(prefix: 512),
        decoderGeneration(prefix: 8),
        decoderGeneration(prefix: 512),
        onnxMiniLM(.miniLML6, .single, quick: false),
        onnxMiniLM(.miniLML6, .batch, quick: false),
    ] + convolutions + [
        Workload(
            name: "dispatch-1000", summary: "1000 tiny ops on scalars: the per-op overhead", quick: true, reference: .none,
            essentialBytes: 8, flops: 1000, makeInputs: { [Tensor(shape: [], scalars: [Float(0.5)])] },
            graph: { x in
                var t = x[0]
                for step in 0..<1000 { t = step % 2 == 0 ? t * 1.0001 : t + 0.0001 }
                return [t]
            }),
        Workload(
            name: "dispatch-1000-vector", summary: "1000 tiny ops on [1]-shaped tensors: the per-op overhead",
            quick: true, reference: .none, essentialBytes: 8, flops: 1000,
            makeInputs: { [Tensor(shape: [1], scalars: [Float(0.5)])] },
            graph: { x in
                var t = x[0]
                for step in 0..<1000 { t = step % 2 == 0 ? t * 1.0001 : t + 0.0001 }
                return [t]
            }),
        Workload(
            name: "onnx-dispatch-1000",
            summary: "dispatch-1000's graph as an ONNX model (bench/models/dispatch-1000.onnx), run prepared",
            quick: false, reference: .none, essentialBytes: 8, flops: 1000,
            body: .onnxModel(ONNXWorkload(export: .bench("dispatch-1000"), inputs: .normal))),
    ]

    /// The workload with a name, if any.
    package static func named(_ name: String) -> Workload? { all.first { $0.name == name } }
}
