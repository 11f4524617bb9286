#!/usr/bin/env bash
# Fetches the ONNX backend conformance test data (the `onnx/backend/test/data/` tree of the onnx
# 1.22.0 Python wheel) into a cache directory.
#
# The script downloads the onnx wheel with pip (no dependencies, nothing installed), and unpacks
# only its test data folders (node, pytorch-converted, pytorch-operator, light, simple, real;
# whichever the wheel holds) to:
#
#     ${TENSORENGINE_ONNX_TESTS_DIR:-$HOME/.cache/tensorengine/onnx-tests/onnx-1.22.0}
#
# Layout afterwards, for example:
#
#     $DIR/node/test_add/model.onnx
#     $DIR/node/test_add/test_data_set_0/input_0.pb
#     $DIR/node/test_add/test_data_set_0/output_0.pb
#     $DIR/light/light_resnet50.onnx, $DIR/light/light_resnet50_output_0.pb
#
# The data is the same in every platform's wheel. When pip finds no wheel for the local Python, the
# script asks for the CPython 3.11 manylinux x86_64 wheel explicitly; it is only unzipped, never
# imported. It is idempotent: a marker file (.complete) is written last, and when it is present the
# script does nothing.
set -euo pipefail

VERSION="1.22.0"
PACKAGE="onnx==$VERSION"
TARGET="${TENSORENGINE_ONNX_TESTS_DIR:-$HOME/.cache/tensorengine/onnx-tests/onnx-$VERSION}"
MARKER=".complete"

count_node_tests() {
    find "$TARGET/node" -mindepth 1 -maxdepth 1 -type d | wc -l | tr -d ' '
}

if [[ -f "$TARGET/$MARKER" ]]; then
    echo "fetch-onnx-tests: the onnx $VERSION test data is already in $TARGET; nothing to do."
    echo "fetch-onnx-tests: $(count_node_tests) node tests."
    exit 0
fi

PIP=(pip)
command -v pip >/dev/null 2>&1 || PIP=(python3 -m pip)

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "fetch-onnx-tests: downloading $PACKAGE (about 20 MB) with pip into a temporary directory..."
if ! "${PIP[@]}" download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$WORK/wheel"; then
    echo "fetch-onnx-tests: no wheel for this Python; asking for the CPython 3.11 manylinux x86_64 one..."
    rm -rf "$WORK/wheel"
    "${PIP[@]}" download --quiet --no-deps --disable-pip-version-check \
        --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        "$PACKAGE" -d "$WORK/wheel"
fi

WHEEL="$(ls "$WORK"/wheel/*.whl | head -n 1)"
[[ -f "$WHEEL" ]] || { echo "fetch-onnx-tests: pip downloaded no wheel" >&2; exit 1; }

mkdir -p "$(dirname "$TARGET")"
STAGE="$TARGET.partial.$$"
rm -rf "$STAGE"

echo "fetch-onnx-tests: unpacking the test data of $(basename "$WHEEL")..."
python3 - "$WHEEL" "$STAGE" <<'PY'
import os
import shutil
import sys
import zipfile

wheel, stage = sys.argv[1], sys.argv[2]
prefix = "onnx/backend/test/data/"
folders = ("node", "pytorch-converted", "pytorch-operator", "light", "simple", "real")
written = 0
with zipfile.ZipFile(wheel) as archive:
    for info in archive.infolist():
        name = info.filename
        if not name.startswith(prefix) or name.endswith("/"):
            continue
        relative = name[len(prefix):]
        parts = relative.split("/")
        if parts[0] not in folders or any(p in ("", ".", "..") for p in parts):
            continue
        destination = os.path.join(stage, *parts)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        with archive.open(info) as source, open(destination, "wb") as sink:
            shutil.copyfileobj(source, sink)
        written += 1
if written == 0:
    sys.exit("fetch-onnx-tests: the wheel holds no files under " + prefix)
print(f"fetch-onnx-tests: unpacked {written} files.")
PY

[[ -f "$STAGE/node/test_add/model.onnx" && -f "$STAGE/node/test_add/test_data_set_0/input_0.pb" ]] ||
    { echo "fetch-onnx-tests: the unpacked data has no node/test_add test" >&2; exit 1; }
echo "onnx $VERSION backend test data" > "$STAGE/$MARKER"

rm -rf "$TARGET"
mv "$STAGE" "$TARGET"

echo "fetch-onnx-tests: done. The test data is in $TARGET (set TENSORENGINE_ONNX_TESTS_DIR to use another place)."
for folder in node pytorch-converted pytorch-operator simple real; do
    if [[ -d "$TARGET/$folder" ]]; then
        echo "fetch-onnx-tests: $folder: $(find "$TARGET/$folder" -mindepth 1 -maxdepth 1 -type d | wc -l | tr -d ' ') tests"
    fi
done
if [[ -d "$TARGET/light" ]]; then
    echo "fetch-onnx-tests: light: $(find "$TARGET/light" -maxdepth 1 -name '*.onnx' | wc -l | tr -d ' ') models"
fi
echo "fetch-onnx-tests: $(count_node_tests) node tests."
