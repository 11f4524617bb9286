#!/usr/bin/env python3
"""onnxruntime's time per node of an ONNX model, to set beside `tensorplan MODEL --measure`.

Runs the model with 2 intra-op threads (as bench/peers.py does) on a ramp input, with
onnxruntime's profiler on, and prints each node's median kernel time in graph order after a
warm-up, then their sum. onnxruntime rewrites the graph first (its NCHWc layout for CNNs), so
nodes are its own (`r2_nchwc` ...), in the order it runs them.

    python3 bench/ort_node_profile.py MODEL.onnx [--runs 300] [--threads 2]

The profiler's JSON goes to a temporary folder and is removed.
"""
import argparse
import collections
import json
import os
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import numpy as np
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(folder, "profile")
        options.log_severity_level = 3
        session = ort.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
        feeds = {}
        for item in session.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in item.shape]
            count = int(np.prod(shape))
            feeds[item.name] = (np.arange(count) / max(count, 1)).astype(np.float32).reshape(shape)
        for _ in range(args.runs):
            session.run(None, feeds)
        with open(session.end_profiling()) as file:
            events = json.load(file)
    times = collections.defaultdict(list)
    order = []
    for event in events:
        name = event.get("name", "")
        if event.get("cat") == "Node" and name.endswith("_kernel_time"):
            if name not in times:
                order.append(name)
            times[name].append(event["dur"])
    warmup = min(50, args.runs // 4)
    total = 0
    for name in order:
        samples = sorted(times[name][warmup:]) or sorted(times[name])
        median = samples[len(samples) // 2]
        total += median
        print(f"{median:9d} us  {name[: -len('_kernel_time')]}")
    print(f"{total:9d} us  total of the medians")


if __name__ == "__main__":
    main()
