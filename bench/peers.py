#!/usr/bin/env python3
"""Run tensorbench's workloads in NumPy, PyTorch and onnxruntime, with tensorbench's statistics and JSON schema.

    python3 bench/peers.py --suite full --json bench/peers.json
    .build/release/tensorbench --from bench/full.json --compare bench/peers.json

Each framework runs only when it is installed. To install them in a virtual environment:

    python3 -m venv .venv && . .venv/bin/activate
    pip install numpy
    pip install torch --index-url https://download.pytorch.org/whl/cpu   # CPU-only wheel
    pip install sentence-transformers                                    # the minilm-* rows

The minilm-* workloads (all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh) run through
sentence-transformers' `encode` on PyTorch, as `torch` rows, when it and the model are present.
The onnx-* workloads run in onnxruntime only: onnx-minilm-* on the MiniLM exports, onnx-conv3x3-64,
onnx-conv1x1-256, onnx-depthwise3x3-32, onnx-resnet-block-64 and onnx-dispatch-1000 on bench/models/*.onnx
(written by bench/make_models.py), onnx-light-* on ONNX's light test models (scripts/fetch-onnx-tests.sh).
The kernel workloads (gemm-*, softmax-*, attention, bert-layer, ...) run in onnxruntime too, as ONNX
graphs built here in memory (`onnx_graph`: the same ops, on the NumPy rows' inputs), so every
row but the sentence-transformers ones has an onnxruntime figure.

The workloads mirror Sources/TensorEngineChecks/Workload.swift (names, shapes, quick flags,
FLOP and byte counts); change both together. Timing follows tensorbench: the first run apart,
warm-up runs until a tenth of the budget (at most 3), then runs until the budget is spent
(at least 5, or 2 when one run takes over half the budget; at most --iterations);
nearest-rank percentiles; p99 only with 100 samples or more. Inputs are made once per
workload; each timed run computes the whole graph from them.
"""

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time

SCHEMA_VERSION = 1
MAX_WARM_UP_RUNS = 3
MIN_ITERATIONS = 5
MIN_ITERATIONS_SLOW = 2
DEFAULT_BUDGET = {"quick": 0.25, "full": 1.0}


def spec(name, quick, flops, essential_bytes, bandwidth_bound):
    return {"name": name, "quick": quick, "flops": float(flops), "bytes": int(essential_bytes), "bandwidth": bandwidth_bound}


def gemm_spec(n, quick):
    return spec(f"gemm-{n}", quick, 2 * n ** 3, 3 * n * n * 4, False)


TOKENS, HIDDEN, HEADS, FFN = 128, 384, 12, 1536
HEAD = HIDDEN // HEADS

# Name, quick flag, FLOPs and essential bytes: the same figures as Workload.swift.
WORKLOADS = [
    gemm_spec(64, True), gemm_spec(256, True), gemm_spec(512, True), gemm_spec(1024, True), gemm_spec(2048, False),
    spec("gemv-768x3072", True, 2 * 768 * 3072, (768 + 768 * 3072 + 3072) * 4, False),
    spec("bmm-12x128x64", True, 2 * 12 * 128 * 128 * 64, 12 * (128 * 64 * 2 + 128 * 128) * 4, False),
    spec("eltwise-1m", True, (1 << 20) * 21, 4 * (1 << 20) * 4, True),
    spec("eltwise-16m", False, (1 << 24) * 21, 4 * (1 << 24) * 4, True),
    spec("softmax-attn", True, 128 ** 3 * 10, 2 * 128 ** 3 * 4, True),
    spec("softmax-vocab", True, 64 * 30522 * 10, 2 * 64 * 30522 * 4, True),
    spec("sum-rows", False, 4096 * 4096, 4096 * 4097 * 4, True),
    spec("mean-all", False, 1 << 24, (1 << 24) * 4, True),
    spec("layernorm-384", True, 128 * 384 * 10, 2 * 128 * 384 * 4, True),
    spec("layernorm-1024", False, 4096 * 1024 * 10, 2 * 4096 * 1024 * 4, True),
    spec("transpose-4096", False, 0, 2 * 4096 * 4096 * 4, True),
    spec("mlp", True, 2 * 64 * (784 * 512 + 512 * 10), (64 * 784 + 784 * 512 + 512 * 10 + 64 * 10) * 4, False),
    spec("attention", True, 2 * 2 * 12 * 128 * 128 * 32, 4 * 12 * 128 * 32 * 4, False),
    spec("bert-layer", True,
         2 * (TOKENS * HIDDEN * HIDDEN * 4 + TOKENS * HIDDEN * FFN * 2 + HEADS * TOKENS * TOKENS * HEAD * 2),
         (HIDDEN * HIDDEN * 4 + HIDDEN * FFN * 2 + TOKENS * HIDDEN * 2) * 4, False),
    spec("minilm-b1", True, 2 * 12 * 6 * (4 * 384 * 384 + 2 * 384 * 1536), 6 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    spec("minilm-b32", False, 2 * 32 * 20 * 6 * (4 * 384 * 384 + 2 * 384 * 1536), 6 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    spec("onnx-minilm-l3-b1", True, 2 * 12 * 3 * (4 * 384 * 384 + 2 * 384 * 1536), 3 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    spec("onnx-minilm-l3-b32", False, 2 * 32 * 20 * 3 * (4 * 384 * 384 + 2 * 384 * 1536), 3 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    spec("onnx-minilm-l6-b1", False, 2 * 12 * 6 * (4 * 384 * 384 + 2 * 384 * 1536), 6 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    spec("onnx-minilm-l6-b32", False, 2 * 32 * 20 * 6 * (4 * 384 * 384 + 2 * 384 * 1536), 6 * (4 * 384 * 384 + 2 * 384 * 1536) * 4, False),
    # FLOPs: 2 * output elements * input channels per group * kernel elements, summed over the Conv nodes;
    # bytes: weights (and biases, BatchNorm parameters) + input + output. bench/make_models.py prints
    # both for each model, from onnx shape inference.
    spec("onnx-conv3x3-64", True, 2 * 64 * 56 * 56 * 64 * 9, (64 * 64 * 9 + 64 + 2 * 64 * 56 * 56) * 4, False),
    spec("onnx-conv1x1-256", False, 2 * 64 * 56 * 56 * 256,
         (256 * 64 + 64 + 256 * 56 * 56 + 64 * 56 * 56) * 4, False),
    spec("onnx-depthwise3x3-32", False, 2 * 32 * 112 * 112 * 9, (32 * 9 + 32 + 2 * 32 * 112 * 112) * 4, True),
    spec("onnx-resnet-block-64", False, 2 * (2 * 64 * 56 * 56 * 64 * 9),
         (2 * (64 * 64 * 9 + 64) + 2 * 4 * 64 + 2 * 64 * 56 * 56) * 4, False),
    # ONNX's light models: the same sums over their 53 and 26 Conv nodes, with the weights their
    # ConstantOfShape nodes make; input [1, 3, 224, 224], outputs [1, 1000] and [1, 1000, 1, 1].
    spec("onnx-light-resnet50", False, 8_174_272_512, 103_046_720, False),
    spec("onnx-light-squeezenet", False, 698_303_872, 5_548_096, False),
    spec("dispatch-1000", True, 1000, 8, False),
    spec("onnx-dispatch-1000", False, 1000, 8, False),
]

# The onnx-minilm-* workloads: the same model files tensorbench runs (Workload+ONNX.swift), on the
# minilm-* sentences tokenized once (untimed) with all-MiniLM-L6-v2's uncased vocabulary.
ONNX_MODELS = {
    "l3": lambda: os.path.join(os.environ.get("TENSORENGINE_ONNX_MODEL_DIR") or os.path.expanduser(
        "~/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2"), "model.onnx"),
    "l6": lambda: os.path.join(model_folder(), "model.onnx"),
}

# The minilm-* workloads' sentences: the same as Workload.MiniLMSentences in
# Sources/TensorEngineChecks/Workload+MiniLM.swift; change both together.
MINILM_BATCH = [
    "The committee will meet again next Tuesday morning to discuss the budget for the coming year.",
    "A young woman is riding her red bicycle along the river on a warm and sunny afternoon.",
    "Researchers found that regular exercise improves both memory and mood in older adults over time.",
    "The train to the airport was delayed by forty minutes this morning because of a signal failure.",
    "He spent the whole long weekend repairing the old wooden fence behind his house in the village.",
    "Our new coffee machine in the office makes a surprisingly good espresso in under a minute.",
    "The children built a large sandcastle near the water and decorated it with shells from the beach.",
    "Heavy rain and strong winds are expected across the northern region for the rest of the week.",
    "She finally finished writing her first novel last month after working on it for six long years.",
    "The city museum is opening a new exhibition of modern sculpture and painting from South America.",
    "Please remember to turn off all the lights and lock the front door when you leave tonight.",
    "The software update fixes several serious bugs and makes the application start much faster than before.",
    "A large group of tourists is taking photographs in front of the old cathedral in the main square.",
    "The chef prepared a delicious soup with fresh tomatoes, garlic, onions and a few basil leaves.",
    "Scientists have recently discovered a new species of small green frog in the mountains of Peru.",
    "The football match was cancelled at the last minute because heavy rain had flooded the pitch.",
    "My grandmother still writes long letters by hand and sends them to the whole family every month.",
    "The company reported much higher profits this quarter thanks to strong sales of its phones in Asia.",
    "A small brown dog is happily chasing a red ball across the wet grass in the city park.",
    "The university library extended its opening hours so that students can study late in the evening.",
    "Two strong men are carefully carrying a heavy sofa up the narrow stairs of the old building.",
    "The pilot announced that the plane from Madrid would land about twenty minutes earlier than planned.",
    "Learning a second language is much easier when you practise speaking it with friends every day.",
    "The farmers are worried that the long, hot and dry summer will ruin this year's harvest.",
    "He ordered a large pizza with mushrooms, olives, peppers and extra cheese for dinner last night.",
    "The city council plans to plant ten thousand new trees along its busiest streets next year.",
    "A woman is slicing fresh vegetables on a wooden board in a bright and tidy kitchen.",
    "The concert hall was completely full for the orchestra's final performance of the winter season.",
    "Doctors recommend drinking plenty of cold water, especially during long walks on hot summer days.",
    "The old stone bridge across the valley will be closed for repairs until the end of next spring.",
    "Our friendly neighbours adopted a small grey kitten from the local animal shelter last weekend.",
    "The students presented their science project on renewable energy to the whole school on Friday.",
]
MINILM_SENTENCES = {
    "minilm-b1": ["A man is playing a guitar on the stage."],
    "minilm-b32": MINILM_BATCH,
}


# The onnx-* workloads on bench/models/<name without onnx->.onnx (written by bench/make_models.py).
FILE_MODELS = ("onnx-conv3x3-64", "onnx-conv1x1-256", "onnx-depthwise3x3-32", "onnx-resnet-block-64",
               "onnx-dispatch-1000")


def onnx_file(name):
    """The model file of an onnx-* workload with a file (bench/models/ or onnx-light-*), or None."""
    if name in FILE_MODELS:
        return os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", name[len("onnx-"):] + ".onnx")
    if name.startswith("onnx-light-"):
        folder = os.environ.get("TENSORENGINE_ONNX_TESTS_DIR") or os.path.expanduser(
            "~/.cache/tensorengine/onnx-tests/onnx-1.22.0")
        return os.path.join(folder, "light", f"light_{name[len('onnx-light-'):]}.onnx")
    return None


def onnx_workload(name):
    """(model key, sentences key) of an onnx-minilm-* workload, or None."""
    if not name.startswith("onnx-minilm-"):
        return None
    _, _, model, batch = name.split("-")
    return model, f"minilm-{batch}"


def model_folder():
    """all-MiniLM-L6-v2's folder, as tensorbench finds it (scripts/fetch-model.sh puts it there)."""
    return os.environ.get("TENSORENGINE_MODEL_DIR") or os.path.expanduser("~/.cache/tensorengine/models/all-MiniLM-L6-v2")


class Unsupported(Exception):
    """A workload a peer cannot run: a skipped row with this reason and message."""

    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason


def input_shapes(name):
    """The inputs of a workload: (shape, scale) pairs, as Workload.makeInputs makes them."""
    if name.startswith("gemm-"):
        n = int(name.split("-")[1])
        return [((n, n), 1), ((n, n), 1)]
    table = {
        "gemv-768x3072": [((1, 768), 1), ((768, 3072), 1)],
        "bmm-12x128x64": [((12, 128, 64), 1), ((12, 64, 128), 1)],
        "eltwise-1m": [((1 << 20,), 1)] * 3,
        "eltwise-16m": [((1 << 24,), 1)] * 3,
        "softmax-attn": [((128, 128, 128), 1)],
        "softmax-vocab": [((64, 30522), 1)],
        "sum-rows": [((4096, 4096), 1)],
        "mean-all": [((1 << 24,), 1)],
        "layernorm-384": [((128, 384), 1)],
        "layernorm-1024": [((4096, 1024), 1)],
        "transpose-4096": [((4096, 4096), 1)],
        "mlp": [((64, 784), 1), ((784, 512), 0.05), ((512,), 0.05), ((512, 10), 0.05), ((10,), 0.05)],
        "attention": [((12, 128, 32), 1)] * 3,
        "bert-layer": [((TOKENS, HIDDEN), 1)] + [((HIDDEN, HIDDEN), 0.05)] * 4
                      + [((HIDDEN, FFN), 0.05), ((FFN, HIDDEN), 0.05), ("ones", HIDDEN), ("zeros", HIDDEN)],
        "dispatch-1000": [("scalar", 0.5)],
    }
    return table[name]


def made_inputs(np, name):
    """A kernel workload's inputs as NumPy arrays (seeded, the same for every peer)."""
    rng = np.random.default_rng(1)
    made = []
    for shape, scale in input_shapes(name):
        if shape == "ones":
            made.append(np.ones(scale, dtype=np.float32))
        elif shape == "zeros":
            made.append(np.zeros(scale, dtype=np.float32))
        elif shape == "scalar":
            made.append(np.array(scale, dtype=np.float32))
        else:
            made.append((rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)))
    return made


class NumPyPeer:
    name = "numpy"
    note = "bert-layer's GELU uses the tanh approximation (NumPy has no erf)"

    def __init__(self):
        import numpy
        self.np = numpy
        self.version = numpy.__version__

    def inputs(self, name):
        if name in MINILM_SENTENCES:
            raise Unsupported("unsupported", "sentence embedding runs through sentence-transformers on PyTorch (the torch row)")
        if onnx_workload(name) or onnx_file(name):
            raise Unsupported("unsupported", "ONNX models run through onnxruntime (the onnxruntime row)")
        return made_inputs(self.np, name)

    def softmax(self, x):
        e = self.np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def layer_norm(self, x, gamma=None, beta=None, eps=1e-5):
        mean = x.mean(axis=-1, keepdims=True)
        centered = x - mean
        y = centered / self.np.sqrt((centered * centered).mean(axis=-1, keepdims=True) + self.np.float32(eps))
        return y if gamma is None else y * gamma + beta

    def gelu(self, x):
        np = self.np
        return np.float32(0.5) * x * (np.float32(1) + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x * x * x)))

    def graph(self, name):
        np = self.np
        if name.startswith("gemm-") or name in ("gemv-768x3072", "bmm-12x128x64"):
            return lambda x: np.matmul(x[0], x[1])
        if name.startswith("eltwise-"):
            return lambda x: np.maximum(x[0] * x[1] + x[2], np.float32(0)) * np.float32(0.5) + np.tanh(x[0])
        if name.startswith("softmax-"):
            return lambda x: self.softmax(x[0])
        if name.startswith("layernorm-"):
            return lambda x: self.layer_norm(x[0])
        simple = {
            "sum-rows": lambda x: x[0].sum(axis=-1),
            "mean-all": lambda x: x[0].mean(),
            "transpose-4096": lambda x: np.ascontiguousarray(x[0].T).reshape(-1),
            "mlp": lambda x: self.softmax(np.maximum(x[0] @ x[1] + x[2], np.float32(0)) @ x[3]),
            "attention": lambda x: self.softmax((x[0] @ x[1].transpose(0, 2, 1)) / np.float32(math.sqrt(32))) @ x[2],
            "bert-layer": self.bert_layer,
            "dispatch-1000": self.dispatch,
        }
        return simple[name]

    def bert_layer(self, x):
        np = self.np
        inp, wq, wk, wv, wo, w1, w2, gamma, beta = x

        def split(t):
            return t.reshape(TOKENS, HEADS, HEAD).transpose(1, 0, 2)

        q, k, v = split(inp @ wq), split(inp @ wk), split(inp @ wv)
        scores = self.softmax((q @ k.transpose(0, 2, 1)) * np.float32(1 / math.sqrt(HEAD)))
        context = (scores @ v).transpose(1, 0, 2).reshape(TOKENS, HIDDEN)
        attended = self.layer_norm(inp + context @ wo, gamma, beta, 1e-12)
        output = attended + self.gelu(attended @ w1) @ w2
        return self.layer_norm(output, gamma, beta, 1e-12)

    def dispatch(self, x):
        t = x[0]
        for step in range(1000):
            t = t * self.np.float32(1.0001) if step % 2 == 0 else t + self.np.float32(0.0001)
        return t

    def synchronize(self):
        pass


class TorchPeer(NumPyPeer):
    name = "torch"
    threads = 2

    def __init__(self):
        import torch
        torch.set_num_threads(self.threads)
        torch.set_grad_enabled(False)
        self.note = f"torch.set_num_threads({self.threads}), no autograd, exact (erf) GELU"
        self.torch = torch
        self.version = torch.__version__
        import numpy
        self.np = numpy

    def inputs(self, name):
        if name in MINILM_SENTENCES:
            return [self.sentence_transformer()]
        if onnx_workload(name) or onnx_file(name):
            raise Unsupported("unsupported", "ONNX models run through onnxruntime (the onnxruntime row)")
        return [self.torch.from_numpy(self.np.ascontiguousarray(a)) for a in NumPyPeer.inputs(self, name)]

    def sentence_transformer(self):
        """all-MiniLM-L6-v2 through sentence-transformers on CPU, loaded once per workload (untimed)."""
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise Unsupported("not installed", f"sentence-transformers is not installed ({error}); pip install sentence-transformers")
        folder = model_folder()
        if not os.path.isfile(os.path.join(folder, "model.safetensors")):
            raise Unsupported("no model", f"all-MiniLM-L6-v2 not found in {folder}; run scripts/fetch-model.sh (or set TENSORENGINE_MODEL_DIR)")
        return SentenceTransformer(folder, device="cpu")

    @staticmethod
    def embed(model, sentences):
        """Strings in, normalized embeddings out, as tensorbench's minilm-* rows (tokenizing and pooling included)."""
        return model.encode(sentences, batch_size=32, normalize_embeddings=True, show_progress_bar=False)

    def softmax(self, x):
        return self.torch.softmax(x, dim=-1)

    def layer_norm(self, x, gamma=None, beta=None, eps=1e-5):
        return self.torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)

    def gelu(self, x):
        return self.torch.nn.functional.gelu(x)

    def graph(self, name):
        torch = self.torch
        if name in MINILM_SENTENCES:
            sentences = MINILM_SENTENCES[name]
            return lambda x: self.embed(x[0], sentences)
        if name.startswith("gemm-") or name in ("gemv-768x3072", "bmm-12x128x64"):
            return lambda x: torch.matmul(x[0], x[1])
        if name.startswith("eltwise-"):
            return lambda x: torch.relu(x[0] * x[1] + x[2]) * 0.5 + torch.tanh(x[0])
        if name.startswith("softmax-"):
            return lambda x: self.softmax(x[0])
        if name.startswith("layernorm-"):
            return lambda x: self.layer_norm(x[0])
        simple = {
            "sum-rows": lambda x: x[0].sum(dim=-1),
            "mean-all": lambda x: x[0].mean(),
            "transpose-4096": lambda x: x[0].t().contiguous().reshape(-1),
            "mlp": lambda x: self.softmax(torch.relu(x[0] @ x[1] + x[2]) @ x[3]),
            "attention": lambda x: self.softmax((x[0] @ x[1].transpose(1, 2)) / math.sqrt(32)) @ x[2],
            "bert-layer": self.bert_layer_torch,
            "dispatch-1000": self.dispatch_torch,
        }
        return simple[name]

    def bert_layer_torch(self, x):
        inp, wq, wk, wv, wo, w1, w2, gamma, beta = x

        def split(t):
            return t.reshape(TOKENS, HEADS, HEAD).transpose(0, 1)

        q, k, v = split(inp @ wq), split(inp @ wk), split(inp @ wv)
        scores = self.softmax((q @ k.transpose(1, 2)) * (1 / math.sqrt(HEAD)))
        context = (scores @ v).transpose(0, 1).reshape(TOKENS, HIDDEN)
        attended = self.layer_norm(inp + context @ wo, gamma, beta, 1e-12)
        output = attended + self.gelu(attended @ w1) @ w2
        return self.layer_norm(output, gamma, beta, 1e-12)

    def dispatch_torch(self, x):
        t = x[0]
        for step in range(1000):
            t = t * 1.0001 if step % 2 == 0 else t + 0.0001
        return t


def onnx_graph(name):
    """The kernel workload `name` as an in-memory ONNX model (opset 18) whose inputs are the NumPy rows'
    inputs in order, or None for the sentence-transformers workloads. Constants (the softmax scale, a
    layer norm's unit scale) are initializers, as an exporter writes them."""
    if name in MINILM_SENTENCES:
        return None
    import numpy as np
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as error:
        raise Unsupported("not installed", f"onnx (which builds the graph) is not installed ({error})")
    nodes, initializers = [], []
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return f"{prefix}{counter[0]}"

    def node(op, inputs, **attributes):
        out = fresh(op.lower())
        nodes.append(helper.make_node(op, inputs, [out], **attributes))
        return out

    def constant(value):
        label = fresh("c")
        initializers.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), label))
        return label

    def axes(values):
        label = fresh("axes")
        initializers.append(numpy_helper.from_array(np.asarray(values, dtype=np.int64), label))
        return label

    def softmax(x):
        return node("Softmax", [x], axis=-1)

    def layer_norm(x, width, epsilon=1e-5, gamma=None, beta=None):
        scale = gamma or constant(np.ones(width, dtype=np.float32))
        bias = beta or constant(np.zeros(width, dtype=np.float32))
        return node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=epsilon)

    shapes = [shape for shape, _ in input_shapes(name)]
    inputs = []
    for index, shape in enumerate(shapes):
        dims = [] if shape == "scalar" else [input_shapes(name)[index][1]] if shape in ("ones", "zeros") else list(shape)
        inputs.append(helper.make_tensor_value_info(f"x{index}", TensorProto.FLOAT, dims))
    x = [f"x{index}" for index in range(len(shapes))]
    if name.startswith("gemm-") or name in ("gemv-768x3072", "bmm-12x128x64"):
        out = node("MatMul", [x[0], x[1]])
    elif name.startswith("eltwise-"):
        fused = node("Relu", [node("Add", [node("Mul", [x[0], x[1]]), x[2]])])
        out = node("Add", [node("Mul", [fused, constant(0.5)]), node("Tanh", [x[0]])])
    elif name.startswith("softmax-"):
        out = softmax(x[0])
    elif name.startswith("layernorm-"):
        out = layer_norm(x[0], shapes[0][-1])
    elif name == "sum-rows":
        out = node("ReduceSum", [x[0], axes([-1])], keepdims=0)
    elif name == "mean-all":
        out = node("ReduceMean", [x[0]], keepdims=0)
    elif name == "transpose-4096":
        out = node("Reshape", [node("Transpose", [x[0]], perm=[1, 0]), axes([-1])])
    elif name == "mlp":
        hidden = node("Relu", [node("Add", [node("MatMul", [x[0], x[1]]), x[2]])])
        out = softmax(node("MatMul", [hidden, x[3]]))
    elif name == "attention":
        scores = node("Mul", [node("MatMul", [x[0], node("Transpose", [x[1]], perm=[0, 2, 1])]), constant(1 / math.sqrt(32))])
        out = node("MatMul", [softmax(scores), x[2]])
    elif name == "bert-layer":
        inp, wq, wk, wv, wo, w1, w2, gamma, beta = x
        to_heads = axes([TOKENS, HEADS, HEAD])

        def split(t):
            return node("Transpose", [node("Reshape", [t, to_heads])], perm=[1, 0, 2])

        q, k, v = (split(node("MatMul", [inp, w])) for w in (wq, wk, wv))
        scores = node("Mul", [node("MatMul", [q, node("Transpose", [k], perm=[0, 2, 1])]), constant(1 / math.sqrt(HEAD))])
        context = node("Reshape", [node("Transpose", [node("MatMul", [softmax(scores), v])], perm=[1, 0, 2]),
                                   axes([TOKENS, HIDDEN])])
        attended = layer_norm(node("Add", [inp, node("MatMul", [context, wo])]), HIDDEN, 1e-12, gamma, beta)
        up = node("MatMul", [attended, w1])
        # Exact GELU as 0.5·x·(1 + erf(x/√2)), the form exporters write and onnxruntime fuses.
        gelu = node("Mul", [node("Mul", [up, constant(0.5)]),
                            node("Add", [node("Erf", [node("Div", [up, constant(math.sqrt(2))])]), constant(1.0)])])
        out = layer_norm(node("Add", [attended, node("MatMul", [gelu, w2])]), HIDDEN, 1e-12, gamma, beta)
    elif name == "dispatch-1000":
        out = x[0]
        for step in range(1000):
            out = node("Mul", [out, constant(1.0001)]) if step % 2 == 0 else node("Add", [out, constant(0.0001)])
    else:
        raise Unsupported("unsupported", f"no ONNX graph is written for {name}")
    output = helper.make_tensor_value_info(out, TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, name, inputs, [output], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


class OnnxRuntimePeer:
    """onnxruntime's CPU execution provider on the onnx-* models, one InferenceSession per workload
    (untimed), intra-op threads as --threads; each run is session.run of all outputs, on the token ids
    (onnx-minilm-*) or on one float32 input of the model's declared shape: seeded standard normal for
    the bench/models ones, and the ONNX test runner's dummy data, arange(n) / n, for onnx-light-*."""
    name = "onnxruntime"
    threads = 2

    def __init__(self):
        import onnxruntime
        import numpy
        self.ort = onnxruntime
        self.np = numpy
        self.version = onnxruntime.__version__
        self.note = f"CPUExecutionProvider, intra_op_num_threads={self.threads}, default graph optimizations"

    def options(self):
        options = self.ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: the light models' unused initializers are warned about
        return options

    def session(self, path):
        return self.ort.InferenceSession(path, self.options(), providers=["CPUExecutionProvider"])

    def file_inputs(self, name, path):
        if not os.path.isfile(path):
            fetch = "scripts/fetch-onnx-tests.sh, or set TENSORENGINE_ONNX_TESTS_DIR" if name.startswith(
                "onnx-light-") else "python3 bench/make_models.py"
            raise Unsupported("no model", f"{path} not found ({fetch})")
        session = self.session(path)
        (declared,) = session.get_inputs()
        shape = tuple(declared.shape)
        if not all(isinstance(d, int) for d in shape):
            raise Unsupported("unsupported", f"{declared.name} has symbolic dims {list(shape)}")
        np = self.np
        if name.startswith("onnx-light-"):
            n = int(np.prod(shape))
            x = (np.arange(n).reshape(shape) / n).astype(np.float32)
        else:
            x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
        return [session, {declared.name: x}]

    def built_inputs(self, name):
        model = onnx_graph(name)
        if model is None:
            raise Unsupported("unsupported", "sentence embedding runs through sentence-transformers on PyTorch "
                                             "(onnx-minilm-l6-* is the same model in onnxruntime)")
        session = self.ort.InferenceSession(model.SerializeToString(), self.options(), providers=["CPUExecutionProvider"])
        arrays = made_inputs(self.np, name)
        names = [declared.name for declared in session.get_inputs()]
        return [session, dict(zip(names, arrays))]

    def inputs(self, name):
        path = onnx_file(name)
        if path:
            return self.file_inputs(name, path)
        workload = onnx_workload(name)
        if not workload:
            return self.built_inputs(name)
        model, sentences = workload
        path = ONNX_MODELS[model]()
        if not os.path.isfile(path):
            raise Unsupported("no model", f"{path} not found (scripts/fetch-onnx-model.sh; l6: scripts/fetch-minilm-onnx.sh)")
        try:
            from transformers import AutoTokenizer
        except ImportError as error:
            raise Unsupported("not installed", f"transformers (for the tokenizer) is not installed ({error})")
        tokenizer = AutoTokenizer.from_pretrained(model_folder())
        encoded = tokenizer(MINILM_SENTENCES[sentences], padding=True, return_tensors="np")
        session = self.session(path)
        names = {i.name for i in session.get_inputs()}
        feeds = {key: value.astype(self.np.int64) for key, value in encoded.items() if key in names}
        return [session, feeds]

    def graph(self, name):
        return lambda x: x[0].run(None, x[1])


def nearest_rank(sorted_samples, percent):
    rank = math.ceil(percent / 100 * len(sorted_samples))
    return sorted_samples[max(0, min(len(sorted_samples) - 1, rank - 1))]


def statistics(samples):
    s = sorted(samples)
    n = len(s)
    median = s[n // 2] if n % 2 == 1 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"iterations": n, "min_seconds": s[0], "median_seconds": median, "p90_seconds": nearest_rank(s, 90),
            "p99_seconds": nearest_rank(s, 99) if n >= 100 else None}


def wants_another(taken, elapsed, budget, cap):
    if taken >= cap:
        return False
    if elapsed < budget:
        return True
    typical = elapsed / taken if taken else 0
    return taken < (MIN_ITERATIONS_SLOW if typical > budget / 2 else MIN_ITERATIONS)


def measure(body, budget, cap):
    start = time.perf_counter()
    body()
    first = time.perf_counter() - start
    warm, runs = first, 0
    while warm < budget / 10 and runs < MAX_WARM_UP_RUNS:
        start = time.perf_counter()
        body()
        warm += time.perf_counter() - start
        runs += 1
    samples, elapsed = [], 0.0
    while wants_another(len(samples), elapsed, budget, cap):
        start = time.perf_counter()
        body()
        seconds = time.perf_counter() - start
        samples.append(seconds)
        elapsed += seconds
    return first, samples


def peak_resident_bytes():
    try:
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    except (ImportError, OSError):
        return None


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = 0
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    system = platform.system()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    system = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return {"cpu_model": model, "cores": cores, "memory_bytes": memory, "os": system}


def main(argv):
    parser = argparse.ArgumentParser(description="Run tensorbench's workloads in NumPy and PyTorch (tensorbench's JSON schema).")
    parser.add_argument("--suite", choices=["quick", "full"], default="quick")
    parser.add_argument("--workload", action="append", default=[], help="run only this workload (repeatable)")
    parser.add_argument("--backend", action="append", default=[], choices=["numpy", "torch", "onnxruntime"], help="run only this peer (repeatable)")
    parser.add_argument("--budget", type=float, help="seconds of measured runs per row (default 0.25 quick, 1 full)")
    parser.add_argument("--iterations", type=int, default=1000, help="at most this many measured runs per row")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--threads", type=int, default=2,
                        help="BLAS / intra-op threads for both peers (default 2, as the engine uses on this machine)")
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads needs a whole number >= 1")
    # Must be set before NumPy (its OpenBLAS) or PyTorch load.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(args.threads)
    TorchPeer.threads = args.threads
    OnnxRuntimePeer.threads = args.threads
    known = [w["name"] for w in WORKLOADS]
    for name in args.workload:
        if name not in known:
            parser.error(f"unknown workload '{name}'; valid: {', '.join(known)}")
    if args.budget is not None and not (args.budget > 0 and math.isfinite(args.budget)):
        parser.error("--budget needs a positive number of seconds")
    if args.iterations < 1:
        parser.error("--iterations needs a whole number >= 1")
    budget = args.budget or DEFAULT_BUDGET[args.suite]
    if args.workload:
        selected = [w for w in WORKLOADS if w["name"] in args.workload]
    else:
        selected = [w for w in WORKLOADS if args.suite == "full" or w["quick"]]

    peers, statuses, versions = [], [], {"python": platform.python_version()}
    for cls, install in ((NumPyPeer, "pip install numpy"), (TorchPeer, "pip install torch --index-url https://download.pytorch.org/whl/cpu"),
                         (OnnxRuntimePeer, "pip install onnx onnxruntime transformers")):
        if args.backend and cls.name not in args.backend:
            continue
        try:
            peer = cls()
        except ImportError as error:
            print(f"peers.py: {cls.name} is not installed ({error}); to add it: python3 -m venv .venv && "
                  f". .venv/bin/activate && {install}", file=sys.stderr)
            statuses.append({"name": cls.name, "available": False, "detail": "not installed"})
            continue
        peers.append(peer)
        versions[cls.name] = peer.version
        versions["threads"] = str(args.threads)
        statuses.append({"name": cls.name, "available": True, "detail": f"{peer.version}; {peer.note}"})
    if "torch" in versions and any(w["name"] in MINILM_SENTENCES for w in selected):
        try:
            import sentence_transformers
            versions["sentence_transformers"] = sentence_transformers.__version__
        except ImportError:
            pass
    if "numpy" in versions:
        try:
            import numpy
            config = numpy.show_config(mode="dicts") if hasattr(numpy, "show_config") else None
            blas = (config or {}).get("Build Dependencies", {}).get("blas", {})
            if blas:
                versions["numpy_blas"] = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
        except (TypeError, AttributeError):
            pass

    rows, skipped = [], []
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    total = len(selected) * len(peers)
    done = 0
    for workload in selected:
        for peer in peers:
            done += 1
            if sys.stderr.isatty():
                print(f"\r\033[K[{done}/{total}] {workload['name']} · {peer.name}", end="", file=sys.stderr, flush=True)
            try:
                inputs = peer.inputs(workload["name"])
                graph = peer.graph(workload["name"])
                first, samples = measure(lambda: graph(inputs), budget, args.iterations)
            except Unsupported as unsupported:
                skipped.append({"workload": workload["name"], "backend": peer.name, "reason": unsupported.reason, "detail": str(unsupported)})
                continue
            except Exception as error:  # a peer's failure is a skipped row, never the end of the run
                skipped.append({"workload": workload["name"], "backend": peer.name, "reason": "failed", "detail": str(error)})
                continue
            row = {"workload": workload["name"], "backend": peer.name, "kind": "peer", "first_run_seconds": first}
            row.update(statistics(samples))
            median = row["median_seconds"]
            row["gflops_per_second"] = workload["flops"] / median / 1e9 if workload["flops"] > 0 and median > 0 else None
            row["gigabytes_per_second"] = workload["bytes"] / median / 1e9 if median > 0 else None
            row["peak_resident_bytes"] = peak_resident_bytes()
            rows.append({k: v for k, v in row.items() if v is not None})
    if sys.stderr.isatty():
        print("\r\033[K", end="", file=sys.stderr)

    report = {"schema_version": SCHEMA_VERSION, "tool": "peers.py", "created": created,
              "suite": args.suite if not args.workload else "custom", "budget_seconds": budget,
              "machine": machine(), "versions": versions, "backends": statuses, "rows": rows, "skipped": skipped}
    print(f"{'workload':<16} {'backend':<7} {'first run':>11} {'min':>11} {'median':>11} {'p90':>11} {'iters':>6}")
    for row in rows:
        print(f"{row['workload']:<16} {row['backend']:<7} {row['first_run_seconds'] * 1e3:>9.3f}ms {row['min_seconds'] * 1e3:>9.3f}ms "
              f"{row['median_seconds'] * 1e3:>9.3f}ms {row['p90_seconds'] * 1e3:>9.3f}ms {row['iterations']:>6}")
    for row in skipped:
        print(f"{row['workload']:<16} {row['backend']:<7} skipped ({row['reason']}: {row['detail']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2, sort_keys=True)
            f.write("\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
