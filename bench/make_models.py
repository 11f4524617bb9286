#!/usr/bin/env python3
"""Writes the small ONNX models of the onnx-conv*, onnx-resnet-block-64 and onnx-dispatch-1000 benchmark
workloads into bench/models/.

    python3 bench/make_models.py

Needs onnx and numpy. Every model is float32, opset 17, with one input "x" and one output "y", and
fixed-seed NumPy weights (conv weights ~ N(0, 1/fan_in), biases and BatchNorm shifts ~ N(0, 0.1^2),
BatchNorm scales and variances ~ U(0.5, 1.5)):

- conv3x3-64.onnx: Conv 3x3, 64 -> 64, pads 1, with bias, on x [1, 64, 56, 56];
- conv1x1-256.onnx: Conv 1x1, 256 -> 64, with bias, on x [1, 256, 56, 56];
- depthwise3x3-32.onnx: Conv 3x3, group 32, 32 -> 32, pads 1, with bias, on x [1, 32, 112, 112];
- resnet-block-64.onnx: Relu(BN(Conv3x3(Relu(BN(Conv3x3(x))))) + x), 64 channels, on x [1, 64, 56, 56];
- dispatch-1000.onnx: 1000 scalar steps on x [] (a scalar), x * 1.0001 at even steps and x + 0.0001 at odd
  ones, each with its own constant: the graph bench/peers.py gives onnxruntime for dispatch-1000.

It then prints, for each model and for the onnx-light-* models of ONNX's test data (when
scripts/fetch-onnx-tests.sh has put them in $TENSORENGINE_ONNX_TESTS_DIR), the FLOPs and essential
bytes that bench/peers.py's WORKLOADS give them: FLOPs = sum over Conv nodes of
2 * output elements * input channels per group * kernel elements (from onnx shape inference);
bytes = weights (float initializers the nodes use, and ConstantOfShape outputs) + input + output.
"""
import os
import pathlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODELS = pathlib.Path(__file__).resolve().parent / "models"
LIGHT = pathlib.Path(os.environ.get("TENSORENGINE_ONNX_TESTS_DIR")
                     or os.path.expanduser("~/.cache/tensorengine/onnx-tests/onnx-1.22.0")) / "light"
OPSET = 17
IR_VERSION = 8


class Builder:
    """Nodes and initializers of one graph, with seeded weights."""

    def __init__(self, rng):
        self.rng, self.nodes, self.initializers = rng, [], []

    def constant(self, name, array):
        self.initializers.append(numpy_helper.from_array(array.astype(np.float32), name))
        return name

    def conv(self, x, cin, cout, kernel, name, pads=0, group=1, out=None):
        fan_in = cin // group * kernel * kernel
        w = self.rng.standard_normal((cout, cin // group, kernel, kernel)) / np.sqrt(fan_in)
        b = self.rng.standard_normal(cout) * 0.1
        inputs = [x, self.constant(f"{name}_w", w), self.constant(f"{name}_b", b)]
        self.nodes.append(helper.make_node("Conv", inputs, [out or name], name=name, kernel_shape=[kernel, kernel],
                                           pads=[pads] * 4, group=group))
        return out or name

    def batch_norm(self, x, channels, name):
        scale, bias = self.rng.uniform(0.5, 1.5, channels), self.rng.standard_normal(channels) * 0.1
        mean, var = self.rng.standard_normal(channels) * 0.1, self.rng.uniform(0.5, 1.5, channels)
        inputs = [x] + [self.constant(f"{name}_{k}", v) for k, v in
                        (("scale", scale), ("bias", bias), ("mean", mean), ("var", var))]
        self.nodes.append(helper.make_node("BatchNormalization", inputs, [name], name=name, epsilon=1e-5))
        return name

    def scalar(self, value, name):
        return self.constant(name, np.asarray(value, dtype=np.float32))

    def op(self, op_type, inputs, name):
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name))
        return name

    def save(self, file, x_shape, y_shape):
        graph = helper.make_graph(self.nodes, file.removesuffix(".onnx"),
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                                  initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="make_models.py")
        model.ir_version = IR_VERSION
        onnx.checker.check_model(model, full_check=True)
        onnx.save_model(model, str(MODELS / file))
        return MODELS / file


def conv_models():
    b = Builder(np.random.default_rng(1))
    b.conv("x", 64, 64, 3, "conv", pads=1, out="y")
    yield b.save("conv3x3-64.onnx", [1, 64, 56, 56], [1, 64, 56, 56])

    b = Builder(np.random.default_rng(2))
    b.conv("x", 256, 64, 1, "conv", out="y")
    yield b.save("conv1x1-256.onnx", [1, 256, 56, 56], [1, 64, 56, 56])

    b = Builder(np.random.default_rng(3))
    b.conv("x", 32, 32, 3, "conv", pads=1, group=32, out="y")
    yield b.save("depthwise3x3-32.onnx", [1, 32, 112, 112], [1, 32, 112, 112])

    b = Builder(np.random.default_rng(4))
    h = b.op("Relu", [b.batch_norm(b.conv("x", 64, 64, 3, "conv1", pads=1), 64, "bn1")], "relu1")
    h = b.op("Add", [b.batch_norm(b.conv(h, 64, 64, 3, "conv2", pads=1), 64, "bn2"), "x"], "add")
    b.op("Relu", [h], "y")
    yield b.save("resnet-block-64.onnx", [1, 64, 56, 56], [1, 64, 56, 56])


def dispatch_model():
    b = Builder(np.random.default_rng(5))
    value = "x"
    for step in range(1000):
        last = step == 999
        if step % 2 == 0:
            value = b.op("Mul", [value, b.scalar(1.0001, f"c{step}")], "y" if last else f"mul{step}")
        else:
            value = b.op("Add", [value, b.scalar(0.0001, f"c{step}")], "y" if last else f"add{step}")
    return b.save("dispatch-1000.onnx", [], [])


def cost(path):
    """(FLOPs of the Conv nodes, weight + input + output bytes) of a model, from onnx shape inference."""
    model = onnx.shape_inference.infer_shapes(onnx.load(str(path)), strict_mode=True)
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    typed = {}
    for v in list(graph.input) + list(graph.value_info) + list(graph.output):
        t = v.type.tensor_type
        typed[v.name] = ([d.dim_value for d in t.shape.dim], np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)))
    for t in graph.initializer:
        typed[t.name] = (list(t.dims), np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)))

    def nbytes(name):
        shape, dtype = typed[name]
        if any(d <= 0 for d in shape):
            raise ValueError(f"{path.name}: {name} has no static shape")
        return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize

    flops = 0
    for node in graph.node:
        if node.op_type == "Conv":
            out, weight = typed[node.output[0]][0], typed[node.input[1]][0]
            flops += 2 * int(np.prod(out, dtype=np.int64)) * int(np.prod(weight[1:], dtype=np.int64))
    used = {name for node in graph.node for name in node.input}
    weights = [t.name for t in graph.initializer if t.data_type == TensorProto.FLOAT and t.name in used]
    weights += [n.output[0] for n in graph.node if n.op_type == "ConstantOfShape"]
    data = [v.name for v in graph.input if v.name not in initializers] + [v.name for v in graph.output]
    return flops, sum(nbytes(name) for name in weights + data)


def main():
    MODELS.mkdir(exist_ok=True)
    paths = list(conv_models())
    paths.append(dispatch_model())
    print(f"{'model':<26} {'file bytes':>10} {'flops':>14} {'bytes':>12}")
    for path in paths + [LIGHT / f"light_{n}.onnx" for n in ("resnet50", "squeezenet")]:
        if path.is_file():
            flops, essential = cost(path)
            print(f"{path.name:<26} {path.stat().st_size:>10} {flops:>14} {essential:>12}")
        else:
            print(f"{path.name:<26} not found (scripts/fetch-onnx-tests.sh)")
    print(f"wrote {len(paths)} models to {MODELS}")


if __name__ == "__main__":
    main()
