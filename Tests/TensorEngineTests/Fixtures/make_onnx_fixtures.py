#!/usr/bin/env python3
"""Writes the ONNX fixtures the Swift ONNX-import tests read, into Fixtures/onnx/ next to this script.

Run from anywhere, with onnx, onnxruntime and numpy installed (for example in a virtual environment
outside the repository), after scripts/fetch-onnx-model.sh:

    python3 -m venv /work/venv-onnx
    /work/venv-onnx/bin/pip install onnx onnxruntime numpy
    /work/venv-onnx/bin/python Tests/TensorEngineTests/Fixtures/make_onnx_fixtures.py

The tests never run Python; they read the files this script writes:

- paraphrase-MiniLM-L3-v2 reference data (the model itself is not copied; it is read from
  $TENSORENGINE_ONNX_MODEL_DIR, default ~/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2):
  for each case (`b1`, `b3`), every graph input as minilm_l3_<case>_<input>.npy (int64) and every
  graph output onnxruntime (CPUExecutionProvider) computes as minilm_l3_<case>_<output>.npy, with
  the output name made file-safe (characters other than letters, digits, '_', '-' and '.' become
  '_'; 'onnx::Shape_422' is written as 'onnx__Shape_422'). Float outputs are float32; the model's
  two int64 pass-through outputs (Identity of input_ids and attention_mask) keep int64.
  minilm_l3_cases.json lists the cases, the input and output names, file names, dtypes and shapes.
- Small hand-built models (opset 13, IR version 8), each checked with onnx.checker:
  tiny_mlp.onnx, tiny_shape_subgraph.onnx, unsupported_ops.onnx, external_data.onnx with its
  weights in external_data.bin, and their inputs and onnxruntime outputs as .npy files.
  tiny_models.json describes them (inputs, outputs, shapes, and the unsupported nodes).

Every .npy file is format version 1.0, little-endian, C order.
"""
import json
import os
import pathlib
import re

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
OUT = HERE / "onnx"
MODEL_DIR = pathlib.Path(
    os.environ.get(
        "TENSORENGINE_ONNX_MODEL_DIR",
        os.path.expanduser("~/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2"),
    )
)

OPSET = 13
IR_VERSION = 8

# BERT uncased WordPiece ids ([CLS] = 101, [SEP] = 102, [PAD] = 0), written out so that the script
# needs no tokenizer. The text each row encodes is given next to it.
MINILM_CASES = {
    # batch 1, sequence 9: "a man is eating some food ."
    "b1": [[101, 1037, 2158, 2003, 5983, 2070, 2833, 1012, 102]],
    # batch 3, sequence 12, rows of 12, 8 and 4 real tokens, padded with 0:
    # "the quick brown fox jumps over the lazy dog today", "a man is eating food .", "hello world"
    "b3": [
        [101, 1996, 4248, 2829, 4419, 14523, 2058, 1996, 13971, 3899, 2651, 102],
        [101, 1037, 2158, 2003, 5983, 2833, 1012, 102],
        [101, 7592, 2088, 102],
    ],
}


def file_safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def save_npy(name, array):
    path = OUT / name
    np.save(path, np.ascontiguousarray(array), allow_pickle=False)
    return name


def session(path):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def dims(value_info):
    return [
        d.dim_param if d.HasField("dim_param") else (d.dim_value if d.HasField("dim_value") else None)
        for d in value_info.type.tensor_type.shape.dim
    ]


def elem_type(value_info):
    return str(np.dtype(helper.tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type)))


def finish(model, name, external_location=None):
    """Checks a hand-built model and saves it under OUT; returns the file name."""
    model.ir_version = IR_VERSION
    model.producer_name = "make_onnx_fixtures.py"
    path = OUT / name
    if external_location is None:
        onnx.checker.check_model(model, full_check=True)
        onnx.save_model(model, str(path))
    else:
        # External tensors are resolved relative to the model file, so the check runs on the path.
        onnx.save_model(model, str(path))
        onnx.checker.check_model(str(path), full_check=True)
    return name


# MARK: - paraphrase-MiniLM-L3-v2


def minilm_fixtures():
    model_path = MODEL_DIR / "model.onnx"
    if not model_path.is_file():
        raise SystemExit(f"{model_path} is missing; run scripts/fetch-onnx-model.sh first")
    model = onnx.load(str(model_path), load_external_data=False)
    graph_inputs = [v.name for v in model.graph.input]
    sess = session(model_path)
    output_names = [o.name for o in sess.get_outputs()]

    cases = []
    for case, rows in MINILM_CASES.items():
        batch, seq = len(rows), max(len(r) for r in rows)
        input_ids = np.zeros((batch, seq), dtype=np.int64)
        attention_mask = np.zeros((batch, seq), dtype=np.int64)
        for i, row in enumerate(rows):
            input_ids[i, : len(row)] = row
            attention_mask[i, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in graph_inputs:
            feeds["token_type_ids"] = np.zeros((batch, seq), dtype=np.int64)
        unknown = set(graph_inputs) - set(feeds)
        if unknown:
            raise SystemExit(f"the model has inputs this script does not fill: {sorted(unknown)}")

        results = sess.run(output_names, feeds)
        entry = {
            "name": case,
            "batch": batch,
            "sequence": seq,
            "lengths": [len(r) for r in rows],
            "inputs": [],
            "outputs": [],
        }
        for name in graph_inputs:
            array = feeds[name]
            file = save_npy(f"minilm_l3_{case}_{file_safe(name)}.npy", array)
            entry["inputs"].append(
                {"name": name, "file": file, "dtype": str(array.dtype), "shape": list(array.shape)}
            )
        for name, array in zip(output_names, results):
            if array.dtype == np.float64:
                array = array.astype(np.float32)
            file = save_npy(f"minilm_l3_{case}_{file_safe(name)}.npy", array)
            entry["outputs"].append(
                {"name": name, "file": file, "dtype": str(array.dtype), "shape": list(array.shape)}
            )
        cases.append(entry)

    manifest = {
        "model": "paraphrase-MiniLM-L3-v2",
        "model_file": "model.onnx in $TENSORENGINE_ONNX_MODEL_DIR (scripts/fetch-onnx-model.sh)",
        "opset": {(o.domain or "ai.onnx"): o.version for o in model.opset_import},
        "ir_version": model.ir_version,
        "runtime": f"onnxruntime {ort.__version__} CPUExecutionProvider",
        "inputs": [
            {"name": v.name, "dtype": elem_type(v), "shape": dims(v)} for v in model.graph.input
        ],
        "outputs": [
            {"name": v.name, "file_name": file_safe(v.name), "dtype": elem_type(v), "shape": dims(v)}
            for v in model.graph.output
        ],
        "cases": cases,
    }
    (OUT / "minilm_l3_cases.json").write_text(json.dumps(manifest, indent=2) + "\n")


# MARK: - Hand-built models


def const_node(name, output, array):
    return helper.make_node(
        "Constant", [], [output], name=name, value=numpy_helper.from_array(array, name=output)
    )


def tiny_mlp(rng):
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul_0"),
            helper.make_node("Add", ["xw", "b"], ["xwb"], name="add_0"),
            helper.make_node("Relu", ["xwb"], ["h"], name="relu_0"),
            helper.make_node("Softmax", ["h"], ["y"], name="softmax_0", axis=-1),
        ],
        "tiny_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    name = finish(model, "tiny_mlp.onnx")

    x = rng.standard_normal((2, 4)).astype(np.float32)
    (y,) = session(OUT / name).run(["y"], {"x": x})
    h = np.maximum(x @ w + b, 0)
    expected = np.exp(h - h.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    assert np.allclose(y, expected, rtol=1e-5, atol=1e-6)
    return {
        "file": name,
        "inputs": [{"name": "x", "file": save_npy("tiny_mlp_x.npy", x), "shape": list(x.shape)}],
        "outputs": [{"name": "y", "file": save_npy("tiny_mlp_y.npy", y), "shape": list(y.shape)}],
        "graph_inputs": {"x": ["batch", 4]},
    }


def tiny_shape_subgraph(rng):
    # y = ReduceSum(Reshape(x, Concat(Unsqueeze(Shape(x)[0] * Shape(x)[1], [0]), [4])), [1])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape_0"),
        const_node("const_index_0", "index_0", np.array(0, dtype=np.int64)),
        const_node("const_index_1", "index_1", np.array(1, dtype=np.int64)),
        helper.make_node("Gather", ["shape", "index_0"], ["batch"], name="gather_batch", axis=0),
        helper.make_node("Gather", ["shape", "index_1"], ["seq"], name="gather_seq", axis=0),
        helper.make_node("Mul", ["batch", "seq"], ["rows"], name="mul_rows"),
        helper.make_node("Unsqueeze", ["rows", "unsqueeze_axes"], ["rows_1d"], name="unsqueeze_rows"),
        const_node("const_width", "width", np.array([4], dtype=np.int64)),
        helper.make_node("Concat", ["rows_1d", "width"], ["flat_shape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["x", "flat_shape"], ["flat"], name="reshape_0"),
        helper.make_node("ReduceSum", ["flat", "reduce_axes"], ["y"], name="reducesum_0", keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_shape_subgraph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows"])],
        initializer=[
            numpy_helper.from_array(np.array([0], dtype=np.int64), "unsqueeze_axes"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "reduce_axes"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    name = finish(model, "tiny_shape_subgraph.onnx")

    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    (y,) = session(OUT / name).run(["y"], {"x": x})
    assert y.shape == (6,) and np.allclose(y, x.reshape(6, 4).sum(1), rtol=1e-5, atol=1e-6)
    return {
        "file": name,
        "inputs": [
            {"name": "x", "file": save_npy("tiny_shape_subgraph_x.npy", x), "shape": list(x.shape)}
        ],
        "outputs": [
            {"name": "y", "file": save_npy("tiny_shape_subgraph_y.npy", y), "shape": list(y.shape)}
        ],
        "graph_inputs": {"x": ["batch", "seq", 4]},
    }


def unsupported_ops(rng):
    # LpPool and GlobalLpPool (standard domain) and com.example.Frobnicate (custom domain), with a
    # supported Relu in between and LpPool used twice, so a complete error lists four nodes.
    del rng  # no weights
    nodes = [
        helper.make_node("LpPool", ["x"], ["c0"], name="lppool_0", kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"], name="relu_0"),
        helper.make_node("GlobalLpPool", ["r0"], ["p0"], name="pool_0"),
        helper.make_node("LpPool", ["p0"], ["c1"], name="lppool_1", kernel_shape=[1, 1]),
        helper.make_node("Frobnicate", ["c1"], ["y"], name="frobnicate_0", domain="com.example"),
    ]
    graph = helper.make_graph(
        nodes,
        "unsupported_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 1, 1])],
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.example", 1)],
    )
    model.ir_version = IR_VERSION
    # The checker does not know com.example ops; it checks the structure, not that domain's schemas.
    onnx.checker.check_model(model)
    name = "unsupported_ops.onnx"
    model.producer_name = "make_onnx_fixtures.py"
    onnx.save_model(model, str(OUT / name))
    return {
        "file": name,
        "graph_inputs": {"x": [1, 1, 4, 4]},
        "unsupported_nodes": [
            {"name": "lppool_0", "op_type": "LpPool", "domain": ""},
            {"name": "pool_0", "op_type": "GlobalLpPool", "domain": ""},
            {"name": "lppool_1", "op_type": "LpPool", "domain": ""},
            {"name": "frobnicate_0", "op_type": "Frobnicate", "domain": "com.example"},
        ],
        "supported_nodes": [{"name": "relu_0", "op_type": "Relu", "domain": ""}],
    }


def external_data(rng):
    # y = MatMul(x, w) + b, with w [4, 3] float32 in external_data.bin (offset 0, 48 bytes) and
    # b [3] stored inline, so one model has both kinds of initializer.
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    location = "external_data.bin"
    raw = w.astype("<f4").tobytes()
    (OUT / location).write_bytes(raw)
    w_tensor = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=list(w.shape))
    w_tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", str(len(raw)))):
        entry = w_tensor.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul_0"),
            helper.make_node("Add", ["xw", "b"], ["y"], name="add_0"),
        ],
        "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[w_tensor, numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    name = finish(model, "external_data.onnx", external_location=location)

    x = rng.standard_normal((2, 4)).astype(np.float32)
    (y,) = session(OUT / name).run(["y"], {"x": x})
    assert np.allclose(y, x @ w + b, rtol=1e-5, atol=1e-6)
    return {
        "file": name,
        "external_data": {"tensor": "w", "location": location, "offset": 0, "length": len(raw),
                          "shape": list(w.shape), "dtype": "float32"},
        "inputs": [{"name": "x", "file": save_npy("external_data_x.npy", x), "shape": list(x.shape)}],
        "outputs": [{"name": "y", "file": save_npy("external_data_y.npy", y), "shape": list(y.shape)}],
        "graph_inputs": {"x": [2, 4]},
    }


def main():
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(20240601)
    minilm_fixtures()
    models = {
        "opset": OPSET,
        "ir_version": IR_VERSION,
        "runtime": f"onnxruntime {ort.__version__} CPUExecutionProvider",
        "models": {
            "tiny_mlp": tiny_mlp(rng),
            "tiny_shape_subgraph": tiny_shape_subgraph(rng),
            "unsupported_ops": unsupported_ops(rng),
            "external_data": external_data(rng),
        },
    }
    (OUT / "tiny_models.json").write_text(json.dumps(models, indent=2) + "\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {len(list(OUT.iterdir()))} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
