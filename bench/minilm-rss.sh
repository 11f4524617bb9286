#!/usr/bin/env bash
# Peak resident size (`/usr/bin/time -v`, "Maximum resident set size") of embedding the 32
# sentences of the minilm-b32 workload once, from process start to exit: tensorembed against
# sentence-transformers on PyTorch (bench/minilm_rss.py). Each is run RUNS times (default 3);
# every figure is printed, in MiB.
#
#     bench/minilm-rss.sh                       # after swift build -c release and scripts/fetch-model.sh
#     PYTHON=/path/to/venv/bin/python bench/minilm-rss.sh
#
# Environment: TENSORENGINE_MODEL_DIR (the model folder), PYTHON (an interpreter with
# sentence-transformers; default python3), TENSOREMBED (default .build/release/tensorembed), RUNS.
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL="${TENSORENGINE_MODEL_DIR:-$HOME/.cache/tensorengine/models/all-MiniLM-L6-v2}"
PYTHON="${PYTHON:-python3}"
TENSOREMBED="${TENSOREMBED:-.build/release/tensorembed}"
RUNS="${RUNS:-3}"

[[ -x /usr/bin/time ]] || { echo "minilm-rss: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
[[ -f "$MODEL/model.safetensors" ]] || { echo "minilm-rss: no model in $MODEL; run scripts/fetch-model.sh" >&2; exit 1; }
[[ -x "$TENSOREMBED" ]] || { echo "minilm-rss: no $TENSOREMBED; run swift build -c release" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# The sentences are peers.py's copy of the workload's (stdlib only at import).
python3 -c 'import sys; sys.path.insert(0, "bench"); import peers; print("\n".join(peers.MINILM_SENTENCES["minilm-b32"]))' > "$WORK/sentences.txt"

# Prints the peak RSS of one run of the command in MiB; fails when the command does.
peak_mib() {
    /usr/bin/time -v "$@" < "$WORK/sentences.txt" > "$WORK/out.txt" 2> "$WORK/time.txt" \
        || { cat "$WORK/time.txt" >&2; return 1; }
    [[ "$(wc -l < "$WORK/out.txt")" -eq 32 ]] || { echo "minilm-rss: $1 printed no 32 embeddings" >&2; return 1; }
    awk '/Maximum resident set size/ { printf "%.1f", $NF / 1024 }' "$WORK/time.txt"
}

engine=()
peer=()
for _ in $(seq "$RUNS"); do
    engine+=("$(peak_mib "$TENSOREMBED" --model "$MODEL")")
    peer+=("$(peak_mib "$PYTHON" bench/minilm_rss.py --model "$MODEL")")
done
echo "peak RSS, 32 sentences embedded once (MiB, $RUNS runs each; load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "tensorembed:           ${engine[*]}"
echo "sentence-transformers: ${peer[*]}"
