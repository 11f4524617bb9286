#!/usr/bin/env python3
"""PyTorch's float32 matrix product on the GPU, the reference row of scripts/gpu-check.sh.

TF32 is off (so the product is a true float32 one, as the engine's OpenCL kernel computes it),
inputs live on the device, and each size is timed with CUDA events over repetitions after a
warm-up. Prints one JSON object: {"device": ..., "torch": ..., "rows": [{"n", "gflops", "ms"}]}.
Without PyTorch or a CUDA device it prints {"error": ...} and exits 0, so the check goes on.

    python3 bench/gpu_reference.py [N ...]      (default: 1024 2048 4096)
"""
import json
import sys


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1024, 2048, 4096]
    try:
        import torch
    except ImportError as error:
        print(json.dumps({"error": f"no PyTorch: {error}"}))
        return
    if not torch.cuda.is_available():
        print(json.dumps({"error": "PyTorch sees no CUDA device", "torch": torch.__version__}))
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    rows = []
    for n in sizes:
        a = torch.randn(n, n, device="cuda", dtype=torch.float32)
        b = torch.randn(n, n, device="cuda", dtype=torch.float32)
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        repetitions = max(5, min(200, int(2e12 / (2 * n ** 3))))
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(repetitions):
            torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end) / repetitions
        rows.append({"n": n, "ms": ms, "gflops": 2 * n ** 3 / (ms * 1e-3) / 1e9, "repetitions": repetitions})
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "tf32": False, "rows": rows},
                     indent=2))


if __name__ == "__main__":
    main()
