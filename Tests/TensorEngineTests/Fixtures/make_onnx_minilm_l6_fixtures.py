#!/usr/bin/env python3
"""Writes the all-MiniLM-L6-v2 ONNX fixtures the Swift ONNX-import tests read, into Fixtures/onnx/.

Run from anywhere, with onnxruntime and numpy installed, after scripts/fetch-minilm-onnx.sh (or
scripts/export_minilm_onnx.py) has written the model:

    python3 -m venv /work/venv-onnx
    /work/venv-onnx/bin/pip install onnxruntime numpy
    /work/venv-onnx/bin/python Tests/TensorEngineTests/Fixtures/make_onnx_minilm_l6_fixtures.py

It reads model.onnx from $TENSORENGINE_MODEL_DIR (default
~/.cache/tensorengine/models/all-MiniLM-L6-v2; the model itself is not copied), takes the token ids
of the first four sentences in minilm_reference.json ("Hello world", "A man is eating food.",
"The quick brown fox jumps over the lazy dog!", "Hi"; 4, 8, 12 and 3 tokens), right-pads them with
0 to the longest (batch 4, sequence 12), and writes:

- onnx/minilm_l6_input_ids.npy: int64 [4, 12], padding 0;
- onnx/minilm_l6_attention_mask.npy: int64 [4, 12], 1 for real tokens, 0 for padding;
- onnx/minilm_l6_token_type_ids.npy: int64 [4, 12], all 0;
- onnx/minilm_l6_last_hidden_state.npy: float32 [4, 12, 384], the model's last_hidden_state from
  onnxruntime (CPUExecutionProvider), padded positions included.

Every .npy file is format version 1.0, little-endian, C order. As a check, it mean-pools
last_hidden_state over the real tokens, L2-normalizes the result and compares it with the first four
rows of minilm_embeddings.npy (sentence-transformers, one sentence at a time, no padding); it prints
the largest absolute difference and exits with status 1 when it is above --tolerance.
"""
import argparse
import json
import os
import pathlib
import sys

import numpy as np
import onnxruntime as ort

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "onnx"
MODEL_DIR = pathlib.Path(
    os.environ.get(
        "TENSORENGINE_MODEL_DIR",
        os.path.expanduser("~/.cache/tensorengine/models/all-MiniLM-L6-v2"),
    )
)
SENTENCE_COUNT = 4
PREFIX = "minilm_l6_"


def save_npy(name, array):
    np.save(OUT / name, np.ascontiguousarray(array), allow_pickle=False)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=str(MODEL_DIR / "model.onnx"), help="ONNX file (default: %(default)s)")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest accepted difference from minilm_embeddings.npy (default: %(default)g)")
    args = parser.parse_args()
    model = pathlib.Path(args.model).expanduser()
    if not model.is_file():
        sys.exit(f"make_onnx_minilm_l6_fixtures: no {model}; run scripts/fetch-minilm-onnx.sh first")

    reference = json.loads((HERE / "minilm_reference.json").read_text(encoding="utf-8"))
    token_ids = reference["token_ids"][:SENTENCE_COUNT]
    sequence = max(len(ids) for ids in token_ids)
    input_ids = np.zeros((len(token_ids), sequence), dtype=np.int64)
    attention_mask = np.zeros((len(token_ids), sequence), dtype=np.int64)
    for row, ids in enumerate(token_ids):
        input_ids[row, : len(ids)] = ids
        attention_mask[row, : len(ids)] = 1
    token_type_ids = np.zeros_like(input_ids)

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    (hidden,) = session.run(
        ["last_hidden_state"],
        {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids},
    )
    hidden = hidden.astype(np.float32, copy=False)
    if hidden.shape != (len(token_ids), sequence, 384):
        sys.exit(f"make_onnx_minilm_l6_fixtures: last_hidden_state has shape {hidden.shape}")

    mask = attention_mask[:, :, None].astype(np.float32)
    pooled = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    expected = np.load(HERE / "minilm_embeddings.npy")[:SENTENCE_COUNT]
    diff = float(np.max(np.abs(pooled - expected)))
    print(f"make_onnx_minilm_l6_fixtures: onnxruntime {ort.__version__}, {model}")
    print(f"make_onnx_minilm_l6_fixtures: mean-pooled, normalized vs minilm_embeddings.npy: max abs diff {diff:.3e}")
    if not diff <= args.tolerance:
        sys.exit(f"make_onnx_minilm_l6_fixtures: difference above {args.tolerance:g}; nothing written")

    OUT.mkdir(exist_ok=True)
    save_npy(PREFIX + "input_ids.npy", input_ids)
    save_npy(PREFIX + "attention_mask.npy", attention_mask)
    save_npy(PREFIX + "token_type_ids.npy", token_type_ids)
    save_npy(PREFIX + "last_hidden_state.npy", hidden)
    print(f"make_onnx_minilm_l6_fixtures: wrote {PREFIX}*.npy for batch {len(token_ids)}, sequence {sequence} "
          f"(token counts {[len(ids) for ids in token_ids]}) to {OUT}")


if __name__ == "__main__":
    main()
