#!/usr/bin/env bash
# Makes the ONNX form of the all-MiniLM-L6-v2 encoder, model.onnx, in the model folder that
# scripts/fetch-model.sh fills:
#
#     ${TENSORENGINE_MODEL_DIR:-$HOME/.cache/tensorengine/models/all-MiniLM-L6-v2}/model.onnx
#
# No published package ships this file, so it is made locally by scripts/export_minilm_onnx.py
# (torch.onnx.export of the transformers BertModel; opset 17, inputs input_ids, attention_mask,
# token_type_ids, output last_hidden_state, about 90 MB with the weights inside the file).
#
# - When model.onnx is already there it says so and does nothing.
# - When the Python interpreter ($TENSORENGINE_PYTHON, default python3) lacks torch, transformers,
#   onnx, onnxruntime or numpy, it prints how to install them and exits with status 0, so that a
#   machine without torch (a CI runner, for example) is not an error.
# - Otherwise it runs scripts/fetch-model.sh (which does nothing when the folder is complete) and
#   then the export, which checks the file against PyTorch before keeping it.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="${TENSORENGINE_MODEL_DIR:-$HOME/.cache/tensorengine/models/all-MiniLM-L6-v2}"
PYTHON="${TENSORENGINE_PYTHON:-python3}"

if [[ -s "$TARGET/model.onnx" ]]; then
    echo "fetch-minilm-onnx: $TARGET/model.onnx is already there; nothing to do."
    exit 0
fi

if ! "$PYTHON" -c 'import torch, transformers, onnx, onnxruntime, numpy' >/dev/null 2>&1; then
    cat <<EOF
fetch-minilm-onnx: $TARGET/model.onnx is missing and $PYTHON cannot import torch, transformers,
onnx, onnxruntime and numpy, which the export needs; nothing was done. To make the file:

    python3 -m venv /path/to/venv
    /path/to/venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
    /path/to/venv/bin/pip install transformers onnx onnxruntime numpy
    TENSORENGINE_PYTHON=/path/to/venv/bin/python scripts/fetch-minilm-onnx.sh

or, with those packages installed, after scripts/fetch-model.sh:

    python3 scripts/export_minilm_onnx.py
EOF
    exit 0
fi

"$HERE/fetch-model.sh"

echo "fetch-minilm-onnx: exporting all-MiniLM-L6-v2 to $TARGET/model.onnx..."
TENSORENGINE_MODEL_DIR="$TARGET" "$PYTHON" "$HERE/export_minilm_onnx.py" "$TARGET/model.onnx"

[[ -s "$TARGET/model.onnx" ]] || { echo "fetch-minilm-onnx: the export did not write $TARGET/model.onnx" >&2; exit 1; }
echo "fetch-minilm-onnx: done. The model is in $TARGET/model.onnx (set TENSORENGINE_MODEL_DIR to use another place)."
