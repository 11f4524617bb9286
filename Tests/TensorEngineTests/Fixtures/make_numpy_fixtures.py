#!/usr/bin/env python3
"""Regenerates numpy_fixtures.json: inputs and NumPy's results for the naive backend's tests.

Run from anywhere with NumPy installed:  python3 make_numpy_fixtures.py
The fixtures are committed, so the Swift tests need no Python.
"""
import json
import math
import os

import numpy as np

rng = np.random.default_rng(20261129)
cases = []


def arr(a):
    a = np.asarray(a)
    dtype = {np.dtype("float32"): "float32", np.dtype("int32"): "int32", np.dtype("bool"): "bool"}[a.dtype]
    data = a.reshape(-1).tolist()
    if dtype == "float32":
        data = [None if math.isnan(x) else x for x in data]
    elif dtype == "bool":
        data = [1 if x else 0 for x in data]
    return {"shape": list(a.shape), "dtype": dtype, "data": data}


def case(name, op, inputs, expected, **args):
    cases.append({"name": name, "op": op, "args": args, "inputs": [arr(x) for x in inputs], "expected": arr(expected)})


def f32(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def i32(*shape, low=-20, high=20):
    return rng.integers(low, high + 1, size=shape).astype(np.int32)


x = f32(3, 4)
pos = f32(3, 4, low=0.1, high=3.0)
unary = {
    "negate": (x, -x), "abs": (x, np.abs(x)), "sign": (x, np.sign(x)), "exp": (x, np.exp(x)),
    "log": (pos, np.log(pos)), "squareRoot": (pos, np.sqrt(pos)), "rsqrt": (pos, 1 / np.sqrt(pos)),
    "squared": (x, x * x), "reciprocal": (pos, 1 / pos), "sin": (x, np.sin(x)), "cos": (x, np.cos(x)),
    "tanh": (x, np.tanh(x)), "floor": (x, np.floor(x)), "ceil": (x, np.ceil(x)),
    "sigmoid": (x, (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)),
    "relu": (x, np.maximum(x, 0)),
    "erf": (x, np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32)),
    "gelu": (x, (0.5 * x.astype(np.float64) * (1 + np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2)))).astype(np.float32)),
    "geluTanh": (x, (0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))).astype(np.float32)),
    "silu": (x, (x / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)),
}
for name, (a, expected) in unary.items():
    case(name, name, [a], expected)
halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6], dtype=np.float32)
case("round half to even", "round", [halves], np.round(halves))

a, b = f32(3, 4), f32(4)
for name, fn in {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
                 "minimum": np.minimum, "maximum": np.maximum}.items():
    case(name + " broadcast", name, [a, b], fn(a, b).astype(np.float32))
pa, pb = f32(2, 3, low=0.2, high=2.0), f32(2, 1, low=-2.0, high=2.0)
case("pow broadcast", "pow", [pa, pb], np.power(pa, pb).astype(np.float32))
c, d = f32(2, 1, 3), f32(4, 1)
case("add two-sided broadcast", "add", [c, d], (c + d).astype(np.float32))
for name, fn in {"equal": np.equal, "notEqual": np.not_equal, "less": np.less, "lessEqual": np.less_equal,
                 "greater": np.greater, "greaterEqual": np.greater_equal}.items():
    q = np.round(a).astype(np.float32)
    r = np.round(b).astype(np.float32)
    case(name, name, [q, r], fn(q, r))

ia, ib = i32(3, 4), i32(4, low=1, high=9) * np.array([1, -1, 1, -1], dtype=np.int32)
case("int32 add", "add", [ia, ib], ia + ib)
case("int32 multiply", "multiply", [ia, ib], ia * ib)
case("int32 divide truncates", "divide", [ia, ib], np.trunc(ia / ib).astype(np.int32))
case("int32 cast from float truncates", "castInt32", [x * 5], np.trunc(x * 5).astype(np.int32))

r3 = f32(2, 3, 4)
for name, fn in {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "product": np.prod}.items():
    case(name + " axis 1", name, [r3], fn(r3, axis=1).astype(np.float32), axes=[1], keepRank=False)
    case(name + " axes 0,2 keepRank", name, [r3], fn(r3, axis=(0, 2), keepdims=True).astype(np.float32), axes=[0, 2], keepRank=True)
    case(name + " all", name, [r3], np.asarray(fn(r3), dtype=np.float32), axes=None, keepRank=False)
case("variance axis -1", "variance", [r3], np.var(r3, axis=-1).astype(np.float32), axes=[-1], keepRank=False)
case("argmax axis 2", "argmax", [r3], np.argmax(r3, axis=2).astype(np.int32), axis=2)
case("argmin axis 0", "argmin", [r3], np.argmin(r3, axis=0).astype(np.int32), axis=0)
case("argmax flattened", "argmax", [r3], np.asarray(np.argmax(r3), dtype=np.int32), axis=None)
case("cumulative sum axis 1", "cumulativeSum", [r3], np.cumsum(r3, axis=1).astype(np.float32), axis=1)
case("int32 cumulative sum", "cumulativeSum", [ia], np.cumsum(ia, axis=1).astype(np.int32), axis=1)
case("int32 sum", "sum", [ia], ia.sum(axis=0).astype(np.int32), axes=[0], keepRank=False)
t = f32(3, 7)
order = np.argsort(-t, axis=-1, kind="stable")[:, :3]
case("topK values", "topKValues", [t], np.take_along_axis(t, order, axis=-1), k=3)
case("topK indices", "topKIndices", [t], order.astype(np.int32), k=3)

m1, m2 = f32(3, 5), f32(5, 4)
case("matmul 2-D", "matmul", [m1, m2], (m1.astype(np.float64) @ m2).astype(np.float32))
b1, b2 = f32(2, 3, 5), f32(5, 4)
case("matmul broadcast batch", "matmul", [b1, b2], (b1.astype(np.float64) @ b2).astype(np.float32))
v1, v2 = f32(5), f32(5)
case("matmul vector vector", "matmul", [v1, v2], np.asarray(v1.astype(np.float64) @ v2, dtype=np.float32))
case("matmul matrix vector", "matmul", [m1, v1], (m1.astype(np.float64) @ v1).astype(np.float32))
vv = f32(3)
case("matmul vector matrix", "matmul", [vv, m1], (vv.astype(np.float64) @ m1).astype(np.float32))

s = f32(4, 6, low=-4, high=4)
s64 = s.astype(np.float64)
sm = np.exp(s64 - s64.max(axis=-1, keepdims=True))
sm /= sm.sum(axis=-1, keepdims=True)
case("softmax last axis", "softmax", [s], sm.astype(np.float32), axis=-1)
sm0 = np.exp(s64 - s64.max(axis=0, keepdims=True))
sm0 /= sm0.sum(axis=0, keepdims=True)
case("softmax axis 0", "softmax", [s], sm0.astype(np.float32), axis=0)
case("logSoftmax last axis", "logSoftmax", [s], np.log(sm).astype(np.float32), axis=-1)
mu = s64.mean(axis=-1, keepdims=True)
var = s64.var(axis=-1, keepdims=True)
case("layerNorm last axis", "layerNorm", [s], ((s64 - mu) / np.sqrt(var + 1e-5)).astype(np.float32), axis=-1, epsilon=1e-5)

p = f32(2, 3, 4)
case("transpose permutation", "transpose", [p], np.transpose(p, (2, 0, 1)), permutation=[2, 0, 1])
case("transpose reversed", "transpose", [p], np.transpose(p), permutation=None)
case("reshape", "reshape", [p], p.reshape(4, 6), shape=[4, 6])
tl = f32(2, 3)
case("tile", "tile", [tl], np.tile(tl, (2, 3)), multiples=[2, 3])
case("pad", "pad", [tl], np.pad(tl, ((1, 0), (2, 1)), constant_values=0.5), sizes=[[1, 0], [2, 1]], value=0.5)
case("reverse axes", "reverse", [p], np.flip(p, axis=(0, 2)), axes=[0, 2])
c1, c2 = f32(2, 3), f32(2, 2)
case("concatenate axis 1", "concatenate", [c1, c2], np.concatenate([c1, c2], axis=1), axis=1)
case("stack axis 1", "stack", [c1, c1 * 2], np.stack([c1, c1 * 2], axis=1), axis=1)
g = f32(5, 3)
gi = np.array([[4, 0], [2, 2]], dtype=np.int32)
case("gather rows", "gather", [g, gi], np.take(g, gi, axis=0), axis=0)
case("gather columns", "gather", [g, np.array([2, 0], dtype=np.int32)], np.take(g, [2, 0], axis=1), axis=1)
case("subscript [1, 1..<3]", "subscriptRow", [p], p[1, 1:3])
case("subscript [..., 2]", "subscriptLast", [p], p[..., 2])
mask = rng.uniform(size=(3, 4)) < 0.5
other = f32(3, 4)
case("replacing where", "replacing", [x, other, mask], np.where(mask, other, x))
case("clamped", "clamped", [x], np.clip(x, -0.5, 0.75), low=-0.5, high=0.75)


out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_fixtures.json")
with open(out, "w") as f:
    json.dump({"generator": "make_numpy_fixtures.py", "numpy": np.__version__, "cases": cases}, f, indent=None, separators=(",", ":"))
print(f"wrote {len(cases)} cases to {out}")
