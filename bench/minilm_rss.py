#!/usr/bin/env python3
"""Embed sentences read from standard input (one per line) with all-MiniLM-L6-v2 through
sentence-transformers on PyTorch's CPU backend, as `tensorembed` does, and print one JSON array
per sentence. bench/minilm-rss.sh runs it under `/usr/bin/time -v` beside tensorembed to compare
their peak resident sizes.

    python3 bench/minilm_rss.py --model ~/.cache/tensorengine/models/all-MiniLM-L6-v2 < sentences.txt
"""

import argparse
import json
import os
import sys


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.environ.get("TENSORENGINE_MODEL_DIR")
                        or os.path.expanduser("~/.cache/tensorengine/models/all-MiniLM-L6-v2"))
    parser.add_argument("--threads", type=int, default=2, help="PyTorch intra-op threads (default 2, as the engine uses here)")
    args = parser.parse_args(argv)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = str(args.threads)
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(args.threads)
    sentences = [line.rstrip("\n") for line in sys.stdin]
    model = SentenceTransformer(args.model, device="cpu")
    embeddings = model.encode(sentences, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    sys.stdout.write("".join(json.dumps([float(v) for v in row]) + "\n" for row in embeddings))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
