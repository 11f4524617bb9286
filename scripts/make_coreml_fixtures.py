#!/usr/bin/env python3
"""Writes the Core ML fixtures the Swift Core ML tests read, into
Tests/TensorEngineTests/Fixtures/coreml/.

Run from anywhere (it finds the repository from its own path), with the packages below installed in
a virtual environment outside the repository:

    python3 -m venv /tmp/fx
    /tmp/fx/bin/pip install torch==2.7.0 coremltools==9.0 scikit-learn==1.5.1 numpy
    /tmp/fx/bin/python scripts/make_coreml_fixtures.py

Versions used for the committed files: Python 3.11, torch 2.7.0 (CPU execution), coremltools 9.0,
numpy 2.x, scikit-learn 1.5.1 (coremltools' k-means palettization calls sklearn.cluster.KMeans with
random_state=0; coremltools 9.0 declares 1.5.1 as the newest scikit-learn it supports). The script
runs on Linux: Core ML itself is never called (MLModel.predict only runs on macOS), so every
reference output comes from torch running the same module that was traced and converted.

It is deterministic (a rerun with the same versions gives byte-identical files): fixed seeds, one
torch thread, every model.mlmodel rewritten with protobuf's deterministic serialization (coremltools
writes map fields in varying order), and the random UUIDs coremltools writes into each package's
Manifest.json replaced by fixed ones (uuid5 of the model name and item path).

What it writes (every model is tiny; all files together are well under 2 MB):

- cnn.mlpackage: ML Program, iOS17 target (spec 8, opset CoreML7), FLOAT32 compute precision.
  Input `image` float32 [1,3,16,16]; outputs `probs` float32 [1,10] and `features` float32
  [1,16,8,8]. Conv+BatchNorm+ReLU, depthwise conv+SiLU, max pool, 1x1 conv+hardswish, avg pool,
  nearest and bilinear upsampling, transposed conv, concat, global mean, flatten, linear, softmax.
  The pass `common::fuse_conv_batchnorm` is removed from the default pipeline so the program keeps
  a `batch_norm` op.
- cnn_palettized.mlpackage: cnn.mlpackage with ct.optimize.coreml.palettize_weights (4-bit kmeans,
  per-tensor, weight_threshold=64): `constexpr_lut_to_dense` (iOS16 form) for every conv/linear
  weight. Its references come from torch with the palettized (decompressed) weights loaded.
- cnn_image.mlpackage: the same CNN with an image input (ct.ImageType, RGB, scale 1/255, bias -0.5):
  Core ML feeds pixels 0-255 and the program scales them; the references are torch on
  pixels / 255 - 0.5, the input saved is the pixels as float32 [1,3,16,16].
- cnn_flexible.mlpackage: the same CNN with open image sizes (RangeDim 8...32 for height and width),
  its saved input 24 x 20.
- encoder.mlpackage: ML Program, iOS16 target (spec 7, opset CoreML6), FLOAT32. A 2-layer BERT-style
  encoder (vocab 64, hidden 32, 4 heads, GELU MLP 32->64->32). Inputs `input_ids` int32 [1,8] and
  `attention_mask` int32 [1,8] (two trailing zeros); outputs `last_hidden_state` float32 [1,8,32] and
  `pooled` float32 [1,32].
- encoder_fp16.mlpackage: the same module converted with FLOAT16 compute precision and the default
  ML Program target (iOS15: spec 6, opset CoreML5): fp16 weights and activations inside, float32 at
  the interface. Its reference outputs are the float32 torch outputs of encoder (compare with a
  float16-sized tolerance).
- encoder_int8.mlpackage: encoder.mlpackage (iOS16) with ct.optimize.coreml.linear_quantize_weights
  (linear_symmetric, int8, per-channel, weight_threshold=512): `constexpr_affine_dequantize` for the
  token embedding and every Linear weight.
- encoder_int8_ios18.mlpackage: the encoder converted for iOS18 (spec 9, opset CoreML8), FLOAT32,
  then quantized with the same settings: `constexpr_blockwise_shift_scale`.
  The references of both int8 models come from torch with the dequantized weights loaded.
- stateful.mlpackage: ML Program, iOS18 target, FLOAT32 compute precision, three states:
  `accumulator` [1,4], `key_cache` [1,6,8], `value_cache` [1,6,8]. Core ML states must be float16
  (coremltools refuses float32 states: "State only support fp16 dtype"), so the states are declared
  float16 and the program casts around read_state / coreml_update_state; the torch reference rounds
  each buffer to float16 after every write, which is what the program computes. Inputs `x` float32
  [1,4], `token` float32 [1,8], `position` int32 [1]; outputs `sum` float32 [1,4] (2 * accumulator
  after adding x) and `attended` float32 [1,8] (attention of a query from `token` over the key/value
  cache after writing this token's key/value at `position`, positions > position masked with
  -10000). Four steps (positions 0..3) on one state that starts at zeros.
- ops_mix.mlpackage: ML Program, iOS17 target, FLOAT32. One module (OpsMix) for operation types the
  other models do not have. Inputs `x` float32 [2,4,6] and `y` float32 [2,6,3]; 25 float32 outputs
  (MIX_OUTPUTS): torch.gather / Tensor.scatter / Tensor.scatter_add along the last axis with fixed
  indices (gather_along_axis, scatter_along_axis update and add), einsum "bij,bjk->bik" and
  "bij,bkj->bik" (matmul, the second with transpose_y), F.one_hot of a fixed class tensor times x
  (one_hot, cast), nn.LocalResponseNorm on a [2,4,2,3] view (coremltools decomposes it: pad, 3-D
  avg_pool, pow, real_div), flip (reverse), cumsum, topk values, argsort (cast to float), F.pad
  reflect / replicate / constant 0.5 on a [1,2,4,6] view, max along a dim (reduce_max and
  reduce_argmax, the indices cast to float), chunk (split), roll (two gathers), layer_norm over the
  last two dims, GroupNorm (decomposed: reduce_mean, square, sqrt, real_div), InstanceNorm1d with
  affine weights (instance_norm), bilinear resize to 7 x 9 with align_corners=True, nearest
  upsampling by 2 x 3, pixel_shuffle, and `unary`, a stack [13,2,4,6] of clamp, where, elu,
  leaky_relu, softplus, PReLU (per channel, on a rank-4 view: Core ML's prelu needs rank 4 for
  distinct alphas), remainder and floor_divide by 0.7 (floor_div, mul, sub), erf, sqrt(|x|+1),
  rsqrt(|x|+1), hardtanh and sign, in MIX_UNARY's order.
- lstm.mlpackage: ML Program, iOS17 target, FLOAT32. Input `x` float32 [1,7,5]; nn.LSTM(5, 4,
  batch_first=True) (outputs `lstm_output` [1,7,4], its final `lstm_h` and `lstm_c` [1,1,4]), then
  nn.GRU(4, 3, batch_first=True) on the LSTM's sequence (`gru_output` [1,7,3]; coremltools unrolls
  it into a while_loop of linear / sigmoid / tanh ops and a scatter), and a bidirectional
  nn.LSTM(5, 3) run sequence-first on x transposed to [7,1,5] (`bilstm_output` [1,7,6], forward then
  backward halves). Random weights and biases (scale 0.4).
- scatter_gather_nd.mlpackage: ML Program, iOS17 target, FLOAT32. Inputs `x` float32 [4,6,3] and `u`
  float32 [5,3]; outputs `gathered_pairs` [5,3] (x[a, b]), `gathered_points` [5] (x[a, b, c]),
  `gathered_mixed` [3,6] (x[a, :, c]), all gather_nd with fixed indices; `put` (index_put of u[:3]
  at 3 (a, b) pairs), `put_accumulate` (index_put with accumulate=True, two pairs repeated) and
  `put_rows` (index_put of 2 rows), all scatter_nd (update / add); `masked` (masked_fill: less,
  select), each [4,6,3].
- classifier.mlmodel: a pre-ML-Program neural-network model of one Linear layer 4 -> 3 (input
  `features` [1,4], output `scores`), converted with convert_to="neuralnetwork" and
  minimum_deployment_target iOS14; coremltools writes the lowest version that holds it
  (specificationVersion 4). Only for checking that such models are reported as unsupported; no
  references.

Reference data, all .npy format 1.0, little-endian, C order, float32 for float data and int32 for
integer data:

- <model>_input_<name>.npy and <model>_output_<name>.npy for cnn, cnn_palettized, encoder,
  encoder_fp16, encoder_int8, encoder_int8_ios18, ops_mix, lstm, scatter_gather_nd (the outputs
  of ops_mix that are indices, argsort and max_indices, are stored as float32 like the program's);
- stateful_step<k>_input_<name>.npy and stateful_step<k>_output_<name>.npy for k = 0..3, and the
  float16-rounded state after step 3 (stored as float32) as stateful_final_<state>.npy.

README.md in the same folder lists each model's specification version, opset, MIL operation types in
`main`, inputs, outputs and file sizes.
"""
import itertools
import json
import logging
import math
import pathlib
import shutil
import tempfile
import uuid
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import coremltools as ct
import coremltools.optimize.coreml as cto

REPO = pathlib.Path(__file__).resolve().parent.parent
OUT = REPO / "Tests" / "TensorEngineTests" / "Fixtures" / "coreml"

logging.getLogger("coremltools").setLevel(logging.ERROR)
warnings.filterwarnings("ignore")
torch.set_num_threads(1)


def seed(n):
    torch.manual_seed(n)
    np.random.seed(n)


# ---------------------------------------------------------------------------------------------
# Models


class CNN(nn.Module):
    """[1,3,16,16] -> probs [1,10], features [1,16,8,8]."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pool = nn.MaxPool2d(2)
        self.pw = nn.Conv2d(8, 16, 1)
        self.avg = nn.AvgPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.deconv = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.fc = nn.Linear(16, 10)

    def forward(self, image):
        x = F.relu(self.bn1(self.conv1(image)))  # [1,8,16,16]
        x = F.silu(self.dw(x))  # [1,8,16,16]
        x = self.pool(x)  # [1,8,8,8]
        y = F.hardswish(self.pw(x))  # [1,16,8,8]
        a = self.avg(y)  # [1,16,4,4]
        t = self.deconv(a)  # [1,8,8,8]
        features = torch.cat([t, x], dim=1)  # [1,16,8,8]
        features = features + self.up(a) + F.interpolate(
            a, scale_factor=2.0, mode="bilinear", align_corners=False
        )
        g = features.mean((2, 3), keepdim=True)  # [1,16,1,1]
        g = torch.flatten(g, 1)  # [1,16]
        probs = torch.softmax(self.fc(g), dim=1)
        return probs, features


SEQ = 8  # the encoder's fixed sequence length (batch 1)


class EncoderLayer(nn.Module):
    def __init__(self, hidden=32, heads=4, inter=64):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, inter)
        self.fc2 = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def forward(self, h, additive_mask):
        # Python ints, not h.shape: traced size ops end up as an `int` cast that coremltools 9.0
        # fails to convert ("only 0-dimensional arrays can be converted to Python scalars").
        b, l, d = 1, SEQ, self.heads * self.head_dim

        def split(t):
            return t.reshape(b, l, self.heads, self.head_dim).permute(0, 2, 1, 3)

        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.head_dim))
        probs = torch.softmax(scores + additive_mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, l, d)
        h = self.ln1(h + self.o(ctx))
        h = self.ln2(h + self.fc2(F.gelu(self.fc1(h))))
        return h


class Encoder(nn.Module):
    def __init__(self, vocab=64, hidden=32, max_pos=8, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.ln = nn.LayerNorm(hidden)
        self.layers = nn.ModuleList([EncoderLayer(hidden) for _ in range(layers)])
        self.pool = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        h = self.tok(input_ids) + self.pos.weight[:SEQ].unsqueeze(0)
        h = self.ln(h)
        additive_mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            h = layer(h, additive_mask)
        pooled = torch.tanh(self.pool(h[:, 0]))
        return h, pooled


class Stateful(nn.Module):
    """Accumulator and a 6-position key/value cache kept in registered buffers (Core ML states)."""

    def __init__(self, width=8, positions=6):
        super().__init__()
        self.width = width
        self.positions = positions
        self.register_buffer("accumulator", torch.zeros(1, 4))
        self.register_buffer("key_cache", torch.zeros(1, positions, width))
        self.register_buffer("value_cache", torch.zeros(1, positions, width))
        self.wq = nn.Linear(width, width)
        self.wk = nn.Linear(width, width)
        self.wv = nn.Linear(width, width)
        # Not traced: set for the reference run to round every state write to float16 the way the
        # converted program does (states are float16 in Core ML).
        self.round_states_to_fp16 = False

    def _round(self, buf):
        if self.round_states_to_fp16:
            buf.copy_(buf.half().float())

    def forward(self, x, token, position):
        self.accumulator += x
        self._round(self.accumulator)
        total = self.accumulator * 2.0
        q = self.wq(token)
        k = self.wk(token)
        v = self.wv(token)
        p = position[0]
        self.key_cache[:, p : p + 1, :] = k[:, None, :]
        self._round(self.key_cache)
        self.value_cache[:, p : p + 1, :] = v[:, None, :]
        self._round(self.value_cache)
        scores = torch.matmul(q[:, None, :], self.key_cache.transpose(1, 2)) * (
            1.0 / math.sqrt(self.width)
        )  # [1,1,6]
        idx = torch.arange(self.positions, dtype=torch.int32)
        mask = (idx > position).float() * -10000.0
        weights = torch.softmax(scores + mask, dim=-1)
        attended = torch.matmul(weights, self.value_cache)[:, 0, :]
        return total, attended


# Fixed index tensors of OpsMix (x is [2,4,6]): torch.gather along the last axis, Tensor.scatter
# (no index repeated within a row, so the result does not depend on the write order) and
# Tensor.scatter_add (repeated indices, summed), and the classes of F.one_hot.
MIX_GATHER = torch.tensor(
    [[[5, 0, 3], [1, 1, 4], [2, 5, 0], [3, 2, 2]], [[0, 4, 5], [3, 3, 1], [4, 0, 2], [5, 1, 3]]]
)
MIX_SCATTER = torch.tensor([[[2, 0], [5, 3], [1, 4], [0, 2]], [[4, 1], [3, 5], [0, 2], [1, 3]]])
MIX_SCATTER_ADD = torch.tensor([[[1, 1], [4, 0], [2, 2], [5, 3]], [[0, 0], [3, 5], [5, 5], [2, 4]]])
MIX_CLASSES = torch.tensor([[0, 2, 5, 1], [3, 3, 4, 0]])

# The outputs of OpsMix, in order. `unary` stacks MIX_UNARY (in that order) on a new first axis.
MIX_OUTPUTS = [
    "gathered", "scattered", "scatter_added", "bmm", "bmm_transposed", "one_hot", "lrn", "flipped",
    "cumsum", "topk_values", "argsort", "padded_reflect", "padded_replicate", "padded_constant",
    "unary", "max_values", "max_indices", "chunked", "rolled", "layer_norm", "group_norm",
    "instance_norm", "bilinear", "nearest", "pixel_shuffle",
]
MIX_UNARY = [
    "clamp", "where", "elu", "leaky_relu", "softplus", "prelu", "remainder", "floor_divide", "erf",
    "sqrt", "rsqrt", "hardtanh", "sign",
]


class OpsMix(nn.Module):
    """x [2,4,6], y [2,6,3] -> the 25 outputs of MIX_OUTPUTS (all float32)."""

    def __init__(self):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(3, alpha=0.5, beta=0.75, k=1.5)
        self.prelu = nn.PReLU(4)
        self.ln = nn.LayerNorm((4, 6))
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm1d(4, affine=True)

    def forward(self, x, y):
        gathered = torch.gather(x, 2, MIX_GATHER)  # [2,4,3]
        scattered = x.scatter(2, MIX_SCATTER, x[:, :, 3:5] * 2.0)
        scatter_added = x.scatter_add(2, MIX_SCATTER_ADD, x[:, :, :2])
        bmm = torch.einsum("bij,bjk->bik", x, y)  # [2,4,3]
        bmm_transposed = torch.einsum("bij,bkj->bik", x, x[:, 1:, :])  # [2,4,3]
        one_hot = F.one_hot(MIX_CLASSES, 6).float() * x  # [2,4,6]
        lrn = self.lrn(x.reshape(2, 4, 2, 3))
        flipped = torch.flip(x, [1, 2])
        cumsum = torch.cumsum(x, dim=2)
        topk_values = torch.topk(x, 3, dim=2).values  # [2,4,3]
        argsort = torch.argsort(x, dim=1).float()
        v = x.reshape(1, 2, 4, 6)
        padded_reflect = F.pad(v, (2, 1, 1, 2), mode="reflect")  # [1,2,7,9]
        padded_replicate = F.pad(v, (2, 1, 1, 2), mode="replicate")
        padded_constant = F.pad(v, (2, 1, 1, 2), mode="constant", value=0.5)
        a = x.abs() + 1.0
        unary = torch.stack(
            [
                torch.clamp(x, -0.5, 0.75),
                torch.where(x > 0.2, x, x * -3.0),
                F.elu(x, alpha=0.7),
                F.leaky_relu(x, 0.1),
                F.softplus(x),
                self.prelu(x.reshape(2, 4, 2, 3)).reshape(2, 4, 6),  # Core ML: rank 4 for per-channel
                torch.remainder(x, 0.7),
                torch.floor_divide(x, 0.7),
                torch.erf(x),
                torch.sqrt(a),
                torch.rsqrt(a),
                F.hardtanh(x, -0.6, 0.8),
                torch.sign(x),
            ]
        )  # [13,2,4,6]
        max_values, max_indices = torch.max(x, dim=1)  # [2,6]
        c0, c1, c2 = torch.chunk(x, 3, dim=2)  # 3 x [2,4,2]
        chunked = c0 * c1 - c2
        rolled = torch.roll(x, shifts=(1, -2), dims=(1, 2))
        layer_norm = self.ln(x)
        group_norm = self.gn(x)
        instance_norm = self.inorm(x)
        bilinear = F.interpolate(v, size=(7, 9), mode="bilinear", align_corners=True)
        # Integer factors: for a size that is not a whole multiple coremltools writes a scale
        # nudged up by 1e-4 / input size (1.5 -> 1.5000167), so the source index of
        # floor(dst / scale) would differ from torch's at every multiple of the step.
        nearest = F.interpolate(v, scale_factor=(2.0, 3.0), mode="nearest")  # [1,2,8,18]
        pixel_shuffle = F.pixel_shuffle(x.reshape(1, 4, 2, 6), 2)  # [1,1,4,12]
        return (
            gathered, scattered, scatter_added, bmm, bmm_transposed, one_hot, lrn, flipped, cumsum,
            topk_values, argsort, padded_reflect, padded_replicate, padded_constant, unary,
            max_values, max_indices.float(), chunked, rolled, layer_norm, group_norm, instance_norm,
            bilinear, nearest, pixel_shuffle,
        )


class Recurrent(nn.Module):
    """x [1,7,5] -> lstm_output [1,7,4], lstm_h [1,1,4], lstm_c [1,1,4], gru_output [1,7,3],
    bilstm_output [1,7,6]. The bidirectional LSTM is sequence-first (no batch_first) and runs on
    x transposed to [7,1,5], so that both directions see the 7 steps."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=5, hidden_size=4, num_layers=1, batch_first=True)
        self.gru = nn.GRU(4, 3, batch_first=True)
        self.bilstm = nn.LSTM(5, 3, bidirectional=True)

    def forward(self, x):
        seq, (h, c) = self.lstm(x)
        g, _ = self.gru(seq)
        b, _ = self.bilstm(x.transpose(0, 1))
        return seq, h, c, g, b.transpose(0, 1)


# Fixed indices of ScatterGatherND (x is [4,6,3]). SG_ACC_* repeat the pairs (2, 3) and (0, 1):
# index_put with accumulate=True sums the repeated updates.
SG_A = torch.tensor([0, 2, 3, 1, 2])
SG_B = torch.tensor([4, 0, 5, 1, 3])
SG_C = torch.tensor([2, 0, 1, 1, 0])
SG_ACC_A = torch.tensor([2, 0, 3, 2, 0])
SG_ACC_B = torch.tensor([3, 1, 5, 3, 1])
SG_ROWS = torch.tensor([3, 0])

SG_OUTPUTS = ["gathered_pairs", "gathered_points", "gathered_mixed", "put", "put_accumulate", "put_rows", "masked"]


class ScatterGatherND(nn.Module):
    """x [4,6,3], u [5,3] -> the outputs of SG_OUTPUTS (all float32): advanced indexing with fixed
    index tensors and index_put."""

    def forward(self, x, u):
        gathered_pairs = x[SG_A, SG_B]  # [5,3]
        gathered_points = x[SG_A, SG_B, SG_C]  # [5]
        gathered_mixed = x[SG_A[:3], :, SG_C[:3]]  # [3,6]
        put = torch.index_put(x, (SG_A[:3], SG_B[:3]), u[:3])
        put_accumulate = torch.index_put(x, (SG_ACC_A, SG_ACC_B), u, accumulate=True)
        put_rows = torch.index_put(x, (SG_ROWS,), x[:2] * 2.0)
        masked = x.masked_fill(x < -0.3, 7.0)
        return gathered_pairs, gathered_points, gathered_mixed, put, put_accumulate, put_rows, masked


def randomize(module, scale=0.2):
    """Random weights with distinct values everywhere (LayerNorm/BatchNorm scales around 1)."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if isinstance(module.get_submodule(name.rsplit(".", 1)[0]), (nn.LayerNorm, nn.BatchNorm2d)):
                if name.endswith("weight"):
                    p.copy_(1.0 + 0.1 * torch.randn_like(p))
                else:
                    p.copy_(0.1 * torch.randn_like(p))
            elif isinstance(module.get_submodule(name.rsplit(".", 1)[0]), nn.Embedding):
                p.copy_(torch.randn_like(p))
            else:
                p.copy_(scale * torch.randn_like(p))
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn_like(m.running_mean))
                m.running_var.copy_(0.5 + torch.rand_like(m.running_var))


# ---------------------------------------------------------------------------------------------
# Helpers


def save_npy(name, array):
    array = np.asarray(array)
    if array.dtype.kind == "f":
        array = array.astype(np.float32)
    elif array.dtype.kind in "iub":
        array = array.astype(np.int32)
    else:
        raise TypeError(f"{name}: unexpected dtype {array.dtype}")
    np.save(OUT / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)


def to_numpy(t):
    return t.detach().cpu().numpy()


def fix_manifest(package, model_name):
    """Replaces the random item identifiers in Manifest.json with fixed ones."""
    path = package / "Manifest.json"
    manifest = json.loads(path.read_text())
    renames = {}
    for old, info in manifest["itemInfoEntries"].items():
        renames[old] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"tensorengine/{model_name}/{info['path']}")).upper()
    manifest["itemInfoEntries"] = {renames[k]: v for k, v in manifest["itemInfoEntries"].items()}
    manifest["rootModelIdentifier"] = renames[manifest["rootModelIdentifier"]]
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def reserialize(path):
    """Rewrites a serialized Model message with protobuf's deterministic serialization (map entries
    sorted by key), so that the same spec gives the same bytes on every run."""
    spec = ct.proto.Model_pb2.Model()
    spec.ParseFromString(path.read_bytes())
    path.write_bytes(spec.SerializeToString(deterministic=True))
    path.chmod(0o644)


def save_model(mlmodel, name):
    if name.endswith(".mlmodel"):
        target = OUT / name
        if target.exists():
            target.unlink()
        mlmodel.save(str(target))
        reserialize(target)
        return target
    target = OUT / f"{name}.mlpackage"
    if target.exists():
        shutil.rmtree(target)
    mlmodel.save(str(target))
    fix_manifest(target, name)
    reserialize(target / "Data" / "com.apple.CoreML" / "model.mlmodel")
    return target


def iter_ops(block):
    for op in block.operations:
        yield op
        for b in op.blocks:
            yield from iter_ops(b)


def unpack_bits(packed, nbits, count):
    """Unpacks `count` unsigned `nbits`-bit values stored least significant bit first."""
    bits = np.unpackbits(np.asarray(packed).astype(np.uint8).reshape(-1), bitorder="little")
    bits = bits[: count * nbits].reshape(count, nbits).astype(np.uint32)
    return (bits << np.arange(nbits, dtype=np.uint32)).sum(axis=1)


def dequantize(op):
    """Dense value of a constexpr op, computed here in numpy from the op's parameters and checked
    against coremltools' own materialization."""
    kind = op.op_type
    if kind == "constexpr_affine_dequantize":  # iOS16: (quantized - zero_point) * scale along axis
        q = np.asarray(op.quantized_data.val)
        axis = int(op.axis.val)
        shape = [1] * q.ndim
        shape[axis] = -1
        scale = np.asarray(op.scale.val, dtype=np.float32)
        zp = np.asarray(op.zero_point.val).astype(np.float32)
        if scale.size > 1:
            scale = scale.reshape(shape)
        if zp.size > 1:
            zp = zp.reshape(shape)
        value = (q.astype(np.float32) - zp) * scale
    elif kind == "constexpr_lut_to_dense" and "shape" in op.inputs:  # iOS16: packed indices, 1-D LUT
        lut = np.asarray(op.lut.val)
        shape = tuple(int(d) for d in op.shape.val)
        nbits = int(np.log2(lut.size))
        value = lut[unpack_bits(op.indices.val, nbits, int(np.prod(shape)))].reshape(shape)
    elif kind == "constexpr_blockwise_shift_scale":  # iOS18: scale * (data - offset), blockwise
        data = np.asarray(op.data.val)
        scale = np.asarray(op.scale.val)
        offset = None if op.offset is None else np.asarray(op.offset.val)
        value = data.astype(scale.dtype)
        for axis in range(data.ndim):
            block = data.shape[axis] // scale.shape[axis]
            if block > 1:
                scale = np.repeat(scale, block, axis)
                if offset is not None:
                    offset = np.repeat(offset, block, axis)
        if offset is not None:
            value = value - offset.astype(scale.dtype)
        value = scale * value
    else:
        raise NotImplementedError(f"constexpr op {kind} ({op.name})")
    reference = np.asarray(op.materialized_val_inference())
    if value.shape != reference.shape or not np.allclose(value, reference, rtol=0, atol=1e-7):
        raise RuntimeError(f"{op.name}: numpy dequantization differs from coremltools'")
    return value.astype(np.float32)


def weight_inputs(mlmodel):
    """{(consumer op name, input name): dense float value} for every const or constexpr value
    (constexpr ops dequantized) that feeds an op of the program's main function."""
    prog = mlmodel._mil_program
    result = {}
    for op in iter_ops(prog.functions["main"]):
        if op.op_type == "const" or op.op_type.startswith("constexpr_"):
            continue
        for key, var in op.inputs.items():
            vars_ = var if isinstance(var, (list, tuple)) else [var]
            for i, v in enumerate(vars_):
                if v.op is None:
                    continue
                if v.op.op_type == "const" and v.val is not None:
                    val = np.asarray(v.val)
                elif v.op.op_type.startswith("constexpr_"):
                    val = dequantize(v.op)
                else:
                    continue
                if val.dtype.kind == "f" and val.size > 1:
                    result[(op.name, key if len(vars_) == 1 else f"{key}[{i}]")] = val
    return result


def match_param(value, params):
    """Finds the torch parameter whose values are `value` (as stored, possibly transposed or
    reshaped). Returns (param name, permutation applied to the torch tensor) or None."""
    found = []
    for pname, p in params.items():
        if p.size != value.size:
            continue
        for perm in itertools.permutations(range(p.ndim)):
            t = np.transpose(p, perm)
            if t.size == value.size and np.array_equal(t.reshape(-1), value.reshape(-1).astype(p.dtype)):
                if t.shape == value.shape or t.reshape(value.shape).shape == value.shape:
                    found.append((pname, perm))
                    break
    if len(found) > 1:
        raise RuntimeError(f"ambiguous match for a weight of shape {value.shape}: {found}")
    return found[0] if found else None


def dequantized_module(module, original_mlmodel, compressed_mlmodel):
    """A copy of `module` with the weights that the compressed program holds (dequantized in numpy
    from the constexpr ops' parameters), mapped back to torch parameters through the uncompressed
    float32 program (ops keep their names; weights are matched by value, allowing a transpose).
    ct.optimize.coreml.decompress_weights is not used: it reruns the default passes, which fuse
    the cnn's batch_norm into its conv."""
    original = weight_inputs(original_mlmodel)
    decompressed = weight_inputs(compressed_mlmodel)
    params = {n: to_numpy(p).astype(np.float32) for n, p in module.named_parameters()}
    copy = type(module)()
    copy.load_state_dict(module.state_dict())
    copy.eval()
    state = dict(copy.named_parameters())
    replaced = {}
    for key, new in decompressed.items():
        if key not in original:
            raise RuntimeError(f"{key} is missing in the uncompressed program")
        old = original[key]
        if old.shape != new.shape:
            raise RuntimeError(f"{key}: shape {old.shape} vs {new.shape}")
        if np.array_equal(old, new):
            continue
        match = match_param(old, params)
        if match is None:
            raise RuntimeError(f"{key}: compressed weight {old.shape} matches no torch parameter")
        pname, perm = match
        inverse = np.argsort(perm)
        shape_t = np.transpose(params[pname], perm).shape
        value = np.transpose(new.astype(np.float32).reshape(shape_t), inverse)
        if pname in replaced and not np.array_equal(replaced[pname], value):
            raise RuntimeError(f"{pname} decompressed to two different values")
        replaced[pname] = value
    with torch.no_grad():
        for pname, value in replaced.items():
            state[pname].copy_(torch.from_numpy(np.ascontiguousarray(value)))
    return copy, sorted(replaced)


def program_ops(mlmodel):
    spec = mlmodel.get_spec()
    fn = spec.mlProgram.functions["main"]
    opset = fn.opset
    types = set()

    def walk(block):
        for op in block.operations:
            types.add(op.type)
            for b in op.blocks:
                walk(b)

    for _, block in fn.block_specializations.items():
        walk(block)
    return spec.specificationVersion, opset, sorted(types)


def dir_size(path):
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def describe_features(features):
    out = []
    for f in features:
        t = f.type
        kind = t.WhichOneof("Type")
        if kind == "multiArrayType":
            dt = ct.proto.FeatureTypes_pb2.ArrayFeatureType.ArrayDataType.Name(t.multiArrayType.dataType)
            out.append(f"`{f.name}` {dt.lower()} {list(t.multiArrayType.shape)}")
        elif kind == "stateType":
            a = t.stateType.arrayType
            dt = ct.proto.FeatureTypes_pb2.ArrayFeatureType.ArrayDataType.Name(a.dataType)
            out.append(f"`{f.name}` state {dt.lower()} {list(a.shape)}")
        else:
            out.append(f"`{f.name}` {kind}")
    return ", ".join(out)


# ---------------------------------------------------------------------------------------------
# Builders


def convert(traced, inputs, outputs, target, precision, states=None, pass_pipeline=None):
    kwargs = dict(
        convert_to="mlprogram",
        inputs=inputs,
        outputs=outputs,
        compute_precision=precision,
        skip_model_load=True,
    )
    if target is not None:
        kwargs["minimum_deployment_target"] = target
    if states is not None:
        kwargs["states"] = states
    if pass_pipeline is not None:
        kwargs["pass_pipeline"] = pass_pipeline
    return ct.convert(traced, **kwargs)


def check_close(name, a, b, tol):
    diff = float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
    print(f"  {name}: max |dequantized - original| = {diff:.3g}")
    if not (0 < diff < tol):
        raise RuntimeError(f"{name}: unexpected difference {diff} (expected in (0, {tol}))")


def make_cnn():
    seed(1)
    model = CNN()
    randomize(model)
    model.eval()
    image = torch.randn(1, 3, 16, 16)
    with torch.no_grad():
        probs, features = model(image)
        traced = torch.jit.trace(model, (image,))
    pipeline = ct.PassPipeline.DEFAULT
    pipeline.remove_passes(["common::fuse_conv_batchnorm"])
    mlmodel = convert(
        traced,
        [ct.TensorType(name="image", shape=(1, 3, 16, 16), dtype=np.float32)],
        [ct.TensorType(name="probs"), ct.TensorType(name="features")],
        ct.target.iOS17,
        ct.precision.FLOAT32,
        pass_pipeline=pipeline,
    )
    save_model(mlmodel, "cnn")
    save_npy("cnn_input_image", to_numpy(image))
    save_npy("cnn_output_probs", to_numpy(probs))
    save_npy("cnn_output_features", to_numpy(features))

    config = cto.OptimizationConfig(
        global_config=cto.OpPalettizerConfig(mode="kmeans", nbits=4, granularity="per_tensor", weight_threshold=64)
    )
    palettized = cto.palettize_weights(mlmodel, config)
    save_model(palettized, "cnn_palettized")
    deq, replaced = dequantized_module(model, mlmodel, palettized)
    print("  cnn_palettized: weights replaced:", ", ".join(replaced))
    with torch.no_grad():
        p_probs, p_features = deq(image)
    check_close("cnn_palettized features", to_numpy(p_features), to_numpy(features), 1.0)
    save_npy("cnn_palettized_input_image", to_numpy(image))
    save_npy("cnn_palettized_output_probs", to_numpy(p_probs))
    save_npy("cnn_palettized_output_features", to_numpy(p_features))


def make_image_cnn():
    """The CNN of make_cnn with an image input, as vision models are converted: Core ML feeds the
    pixels (0-255, RGB) and the program itself scales them (scale 1/255, bias -0.5), so the
    reference is torch on pixels / 255 - 0.5."""
    seed(1)
    model = CNN()
    randomize(model)
    model.eval()
    generator = torch.Generator().manual_seed(7)
    pixels = torch.randint(0, 256, (1, 3, 16, 16), generator=generator).float()
    with torch.no_grad():
        probs, features = model(pixels / 255.0 - 0.5)
        traced = torch.jit.trace(model, (pixels,))
    mlmodel = convert(
        traced,
        [ct.ImageType(name="image", shape=(1, 3, 16, 16), scale=1 / 255.0, bias=[-0.5, -0.5, -0.5],
                      color_layout=ct.colorlayout.RGB)],
        [ct.TensorType(name="probs"), ct.TensorType(name="features")],
        ct.target.iOS17,
        ct.precision.FLOAT32,
    )
    save_model(mlmodel, "cnn_image")
    save_npy("cnn_image_input_image", to_numpy(pixels))
    save_npy("cnn_image_output_probs", to_numpy(probs))
    save_npy("cnn_image_output_features", to_numpy(features))


def make_fuzz_seed():
    """A program of a dozen operation types whose constants are all small enough to be stored in
    the specification itself, so that a bare model.mlmodel runs: the coreml fuzz target's seed
    (Tests/TensorEngineTests/Fixtures/fuzz/coreml/tiny_program.mlmodel, under libFuzzer's 4 KB)."""
    from coremltools.converters.mil import Builder as mb

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))], opset_version=ct.target.iOS17)
    def program(x):
        weight = np.array([[0.5, -0.25, 0.125, 1.0], [1.0, 0.5, -0.5, 0.25]], dtype=np.float32)
        y = mb.linear(x=x, weight=weight, bias=np.array([0.1, -0.1], dtype=np.float32))
        y = mb.softmax(x=mb.relu(x=y), axis=-1, name="probs")
        z = mb.transpose(x=mb.reshape(x=x, shape=[2, 2]), perm=[1, 0])
        z = mb.reduce_sum(x=mb.mul(x=z, y=np.float32(2.0)), axes=[0], keep_dims=False)
        z = mb.concat(values=[z, mb.slice_by_index(x=mb.squeeze(x=x, axes=[0]), begin=[1], end=[3])], axis=0)
        picked = mb.gather(x=z, indices=np.array([3, 0], dtype=np.int32), axis=0)
        z = mb.tanh(x=mb.sub(x=mb.slice_by_index(x=z, begin=[0], end=[2]), y=picked), name="mixed")
        return y, z

    mlmodel = ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS17)
    folder = OUT.parent / "fuzz" / "coreml"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        package = pathlib.Path(scratch) / "tiny_program.mlpackage"
        mlmodel.save(str(package))
        spec = package / "Data" / "com.apple.CoreML" / "model.mlmodel"
        reserialize(spec)
        shutil.copyfile(spec, folder / "tiny_program.mlmodel")
    print(f"  fuzz seed: {(folder / 'tiny_program.mlmodel').stat().st_size} bytes")


def make_flexible_cnn():
    """The CNN of make_cnn with open image sizes (ct.RangeDim from 8 to 32, default 16), run on a
    24 x 20 image: the program's sizes are unknown until a prediction gives them."""
    seed(1)
    model = CNN()
    randomize(model)
    model.eval()
    image = torch.randn(1, 3, 16, 16)
    with torch.no_grad():
        traced = torch.jit.trace(model, (image,))
    height = ct.RangeDim(lower_bound=8, upper_bound=32, default=16)
    width = ct.RangeDim(lower_bound=8, upper_bound=32, default=16)
    mlmodel = convert(
        traced,
        [ct.TensorType(name="image", shape=(1, 3, height, width), dtype=np.float32)],
        [ct.TensorType(name="probs"), ct.TensorType(name="features")],
        ct.target.iOS17,
        ct.precision.FLOAT32,
    )
    save_model(mlmodel, "cnn_flexible")
    generator = torch.Generator().manual_seed(11)
    larger = torch.randn(1, 3, 24, 20, generator=generator)
    with torch.no_grad():
        probs, features = model(larger)
    save_npy("cnn_flexible_input_image", to_numpy(larger))
    save_npy("cnn_flexible_output_probs", to_numpy(probs))
    save_npy("cnn_flexible_output_features", to_numpy(features))


def encoder_inputs():
    g = torch.Generator().manual_seed(7)
    input_ids = torch.randint(1, 64, (1, 8), generator=g, dtype=torch.int64)
    attention_mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0, 0]], dtype=torch.int64)
    return input_ids, attention_mask


def encoder_io():
    inputs = [
        ct.TensorType(name="input_ids", shape=(1, 8), dtype=np.int32),
        ct.TensorType(name="attention_mask", shape=(1, 8), dtype=np.int32),
    ]
    outputs = [ct.TensorType(name="last_hidden_state"), ct.TensorType(name="pooled")]
    return inputs, outputs


def save_encoder_refs(prefix, input_ids, attention_mask, hidden, pooled):
    save_npy(f"{prefix}_input_input_ids", to_numpy(input_ids))
    save_npy(f"{prefix}_input_attention_mask", to_numpy(attention_mask))
    save_npy(f"{prefix}_output_last_hidden_state", to_numpy(hidden))
    save_npy(f"{prefix}_output_pooled", to_numpy(pooled))


def make_encoders():
    seed(2)
    model = Encoder()
    randomize(model)
    model.eval()
    input_ids, attention_mask = encoder_inputs()
    with torch.no_grad():
        hidden, pooled = model(input_ids, attention_mask)
        traced = torch.jit.trace(model, (input_ids, attention_mask))

    ins, outs = encoder_io()
    fp32 = convert(traced, ins, outs, ct.target.iOS16, ct.precision.FLOAT32)
    save_model(fp32, "encoder")
    save_encoder_refs("encoder", input_ids, attention_mask, hidden, pooled)

    ins, outs = encoder_io()
    fp16 = convert(traced, ins, outs, None, ct.precision.FLOAT16)
    save_model(fp16, "encoder_fp16")
    save_encoder_refs("encoder_fp16", input_ids, attention_mask, hidden, pooled)

    config = cto.OptimizationConfig(
        global_config=cto.OpLinearQuantizerConfig(
            mode="linear_symmetric", dtype="int8", granularity="per_channel", weight_threshold=512
        )
    )
    int8 = cto.linear_quantize_weights(fp32, config)
    save_model(int8, "encoder_int8")
    deq, replaced = dequantized_module(model, fp32, int8)
    print("  encoder_int8: weights replaced:", ", ".join(replaced))
    with torch.no_grad():
        q_hidden, q_pooled = deq(input_ids, attention_mask)
    check_close("encoder_int8 last_hidden_state", to_numpy(q_hidden), to_numpy(hidden), 0.5)
    save_encoder_refs("encoder_int8", input_ids, attention_mask, q_hidden, q_pooled)

    ins, outs = encoder_io()
    fp32_18 = convert(traced, ins, outs, ct.target.iOS18, ct.precision.FLOAT32)
    int8_18 = cto.linear_quantize_weights(fp32_18, config)
    save_model(int8_18, "encoder_int8_ios18")
    deq, replaced = dequantized_module(model, fp32_18, int8_18)
    print("  encoder_int8_ios18: weights replaced:", ", ".join(replaced))
    with torch.no_grad():
        q_hidden, q_pooled = deq(input_ids, attention_mask)
    check_close("encoder_int8_ios18 last_hidden_state", to_numpy(q_hidden), to_numpy(hidden), 0.5)
    save_encoder_refs("encoder_int8_ios18", input_ids, attention_mask, q_hidden, q_pooled)


def make_stateful():
    seed(3)
    model = Stateful()
    randomize(model, scale=0.4)
    model.eval()
    example = (torch.zeros(1, 4), torch.zeros(1, 8), torch.tensor([0], dtype=torch.int32))
    traced = torch.jit.trace(model, example)
    states = [
        ct.StateType(wrapped_type=ct.TensorType(shape=(1, 4), dtype=np.float16), name="accumulator"),
        ct.StateType(wrapped_type=ct.TensorType(shape=(1, 6, 8), dtype=np.float16), name="key_cache"),
        ct.StateType(wrapped_type=ct.TensorType(shape=(1, 6, 8), dtype=np.float16), name="value_cache"),
    ]
    mlmodel = convert(
        traced,
        [
            ct.TensorType(name="x", shape=(1, 4), dtype=np.float32),
            ct.TensorType(name="token", shape=(1, 8), dtype=np.float32),
            ct.TensorType(name="position", shape=(1,), dtype=np.int32),
        ],
        [ct.TensorType(name="sum"), ct.TensorType(name="attended")],
        ct.target.iOS18,
        ct.precision.FLOAT32,
        states=states,
    )
    save_model(mlmodel, "stateful")

    # Reference: a fresh instance with the same weights and zero state, run step by step.
    ref = Stateful()
    ref.load_state_dict(model.state_dict())
    with torch.no_grad():
        for b in ref.buffers():
            b.zero_()
    ref.round_states_to_fp16 = True
    ref.eval()
    g = torch.Generator().manual_seed(11)
    for step in range(4):
        x = torch.randn(1, 4, generator=g)
        token = torch.randn(1, 8, generator=g)
        position = torch.tensor([step], dtype=torch.int32)
        with torch.no_grad():
            total, attended = ref(x, token, position)
        save_npy(f"stateful_step{step}_input_x", to_numpy(x))
        save_npy(f"stateful_step{step}_input_token", to_numpy(token))
        save_npy(f"stateful_step{step}_input_position", to_numpy(position))
        save_npy(f"stateful_step{step}_output_sum", to_numpy(total))
        save_npy(f"stateful_step{step}_output_attended", to_numpy(attended))
    for name in ("accumulator", "key_cache", "value_cache"):
        save_npy(f"stateful_final_{name}", to_numpy(getattr(ref, name)))


def make_classifier():
    seed(4)
    model = nn.Linear(4, 3).eval()
    traced = torch.jit.trace(model, torch.zeros(1, 4))
    try:
        mlmodel = ct.convert(
            traced,
            convert_to="neuralnetwork",
            inputs=[ct.TensorType(name="features", shape=(1, 4), dtype=np.float32)],
            outputs=[ct.TensorType(name="scores")],
            minimum_deployment_target=ct.target.iOS14,
            skip_model_load=True,
        )
    except Exception as error:  # fall back to the builder
        print("  neuralnetwork conversion failed, using NeuralNetworkBuilder:", error)
        from coremltools.models import datatypes
        from coremltools.models.neural_network import NeuralNetworkBuilder

        builder = NeuralNetworkBuilder(
            [("features", datatypes.Array(4))], [("scores", datatypes.Array(3))]
        )
        builder.add_inner_product(
            "fc",
            W=to_numpy(model.weight),
            b=to_numpy(model.bias),
            input_channels=4,
            output_channels=3,
            has_bias=True,
            input_name="features",
            output_name="scores",
        )
        mlmodel = ct.models.MLModel(builder.spec, skip_model_load=True)
    save_model(mlmodel, "classifier.mlmodel")
    return mlmodel


def make_ops_mix():
    """OpsMix: one module for many operation types (gather/scatter along an axis, einsum, one_hot,
    local response norm, flip, cumsum, topk, argsort, padding modes, unary ops, reductions with
    indices, split, roll, normalizations, resizing, pixel shuffle)."""
    seed(5)
    model = OpsMix()
    randomize(model, scale=0.3)
    with torch.no_grad():  # norm scales around 1
        for m in (model.gn, model.inorm):
            m.weight.copy_(1.0 + 0.2 * torch.randn_like(m.weight))
            m.bias.copy_(0.2 * torch.randn_like(m.bias))
    model.eval()
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(2, 4, 6, generator=generator)
    y = torch.randn(2, 6, 3, generator=generator)
    q = to_numpy(x) / np.float32(0.7)
    if np.min(np.abs(q - np.round(q))) < 1e-3:  # remainder / floor_divide stay away from a jump
        raise RuntimeError("ops_mix: an input is too close to a multiple of 0.7")
    with torch.no_grad():
        outputs = model(x, y)
        traced = torch.jit.trace(model, (x, y))
    mlmodel = convert(
        traced,
        [
            ct.TensorType(name="x", shape=(2, 4, 6), dtype=np.float32),
            ct.TensorType(name="y", shape=(2, 6, 3), dtype=np.float32),
        ],
        [ct.TensorType(name=n) for n in MIX_OUTPUTS],
        ct.target.iOS17,
        ct.precision.FLOAT32,
    )
    save_model(mlmodel, "ops_mix")
    save_npy("ops_mix_input_x", to_numpy(x))
    save_npy("ops_mix_input_y", to_numpy(y))
    for name, value in zip(MIX_OUTPUTS, outputs):
        save_npy(f"ops_mix_output_{name}", to_numpy(value))


def make_recurrent():
    seed(6)
    model = Recurrent()
    randomize(model, scale=0.4)
    model.eval()
    x = torch.randn(1, 7, 5, generator=torch.Generator().manual_seed(11))
    names = ["lstm_output", "lstm_h", "lstm_c", "gru_output", "bilstm_output"]
    with torch.no_grad():
        outputs = model(x)
        traced = torch.jit.trace(model, (x,))
    mlmodel = convert(
        traced,
        [ct.TensorType(name="x", shape=(1, 7, 5), dtype=np.float32)],
        [ct.TensorType(name=n) for n in names],
        ct.target.iOS17,
        ct.precision.FLOAT32,
    )
    save_model(mlmodel, "lstm")
    save_npy("lstm_input_x", to_numpy(x))
    for name, value in zip(names, outputs):
        save_npy(f"lstm_output_{name}", to_numpy(value))


def make_scatter_gather_nd():
    seed(7)
    model = ScatterGatherND().eval()
    generator = torch.Generator().manual_seed(11)
    x = torch.randn(4, 6, 3, generator=generator)
    u = torch.randn(5, 3, generator=generator)
    with torch.no_grad():
        outputs = model(x, u)
        traced = torch.jit.trace(model, (x, u))
    mlmodel = convert(
        traced,
        [
            ct.TensorType(name="x", shape=(4, 6, 3), dtype=np.float32),
            ct.TensorType(name="u", shape=(5, 3), dtype=np.float32),
        ],
        [ct.TensorType(name=n) for n in SG_OUTPUTS],
        ct.target.iOS17,
        ct.precision.FLOAT32,
    )
    save_model(mlmodel, "scatter_gather_nd")
    save_npy("scatter_gather_nd_input_x", to_numpy(x))
    save_npy("scatter_gather_nd_input_u", to_numpy(u))
    for name, value in zip(SG_OUTPUTS, outputs):
        save_npy(f"scatter_gather_nd_output_{name}", to_numpy(value))


# ---------------------------------------------------------------------------------------------


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for p in OUT.iterdir():
        if p.name == "README.md" or p.suffix in (".npy", ".mlmodel"):
            p.unlink()
        elif p.suffix == ".mlpackage":
            shutil.rmtree(p)

    print("cnn, cnn_palettized")
    make_cnn()
    print("cnn_image")
    make_image_cnn()
    print("cnn_flexible")
    make_flexible_cnn()
    print("encoder, encoder_fp16, encoder_int8, encoder_int8_ios18")
    make_encoders()
    print("stateful")
    make_stateful()
    print("classifier")
    classifier = make_classifier()
    print("fuzz seed")
    make_fuzz_seed()
    print("ops_mix")
    make_ops_mix()
    print("lstm")
    make_recurrent()
    print("scatter_gather_nd")
    make_scatter_gather_nd()

    rows = []
    details = []
    for package in sorted(OUT.glob("*.mlpackage")):
        m = ct.models.MLModel(str(package), skip_model_load=True)
        spec_version, opset, types = program_ops(m)
        size = dir_size(package)
        name = package.stem
        rows.append(f"| {name}.mlpackage | {spec_version} | {opset} | {size} |")
        desc = m.get_spec().description
        details.append(
            f"### {name}.mlpackage\n\n"
            f"- inputs: {describe_features(desc.input)}\n"
            f"- outputs: {describe_features(desc.output)}\n"
            + (f"- states: {describe_features(desc.state)}\n" if len(desc.state) else "")
            + f"- ops ({len(types)}): {', '.join(types)}\n"
        )
        print(f"{name}: spec {spec_version}, {opset}, {size} bytes\n  ops: {', '.join(types)}")
    cspec = classifier.get_spec()
    csize = (OUT / "classifier.mlmodel").stat().st_size
    rows.append(f"| classifier.mlmodel | {cspec.specificationVersion} | neuralNetwork ({len(cspec.neuralNetwork.layers)} layer) | {csize} |")
    print(f"classifier: spec {cspec.specificationVersion}, {cspec.WhichOneof('Type')}, {csize} bytes")
    npy = sorted(OUT.glob("*.npy"))
    npy_total = sum(p.stat().st_size for p in npy)
    total = sum(dir_size(p) for p in OUT.iterdir() if p.name != "README.md")
    print(f"{len(npy)} .npy files, {npy_total} bytes; everything: {total} bytes")

    readme = [
        "# Core ML fixtures",
        "",
        "Written by `scripts/make_coreml_fixtures.py` (see its docstring for the models, inputs and",
        "how the references were computed); regenerate with",
        "",
        "    /path/to/python scripts/make_coreml_fixtures.py",
        "",
        f"coremltools {ct.__version__}, torch {torch.__version__.split('+')[0]}, numpy {np.__version__}.",
        "References come from torch, never from Core ML. `encoder_fp16` uses the float32 references",
        "of `encoder` (compare with a float16-sized tolerance: a float16 evaluation of the program differs",
        "from them by about 5e-3 here, so use about 2e-2). The palettized and int8 models' references",
        "were computed with the dequantized weights. The stateful model's states are float16 (a Core ML",
        "requirement); its references round every state write to float16 as the program does.",
        "",
        "| model | specificationVersion | opset | bytes |",
        "|---|---|---|---|",
        *rows,
        "",
        f"{len(npy)} .npy files ({npy_total} bytes); all fixtures together: {total} bytes.",
        "",
        *details,
    ]
    (OUT / "README.md").write_text("\n".join(readme))


if __name__ == "__main__":
    main()
