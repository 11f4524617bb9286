#!/usr/bin/env python3
"""Exports the all-MiniLM-L6-v2 BERT encoder to ONNX and checks the result against PyTorch.

Run after scripts/fetch-model.sh, with torch, transformers, onnx, onnxruntime and numpy installed
(for example in a virtual environment outside the repository; the CPU build of torch is enough):

    python3 -m venv /work/venv-export
    /work/venv-export/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
    /work/venv-export/bin/pip install transformers onnx onnxruntime numpy
    /work/venv-export/bin/python scripts/export_minilm_onnx.py [OUTPUT]

It loads the model folder ($TENSORENGINE_MODEL_DIR, default
~/.cache/tensorengine/models/all-MiniLM-L6-v2, or --model-dir) with
transformers.AutoModel.from_pretrained and writes OUTPUT (default model.onnx in that folder):

- opset 17, exported with the TorchScript-based exporter (torch.onnx.export with dynamo=False),
  constant folding on, eager attention;
- inputs input_ids, attention_mask, token_type_ids: int64 [batch, sequence];
- output last_hidden_state: float32 [batch, sequence, 384] (the encoder output before the
  sentence-transformers mean pooling and normalization; the pooler is not exported);
- all weights stored inside the file (about 90 MB), no external data file.

It then checks the file with onnx.checker, runs onnxruntime (CPUExecutionProvider) and PyTorch on
inputs of several shapes (different from the shape used for the export, with padded rows), prints
the largest absolute difference of last_hidden_state, and exits with status 1 when it is above
--tolerance. The file is written to a temporary name next to OUTPUT and renamed when it passes.
"""
import argparse
import collections
import os
import pathlib
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
import torch
from transformers import AutoModel

DEFAULT_MODEL_DIR = os.environ.get(
    "TENSORENGINE_MODEL_DIR",
    os.path.expanduser("~/.cache/tensorengine/models/all-MiniLM-L6-v2"),
)
OPSET = 17
INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUTPUT_NAMES = ["last_hidden_state"]
DYNAMIC_AXES = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES + OUTPUT_NAMES}


class Encoder(torch.nn.Module):
    """BertModel with positional inputs in INPUT_NAMES order, returning last_hidden_state only."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        output = self.bert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            return_dict=True,
        )
        return output.last_hidden_state


def make_inputs(lengths, sequence, vocab_size, seed):
    """[CLS] random-token ... [SEP] rows of the given real lengths, right-padded to `sequence`."""
    rng = np.random.default_rng(seed)
    input_ids = np.zeros((len(lengths), sequence), dtype=np.int64)
    attention_mask = np.zeros((len(lengths), sequence), dtype=np.int64)
    for row, length in enumerate(lengths):
        input_ids[row, 0] = 101
        input_ids[row, 1 : length - 1] = rng.integers(1000, vocab_size, size=length - 2)
        input_ids[row, length - 1] = 102
        attention_mask[row, :length] = 1
    token_type_ids = np.zeros_like(input_ids)
    return {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}


# "a man is eating food ." in the BERT uncased WordPiece vocabulary.
FIXED_CASE = {
    "input_ids": np.array([[101, 1037, 2158, 2003, 5983, 2833, 1012, 102]], dtype=np.int64),
    "attention_mask": np.ones((1, 8), dtype=np.int64),
    "token_type_ids": np.zeros((1, 8), dtype=np.int64),
}


def check_cases(vocab_size):
    return [
        ("batch 1, sequence 8", FIXED_CASE),
        ("batch 1, sequence 3", make_inputs([3], 3, vocab_size, 1)),
        ("batch 3, sequence 17, padded", make_inputs([17, 9, 4], 17, vocab_size, 2)),
        ("batch 2, sequence 256, padded", make_inputs([256, 31], 256, vocab_size, 3)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", help="ONNX file to write (default: model.onnx in the model folder)")
    parser.add_argument("--model-dir", default=DEFAULT_MODEL_DIR, help="all-MiniLM-L6-v2 folder (default: %(default)s)")
    parser.add_argument("--tolerance", type=float, default=1e-3, help="largest accepted |onnxruntime - torch| (default: %(default)g)")
    args = parser.parse_args()

    model_dir = pathlib.Path(args.model_dir).expanduser()
    output = pathlib.Path(args.output).expanduser() if args.output else model_dir / "model.onnx"
    if not (model_dir / "model.safetensors").is_file():
        sys.exit(f"export_minilm_onnx: no model.safetensors in {model_dir}; run scripts/fetch-model.sh first")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(output.name + f".partial.{os.getpid()}")

    print(f"export_minilm_onnx: torch {torch.__version__}, onnx {onnx.__version__}, onnxruntime {ort.__version__}")
    started = time.perf_counter()
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    bert = bert.float().eval()
    encoder = Encoder(bert).eval()
    vocab_size = bert.config.vocab_size
    print(f"export_minilm_onnx: loaded {model_dir} in {time.perf_counter() - started:.1f} s")

    # The export traces one shape; batch and sequence are made dynamic through DYNAMIC_AXES.
    example = make_inputs([12, 7], 12, vocab_size, 0)
    example_args = tuple(torch.from_numpy(example[name]) for name in INPUT_NAMES)
    started = time.perf_counter()
    try:
        with torch.no_grad():
            torch.onnx.export(
                encoder,
                example_args,
                str(partial),
                input_names=INPUT_NAMES,
                output_names=OUTPUT_NAMES,
                dynamic_axes=DYNAMIC_AXES,
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        export_seconds = time.perf_counter() - started

        stored = onnx.load(str(partial), load_external_data=False)
        external = [t.name for t in stored.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
        if external:
            sys.exit(f"export_minilm_onnx: {len(external)} initializers use external data; expected none")
        onnx.checker.check_model(str(partial), full_check=True)
        ops = collections.Counter(node.op_type for node in stored.graph.node)
        opsets = {entry.domain or "ai.onnx": entry.version for entry in stored.opset_import}
        print(f"export_minilm_onnx: exported in {export_seconds:.1f} s; checker passed")
        print(f"export_minilm_onnx: opset {opsets}, IR version {stored.ir_version}, {len(stored.graph.node)} nodes, "
              f"{len(stored.graph.initializer)} initializers, {partial.stat().st_size} bytes")
        print("export_minilm_onnx: op types " + ", ".join(f"{op} {count}" for op, count in sorted(ops.items())))

        session = ort.InferenceSession(str(partial), providers=["CPUExecutionProvider"])
        worst = 0.0
        for label, case in check_cases(vocab_size):
            with torch.no_grad():
                expected = encoder(*(torch.from_numpy(case[name]) for name in INPUT_NAMES)).numpy()
            (actual,) = session.run(OUTPUT_NAMES, case)
            if actual.shape != expected.shape or actual.dtype != np.float32:
                sys.exit(f"export_minilm_onnx: {label}: onnxruntime gave {actual.dtype} {actual.shape}, "
                         f"torch float32 {expected.shape}")
            diff = float(np.max(np.abs(actual - expected)))
            worst = max(worst, diff)
            print(f"export_minilm_onnx: {label}: last_hidden_state {list(actual.shape)}, "
                  f"max |onnxruntime - torch| = {diff:.3e}")
        print(f"export_minilm_onnx: max |onnxruntime - torch| over all checks = {worst:.3e} (tolerance {args.tolerance:g})")
        if not worst <= args.tolerance:
            sys.exit("export_minilm_onnx: onnxruntime and torch disagree; the file is not kept")
        os.replace(partial, output)
    finally:
        if partial.exists():
            partial.unlink()
    print(f"export_minilm_onnx: wrote {output} in {time.perf_counter() - started:.1f} s in all")


if __name__ == "__main__":
    main()
