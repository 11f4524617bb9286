#!/usr/bin/env python3
"""Writes a tiny GPT-style decoder with a key/value cache as ONNX, with greedy-generation references, next to this script.

Run from anywhere, with torch (CPU), onnx, onnxruntime and numpy installed:

    python3 Tests/TensorEngineTests/Fixtures/onnx/make_onnx_decoder_fixtures.py

The tests never run Python; they read the files this script writes (into this script's folder):

- decoder_tiny.onnx: a decoder with random (seeded) float32 weights: vocabulary 50, width 32, 2 layers,
  4 heads of 8, learned position embeddings for 1024 positions; pre-LayerNorm blocks (LayerNorm, causal
  self-attention with one fused query/key/value projection, residual; LayerNorm, MLP 32 -> 128 -> 32 with
  exact GELU, residual); a final LayerNorm and a bias-free linear head to the vocabulary.
  Inputs, in graph order (the names Hugging Face's exports use):
    input_ids                 int64   [batch, sequence]
    past_key_values.{i}.key   float32 [batch, 4, past_sequence, 8]   for layers i = 0, 1
    past_key_values.{i}.value float32 [batch, 4, past_sequence, 8]
  Outputs, in graph order:
    logits                    float32 [batch, sequence, 50]
    present.{i}.key           float32 [batch, 4, total_sequence, 8]  concat(past, new) along axis 2
    present.{i}.value         float32 [batch, 4, total_sequence, 8]
  total_sequence = past_sequence + sequence. The positions of the new tokens are past_sequence +
  0..<sequence, computed inside the graph from the past's shape; query t sees keys 0...past_sequence + t
  (a mask built from Range and LessOrEqual, not Trilu). past_sequence may be 0 (empty past tensors).
- decoder_prompt_ids.npy: int64 [1, 5], the prompt (seeded random ids in 0..<50).
- decoder_step_logits.npy: float32 [7, 50]. Cached greedy generation: call 0 runs the prompt with an
  empty past ([1, 4, 0, 8]); call k (k = 1...6) runs input_ids [[t_k]] with the previous call's presents
  as its past. Row k holds call k's last-position logits, whose argmax is t_{k+1}.
- decoder_uncached_logits.npy: float32 [1, 11, 50], one run over prompt + t1...t6 with an empty past;
  position 4 + k equals row k of decoder_step_logits.npy.
- decoder_reference.json: the model file, its sizes, the prompt, the greedy tokens t1...t7, the uncached
  sequence, the graph's input and output names in order with the dims the graph declares and the dims
  onnxruntime reports, the op counts, and the differences the checks measured.

The model is exported with torch.onnx.export (TorchScript exporter, opset 17), traced with batch 2, past
length 3 and sequence 2, with dynamic axes "batch", "sequence", "past_sequence" and "total_sequence".
References are onnxruntime's (CPUExecutionProvider). The script exits with status 1 when the graph uses
an op type the engine does not register (Sources/TensorEngine/Models/ONNX/ONNXOperators*.swift); when
torch and onnxruntime differ by more than 1e-4 in any run (the generation calls, the uncached run, a run
with a 512-token past and one new token, and a run at batch 3, past 6, sequence 4); when the uncached
logits differ from the cached ones by more than 1e-4 or their greedy tokens disagree; or when a greedy
choice leads its runner-up by less than 1e-3.
Every .npy file is format version 1.0, little-endian, C order.
"""
import collections
import inspect
import json
import math
import pathlib
import re
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent
REPOSITORY = OUT.parents[3]
OPERATOR_SOURCES = REPOSITORY / "Sources" / "TensorEngine" / "Models" / "ONNX"
OPSET = 17
TOLERANCE = 1e-4
MIN_GREEDY_MARGIN = 1e-3
SEED = 20240923

VOCAB = 50
WIDTH = 32
LAYERS = 2
HEADS = 4
HEAD_DIM = WIDTH // HEADS
MLP_WIDTH = 128
POSITIONS = 1024
PROMPT_LENGTH = 5
STEPS = 7                      # cached calls: the prompt, then 6 single tokens
LONG_PAST = 512                # the past length of the long-context check
TRACE_BATCH, TRACE_PAST, TRACE_SEQUENCE = 2, 3, 2

MODEL_FILE = "decoder_tiny.onnx"
PROMPT_FILE = "decoder_prompt_ids.npy"
STEP_LOGITS_FILE = "decoder_step_logits.npy"
UNCACHED_LOGITS_FILE = "decoder_uncached_logits.npy"
REFERENCE_FILE = "decoder_reference.json"

INPUT_NAMES = ["input_ids"] + [f"past_key_values.{i}.{kind}" for i in range(LAYERS) for kind in ("key", "value")]
OUTPUT_NAMES = ["logits"] + [f"present.{i}.{kind}" for i in range(LAYERS) for kind in ("key", "value")]


def say(message):
    print(f"make_onnx_decoder_fixtures: {message}")


def fail(message):
    sys.exit(f"make_onnx_decoder_fixtures: {message}")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.fc = nn.Linear(WIDTH, MLP_WIDTH)
        self.gelu = nn.GELU()
        self.fc_out = nn.Linear(MLP_WIDTH, WIDTH)

    def attention(self, x, past_key, past_value, visible):
        batch, sequence = x.shape[0], x.shape[1]

        def heads(t):  # [batch, sequence, WIDTH] -> [batch, HEADS, sequence, HEAD_DIM]
            return t.reshape(batch, sequence, HEADS, HEAD_DIM).transpose(1, 2)

        q, k, v = self.qkv(x).split(WIDTH, dim=2)
        key = torch.cat([past_key, heads(k)], dim=2)
        value = torch.cat([past_value, heads(v)], dim=2)
        scores = torch.matmul(heads(q), key.transpose(2, 3)) * (1.0 / math.sqrt(HEAD_DIM))
        scores = torch.where(visible, scores, torch.tensor(torch.finfo(torch.float32).min))
        mixed = torch.matmul(torch.softmax(scores, dim=-1), value)
        mixed = mixed.transpose(1, 2).reshape(batch, sequence, WIDTH)
        return self.proj(mixed), key, value

    def forward(self, x, past_key, past_value, visible):
        attended, key, value = self.attention(self.ln_1(x), past_key, past_value, visible)
        x = x + attended
        x = x + self.fc_out(self.gelu(self.fc(self.ln_2(x))))
        return x, key, value


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(POSITIONS, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, input_ids, *past):
        past_length = past[0].shape[2]
        sequence = input_ids.shape[1]
        positions = torch.arange(past_length, past_length + sequence, dtype=torch.int64)
        keys = torch.arange(0, past_length + sequence, dtype=torch.int64)
        visible = keys.unsqueeze(0) <= positions.unsqueeze(1)    # [sequence, total]: key j visible to query t
        x = self.wte(input_ids) + self.wpe(positions).unsqueeze(0)
        presents = []
        for index, block in enumerate(self.blocks):
            x, key, value = block(x, past[2 * index], past[2 * index + 1], visible)
            presents += [key, value]
        return (self.lm_head(self.ln_f(x)), *presents)


def randomize(model, generator):
    """Random weights of a size that gives logits with clear greedy choices; LayerNorms not identities."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if ".ln_" in f".{name}" and name.endswith("weight"):
                parameter.copy_(torch.rand(parameter.shape, generator=generator) + 0.5)
            elif name.endswith("bias"):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.1)
            elif parameter.dim() == 2 and name.startswith(("wte", "wpe")):
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
            else:
                fan_in = parameter.shape[1]
                parameter.copy_(torch.randn(parameter.shape, generator=generator) / math.sqrt(fan_in))


def empty_past(batch=1, length=0):
    return [np.zeros((batch, HEADS, length, HEAD_DIM), dtype=np.float32) for _ in range(2 * LAYERS)]


def export(model):
    path = OUT / MODEL_FILE
    generator = torch.Generator().manual_seed(SEED + 1)
    ids = torch.randint(0, VOCAB, (TRACE_BATCH, TRACE_SEQUENCE), generator=generator)
    past = [torch.randn(TRACE_BATCH, HEADS, TRACE_PAST, HEAD_DIM, generator=generator) for _ in range(2 * LAYERS)]
    dynamic_axes = {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}}
    for name in INPUT_NAMES[1:]:
        dynamic_axes[name] = {0: "batch", 2: "past_sequence"}
    for name in OUTPUT_NAMES[1:]:
        dynamic_axes[name] = {0: "batch", 2: "total_sequence"}
    options = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False
    # The exporter's warnings (legacy exporter; traced shapes converted to tensors) do not apply here:
    # every size the graph uses comes from a Shape node, which the checks below exercise at other sizes.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(model, (ids, *past), str(path), input_names=INPUT_NAMES, output_names=OUTPUT_NAMES,
                          opset_version=OPSET, do_constant_folding=True, dynamic_axes=dynamic_axes, **options)
    onnx.checker.check_model(str(path), full_check=True)
    return path


def registered_op_types():
    """The op types the engine's ONNX importer registers: the keys of its operator tables."""
    names = set()
    for source in sorted(OPERATOR_SOURCES.glob("ONNXOperators*.swift")):
        for line in source.read_text().splitlines():
            if line.lstrip().startswith(("case ", "//")):
                continue
            names.update(re.findall(r'"([A-Z][A-Za-z0-9]*)":', line))
    if "MatMul" not in names:
        fail(f"found no operator registrations under {OPERATOR_SOURCES}")
    return names


def dims(value_info):
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in value_info.type.tensor_type.shape.dim]


class Runner:
    """Runs the same inputs through onnxruntime and torch, checks they agree, returns onnxruntime's outputs."""

    def __init__(self, session, model):
        self.session, self.model, self.max_diff = session, model, 0.0

    def __call__(self, label, ids, past):
        feeds = dict(zip(INPUT_NAMES, [ids, *past]))
        outputs = self.session.run(OUTPUT_NAMES, feeds)
        with torch.no_grad():
            expected = [t.numpy() for t in self.model(torch.from_numpy(ids), *map(torch.from_numpy, past))]
        for name, got, want in zip(OUTPUT_NAMES, outputs, expected):
            if got.shape != want.shape:
                fail(f"{label}: {name} has shape {list(got.shape)} in onnxruntime, {list(want.shape)} in torch")
            diff = float(np.max(np.abs(got - want))) if got.size else 0.0
            self.max_diff = max(self.max_diff, diff)
            if not diff <= TOLERANCE:
                fail(f"{label}: {name}: torch vs onnxruntime max abs diff {diff:.3e} above {TOLERANCE:g}")
        return outputs


def greedy(logits_row, label):
    order = np.argsort(logits_row)[::-1]
    margin = float(logits_row[order[0]] - logits_row[order[1]])
    if not margin >= MIN_GREEDY_MARGIN:
        fail(f"{label}: greedy choice leads its runner-up by {margin:.3e}, under {MIN_GREEDY_MARGIN:g}")
    return int(order[0]), margin


def main():
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    model = TinyDecoder()
    randomize(model, generator)
    model.eval()

    path = export(model)
    graph = onnx.load(str(path)).graph
    ops = dict(sorted(collections.Counter(node.op_type for node in graph.node).items()))
    say(f"ops {ops}")
    domains = sorted({node.domain for node in graph.node if node.domain not in ("", "ai.onnx")})
    missing = sorted(set(ops) - registered_op_types())
    if missing or domains:
        fail(f"ops the engine does not register: {missing}; non-default domains: {domains}")
    graph_inputs = {v.name: dims(v) for v in graph.input}
    graph_outputs = {v.name: dims(v) for v in graph.output}
    if list(graph_inputs) != INPUT_NAMES or list(graph_outputs) != OUTPUT_NAMES:
        fail(f"graph inputs {list(graph_inputs)} / outputs {list(graph_outputs)} not as exported")
    for name, shape in {**graph_inputs, **graph_outputs}.items():
        say(f"graph {name}: {shape}")

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    run = Runner(session, model)

    # Cached greedy generation.
    prompt = rng.integers(0, VOCAB, size=(1, PROMPT_LENGTH), dtype=np.int64)
    ids, past = prompt, empty_past()
    step_logits, tokens, margins = [], [], []
    for call in range(STEPS):
        logits, *past = run(f"cached call {call}", ids, past)
        if logits.shape != (1, ids.shape[1], VOCAB) or past[0].shape != (1, HEADS, PROMPT_LENGTH + call, HEAD_DIM):
            fail(f"cached call {call}: logits {list(logits.shape)}, present {list(past[0].shape)}")
        step_logits.append(logits[0, -1])
        token, margin = greedy(logits[0, -1], f"cached call {call}")
        tokens.append(token)
        margins.append(margin)
        ids = np.array([[token]], dtype=np.int64)
    step_logits = np.stack(step_logits).astype(np.float32)
    say(f"prompt {prompt[0].tolist()}, greedy tokens {tokens}, smallest greedy margin {min(margins):.3g}")

    # One uncached run over the prompt and the first six generated tokens.
    sequence = np.concatenate([prompt, np.array([tokens[:-1]], dtype=np.int64)], axis=1)
    uncached, *_ = run("uncached", sequence, empty_past())
    uncached = uncached.astype(np.float32)
    cache_diff = float(np.max(np.abs(uncached[0, PROMPT_LENGTH - 1:] - step_logits)))
    say(f"uncached vs cached logits max abs diff {cache_diff:.3e}")
    if not cache_diff <= TOLERANCE:
        fail(f"uncached logits differ from the cached calls' by {cache_diff:.3e}, above {TOLERANCE:g}")
    uncached_tokens = [int(t) for t in np.argmax(uncached[0, PROMPT_LENGTH - 1:], axis=-1)]
    if uncached_tokens != tokens:
        fail(f"uncached greedy tokens {uncached_tokens} differ from the cached {tokens}")

    # A long past: the presents of a run over LONG_PAST random tokens, then one new token.
    long_ids = rng.integers(0, VOCAB, size=(1, LONG_PAST), dtype=np.int64)
    _, *long_past = run(f"prefix {LONG_PAST}", long_ids, empty_past())
    next_id = rng.integers(0, VOCAB, size=(1, 1), dtype=np.int64)
    long_logits, *long_present = run(f"prefix {LONG_PAST} + 1", next_id, long_past)
    if long_present[0].shape != (1, HEADS, LONG_PAST + 1, HEAD_DIM):
        fail(f"prefix {LONG_PAST} + 1: present {list(long_present[0].shape)}")
    # Another batch, past and sequence than the trace's, so no traced size hides in the graph.
    other_ids = rng.integers(0, VOCAB, size=(3, 4), dtype=np.int64)
    other_past = [rng.standard_normal((3, HEADS, 6, HEAD_DIM)).astype(np.float32) for _ in range(2 * LAYERS)]
    other_logits, *other_present = run("batch 3, past 6, sequence 4", other_ids, other_past)
    if other_logits.shape != (3, 4, VOCAB) or other_present[0].shape != (3, HEADS, 10, HEAD_DIM):
        fail(f"batch 3, past 6, sequence 4: logits {list(other_logits.shape)}, present {list(other_present[0].shape)}")
    say(f"torch vs onnxruntime max abs diff over every run {run.max_diff:.3e} (tolerance {TOLERANCE:g})")

    np.save(OUT / PROMPT_FILE, np.ascontiguousarray(prompt), allow_pickle=False)
    np.save(OUT / STEP_LOGITS_FILE, np.ascontiguousarray(step_logits), allow_pickle=False)
    np.save(OUT / UNCACHED_LOGITS_FILE, np.ascontiguousarray(uncached), allow_pickle=False)
    reference = {
        "model": MODEL_FILE,
        "opset": OPSET,
        "runtime": f"onnxruntime {ort.__version__} CPUExecutionProvider",
        "exporter": f"torch {torch.__version__} torch.onnx.export (TorchScript)",
        "vocab": VOCAB, "width": WIDTH, "layers": LAYERS, "heads": HEADS, "head_dim": HEAD_DIM,
        "mlp_width": MLP_WIDTH, "positions": POSITIONS,
        "prompt": prompt[0].tolist(),
        "prompt_file": PROMPT_FILE,
        "greedy_tokens": tokens,
        "greedy_margins": margins,
        "step_logits_file": STEP_LOGITS_FILE,
        "step_logits_shape": list(step_logits.shape),
        "uncached_sequence": sequence[0].tolist(),
        "uncached_logits_file": UNCACHED_LOGITS_FILE,
        "uncached_logits_shape": list(uncached.shape),
        "inputs": INPUT_NAMES,
        "outputs": OUTPUT_NAMES,
        "graph_inputs": graph_inputs,
        "graph_outputs": graph_outputs,
        "runtime_inputs": {i.name: i.shape for i in session.get_inputs()},
        "runtime_outputs": {o.name: o.shape for o in session.get_outputs()},
        "ops": ops,
        "torch_max_abs_diff": run.max_diff,
        "uncached_vs_cached_max_abs_diff": cache_diff,
        "other_checks": [{"batch": 1, "past_sequence": LONG_PAST, "sequence": 1},
                         {"batch": 3, "past_sequence": 6, "sequence": 4}],
        "tolerance": TOLERANCE,
    }
    (OUT / REFERENCE_FILE).write_text(json.dumps(reference, indent=2) + "\n")
    files = [MODEL_FILE, PROMPT_FILE, STEP_LOGITS_FILE, UNCACHED_LOGITS_FILE, REFERENCE_FILE]
    say(", ".join(f"{f} {(OUT / f).stat().st_size} B" for f in files))


if __name__ == "__main__":
    main()
