#!/usr/bin/env python3
"""Writes two small convolutional ONNX fixtures, with inputs and onnxruntime outputs, next to this script.

Run from anywhere, with torch (CPU), onnx, onnxruntime and numpy installed:

    python3 Tests/TensorEngineTests/Fixtures/onnx/make_onnx_resnet_fixtures.py

The tests never run Python; they read the files this script writes (into this script's folder):

- resnet_tiny.onnx: a ResNet-18-shaped network with widths 8, 16, 32, 64: a 3x3 stem conv, BatchNorm,
  ReLU and MaxPool 3x3 stride 2 padding 1; four stages of two BasicBlocks (3x3 convs, BatchNorm, ReLU,
  a 1x1 stride-2 conv + BatchNorm shortcut on the first block of stages 2-4); global average pool,
  flatten and a Linear layer to 10 classes. BatchNorm has random running statistics, scale and shift,
  and is exported as BatchNormalization nodes (not folded into the convs).
  resnet_tiny_input.npy: float32 [2, 3, 32, 32]; resnet_tiny_logits.npy: float32 [2, 10].
- cnn_mix.onnx: a grouped conv (groups 2), a depthwise 3x3 conv with dilation 2, MaxPool 2 with
  ceil_mode, ConvTranspose stride 2 with output_padding 1, AveragePool 3 stride 2 padding 1 with
  ceil_mode and count_include_pad=0, a bias-free 1x3 conv, and LeakyRelu, HardSwish, Sigmoid.
  cnn_mix_input.npy: float32 [1, 4, 17, 19]; cnn_mix_output.npy: float32 [1, 5, 10, 11].
- cnn_models.json: the models' files, input and output names, files and shapes, graph input dims
  and op counts, in the layout of tiny_models.json.

Both models are exported with torch.onnx.export (TorchScript exporter, opset 17) with a dynamic batch
axis "batch". Expected outputs are onnxruntime's (CPUExecutionProvider); the script checks that torch
agrees within 1e-4 and exits with status 1 otherwise. Every .npy file is format version 1.0,
little-endian, C order.
"""
import collections
import inspect
import json
import pathlib
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent
OPSET = 17
TOLERANCE = 1e-4
SEED = 20240917


def randomize_batch_norms(model, generator):
    """Gives every BatchNorm non-trivial statistics and affine parameters, so none is an identity."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            c = module.num_features
            module.weight.copy_(torch.rand(c, generator=generator) + 0.5)
            module.bias.copy_(torch.randn(c, generator=generator) * 0.2)
            module.running_mean.copy_(torch.randn(c, generator=generator) * 0.2)
            module.running_var.copy_(torch.rand(c, generator=generator) + 0.5)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(y)) + identity)


class ResNetTiny(nn.Module):
    def __init__(self, widths=(8, 16, 32, 64), classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        stages, cin = [], widths[0]
        for index, width in enumerate(widths):
            stride = 1 if index == 0 else 2
            stages += [BasicBlock(cin, width, stride), BasicBlock(width, width, 1)]
            cin = width
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(widths[-1], classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.stages(self.stem(x))), 1))


class CnnMix(nn.Module):
    """[N, 4, 17, 19] -> [N, 5, 10, 11]; the sizes along the way are in the comments."""

    def __init__(self):
        super().__init__()
        self.grouped = nn.Conv2d(4, 8, 3, padding=1, groups=2)                      # 8 x 17 x 19
        self.depthwise = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8)        # 8 x 17 x 19
        self.max_pool = nn.MaxPool2d(2, ceil_mode=True)                             # 8 x 9 x 10
        self.up = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)  # 6 x 18 x 20
        self.avg_pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)  # 6 x 10 x 11
        self.head = nn.Conv2d(6, 5, (1, 3), padding=(0, 1), bias=False)             # 5 x 10 x 11
        self.leaky = nn.LeakyReLU(0.1)
        self.hardswish = nn.Hardswish()

    def forward(self, x):
        x = self.leaky(self.grouped(x))
        x = self.max_pool(self.hardswish(self.depthwise(x)))
        x = self.avg_pool(torch.sigmoid(self.up(x)))
        return torch.sigmoid(self.head(x))


def export(model, example, name, output_name):
    """Exports with the TorchScript exporter, BatchNorm kept as nodes, batch axis dynamic."""
    path = OUT / f"{name}.onnx"
    options = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        options["dynamo"] = False
    # PRESERVE (with the model in eval mode) skips the eval-mode pass that folds BatchNorm into Conv.
    # The exporter's warnings (legacy exporter; constant folding outside EVAL) do not apply here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*constant folding.*", category=UserWarning)
        torch.onnx.export(model, (example,), str(path), input_names=["input"], output_names=[output_name],
                          opset_version=OPSET, do_constant_folding=True, training=torch.onnx.TrainingMode.PRESERVE,
                          dynamic_axes={"input": {0: "batch"}, output_name: {0: "batch"}}, **options)
    onnx.checker.check_model(str(path), full_check=True)
    return path


def dims(value_info):
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in value_info.type.tensor_type.shape.dim]


def fixture(model, name, input_shape, output_name, output_file, rng):
    model.eval()
    x = rng.standard_normal(input_shape).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    path = export(model, torch.from_numpy(x), name, output_name)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (y,) = session.run([output_name], {"input": x})
    diff = float(np.max(np.abs(y - expected)))
    print(f"make_onnx_resnet_fixtures: {name}: torch vs onnxruntime max abs diff {diff:.3e} "
          f"(output {list(y.shape)}, max |y| {float(np.max(np.abs(y))):.3g})")
    if not diff <= TOLERANCE:
        sys.exit(f"make_onnx_resnet_fixtures: {name}: difference above {TOLERANCE:g}")
    input_file, output_file = f"{name}_input.npy", f"{name}_{output_file}.npy"
    np.save(OUT / input_file, np.ascontiguousarray(x), allow_pickle=False)
    np.save(OUT / output_file, np.ascontiguousarray(y.astype(np.float32)), allow_pickle=False)
    graph = onnx.load(str(path)).graph
    ops = collections.Counter(node.op_type for node in graph.node)
    print(f"make_onnx_resnet_fixtures: {name}: {dict(sorted(ops.items()))}")
    return {
        "file": path.name,
        "inputs": [{"name": "input", "file": input_file, "shape": list(x.shape)}],
        "outputs": [{"name": output_name, "file": output_file, "shape": list(y.shape)}],
        "graph_inputs": {v.name: dims(v) for v in graph.input},
        "ops": dict(sorted(ops.items())),
        "torch_max_abs_diff": diff,
    }


def main():
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    rng = np.random.default_rng(SEED)
    with torch.no_grad():
        resnet, mix = ResNetTiny(), CnnMix()
        randomize_batch_norms(resnet, generator)
    models = {
        "opset": OPSET,
        "runtime": f"onnxruntime {ort.__version__} CPUExecutionProvider",
        "exporter": f"torch {torch.__version__} torch.onnx.export (TorchScript)",
        "models": {
            "resnet_tiny": fixture(resnet, "resnet_tiny", (2, 3, 32, 32), "logits", "logits", rng),
            "cnn_mix": fixture(mix, "cnn_mix", (1, 4, 17, 19), "output", "output", rng),
        },
    }
    (OUT / "cnn_models.json").write_text(json.dumps(models, indent=2) + "\n")
    for entry in models["models"].values():
        files = [entry["file"]] + [f["file"] for f in entry["inputs"] + entry["outputs"]]
        print("make_onnx_resnet_fixtures: " + ", ".join(f"{f} {(OUT / f).stat().st_size} B" for f in files))


if __name__ == "__main__":
    main()
