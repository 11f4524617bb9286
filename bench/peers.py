#!/usr/bin/env python3
"""Run tensorbench's workloads in NumPy and PyTorch, with tensorbench's statistics and JSON schema.

    python3 bench/peers.py --suite full --json bench/peers.json
    .build/release/tensorbench --from bench/full.json --compare bench/peers.json

Each framework runs only when it is installed. To install them in a virtual environment:

    python3 -m venv .venv && . .venv/bin/activate
    pip install numpy
    pip install torch --index-url https://download.pytorch.org/whl/cpu   # CPU-only wheel

The workloads mirror Sources/TensorEngine/Workloads/Workload.swift (names, shapes, quick flags,
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
    spec("dispatch-1000", True, 1000, 8, False),
]


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


class NumPyPeer:
    name = "numpy"
    note = "bert-layer's GELU uses the tanh approximation (NumPy has no erf)"

    def __init__(self):
        import numpy
        self.np = numpy
        self.version = numpy.__version__

    def inputs(self, name):
        np = self.np
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
        return [self.torch.from_numpy(self.np.ascontiguousarray(a)) for a in NumPyPeer.inputs(self, name)]

    def softmax(self, x):
        return self.torch.softmax(x, dim=-1)

    def layer_norm(self, x, gamma=None, beta=None, eps=1e-5):
        return self.torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)

    def gelu(self, x):
        return self.torch.nn.functional.gelu(x)

    def graph(self, name):
        torch = self.torch
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
    parser.add_argument("--backend", action="append", default=[], choices=["numpy", "torch"], help="run only this peer (repeatable)")
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
    for cls, install in ((NumPyPeer, "pip install numpy"), (TorchPeer, "pip install torch --index-url https://download.pytorch.org/whl/cpu")):
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
