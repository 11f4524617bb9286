#!/usr/bin/env bash
# The OpenCL backend on a real GPU, as one prepared check (docs/OPENCL.md, "A GPU check").
#
#   scripts/gpu-check.sh bundle [BUNDLE]        here: build the bundle that travels
#                                               (default build/gpu-bundle, under 64 MiB)
#   scripts/gpu-check.sh run OUT [BUNDLE]       on the GPU machine: find NVIDIA's OpenCL driver,
#                                               run the checks, write every result under OUT
#   scripts/gpu-check.sh run OUT [BUNDLE] --any-device
#                                               the same with the machine's own OpenCL devices
#                                               (PoCL here): the script checked end to end
#
# The bundle holds release builds of tensorengine-check, tensorplan and tensorbench linked with the
# Swift runtime and Foundation statically (--static-swift-stdlib), the shared libraries they load
# (OpenBLAS and its Fortran runtime, the OpenCL ICD loader), xz-compressed (each binary is 58 MiB
# with Foundation's ICU data; 15 MiB compressed), the kernels and the PyTorch reference script.
# `run` unpacks them into OUT/bundle with xz, or Python's lzma where xz is missing. The GPU machine
# needs no Swift toolchain; its glibc must be at least the build machine's (Debian 12: 2.36).
#
# `run` registers the driver through an ICD file in a private OCL_ICD_VENDORS folder (the
# machine's own vendor folder is not touched), then runs, each step under a time limit and logged
# to its own file: the device list, the parity suite under the opencl policy (the GPU), a
# calibration, the OpenCL matmul kernel at 1024/2048/4096, PyTorch's float32 product at those sizes
# (TF32 off), tensorbench's full suite (openblas, opencl, auto and reference rows, JSON) and the
# plans of bert-layer and gemm-2048. OUT/summary.txt lists each step's status and time; the
# unpacked bundle and the engine's caches stay in a scratch folder, removed at the end. Without an
# NVIDIA OpenCL driver it says so, writes OUT/no-driver.txt and stops with status 0.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,12p' "$0" >&2
    exit 2
}

command=${1:-}
[ -n "$command" ] || usage
shift

bundle_products=(tensorengine-check tensorplan tensorbench)

build_bundle() {
    local bundle=${1:-build/gpu-bundle}
    local build=.build-static
    echo "gpu-check: building ${bundle_products[*]} with the Swift runtime linked statically ($build)" >&2
    for product in "${bundle_products[@]}"; do
        swift build -c release --static-swift-stdlib --build-path "$build" --product "$product" >&2
    done
    rm -rf "$bundle"
    mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/kernels"
    local staging
    staging=$(mktemp -d "${TMPDIR:-/tmp}/gpu-bundle.XXXXXX")
    trap 'rm -rf "$staging"' RETURN
    for product in "${bundle_products[@]}"; do
        cp "$build/release/$product" "$staging/"
        strip "$staging/$product"
    done
    # The shared libraries the binaries load, but glibc's own (the GPU machine has those): OpenBLAS,
    # its Fortran runtime, and whatever else ldd names; then the ICD loader, which is opened at run
    # time and so is not in ldd's list.
    for product in "${bundle_products[@]}"; do
        ldd "$staging/$product" | awk '/=> \// { print $3 }'
    done | sort -u | while read -r library; do
        case "$(basename "$library")" in
            libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*) ;;
            *) cp -L "$library" "$staging/" ;;
        esac
    done
    local loader
    loader=$(ldconfig -p | awk '/libOpenCL\.so\.1 .*x86-64/ { print $NF; exit }')
    [ -n "$loader" ] || { echo "gpu-check: the OpenCL ICD loader (libOpenCL.so.1) is not installed: apt-get install ocl-icd-libopencl1" >&2; exit 1; }
    cp -L "$loader" "$staging/libOpenCL.so.1"
    for file in "$staging"/*; do
        local name
        name=$(basename "$file")
        case "$name" in
            *.so*) xz -9 -T2 -c "$file" > "$bundle/lib/$name.xz" ;;
            *) xz -9 -T2 -c "$file" > "$bundle/bin/$name.xz" ;;
        esac
    done
    cp kernels/*.cl "$bundle/kernels/"
    cp bench/gpu_reference.py "$bundle/"
    cp scripts/gpu-check.sh "$bundle/"
    git rev-parse HEAD > "$bundle/revision" 2>/dev/null || true
    local size
    size=$(du -sm "$bundle" | cut -f1)
    echo "gpu-check: bundle $bundle: ${size} MiB ($(ls "$bundle/lib" | tr '\n' ' '))" >&2
    if [ "$size" -ge 64 ]; then
        echo "gpu-check: the bundle is over 64 MiB" >&2
        exit 1
    fi
}

# Prints the path of NVIDIA's OpenCL driver library, or nothing.
find_nvidia_driver() {
    if [ -n "${NVIDIA_OPENCL_LIBRARY:-}" ] && [ -e "$NVIDIA_OPENCL_LIBRARY" ]; then
        echo "$NVIDIA_OPENCL_LIBRARY"
        return
    fi
    local found
    found=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so/ { print $NF; exit }')
    if [ -z "$found" ]; then
        for root in /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/cuda /run/nvidia /opt/nvidia; do
            [ -d "$root" ] || continue
            found=$(find "$root" -maxdepth 4 -name 'libnvidia-opencl.so*' 2>/dev/null | sort | head -1)
            [ -n "$found" ] && break
        done
    fi
    echo "$found"
}

run_checks() {
    local out=${1:?usage: scripts/gpu-check.sh run OUT [BUNDLE] [--any-device]}
    local bundle=build/gpu-bundle
    local any_device=0
    shift
    for argument in "$@"; do
        case "$argument" in
            --any-device) any_device=1 ;;
            *) bundle=$argument ;;
        esac
    done
    [ -f "$bundle/bin/tensorengine-check.xz" ] || { echo "gpu-check: no bundle in $bundle (run: scripts/gpu-check.sh bundle)" >&2; exit 1; }
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    bundle=$(cd "$bundle" && pwd)
    local summary=$out/summary.txt
    : > "$summary"
    if [ "$any_device" -eq 0 ]; then
        local driver
        driver=$(find_nvidia_driver)
        if [ -z "$driver" ]; then
            echo "gpu-check: no NVIDIA OpenCL driver found (ldconfig -p, /usr/local/nvidia, /usr/lib*, /usr/local/cuda;" \
                "NVIDIA_OPENCL_LIBRARY names one): nothing to check" | tee "$out/no-driver.txt" >&2
            exit 0
        fi
        mkdir -p "$out/vendors"
        echo "$driver" > "$out/vendors/nvidia.icd"
        export OCL_ICD_VENDORS="$out/vendors"
        echo "gpu-check: NVIDIA OpenCL driver $driver" | tee -a "$summary" >&2
    else
        echo "gpu-check: the machine's own OpenCL devices (--any-device)" | tee -a "$summary" >&2
    fi
    # Unpack the binaries and libraries in a scratch folder (xz, else Python's lzma); the engine's
    # caches (compiled programs, profiles) go there too, and only results go under OUT.
    local scratch
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
    local unpacked=$scratch/bundle
    mkdir -p "$unpacked/bin" "$unpacked/lib"
    for file in "$bundle"/bin/*.xz "$bundle"/lib/*.xz; do
        local target=$unpacked/$(basename "$(dirname "$file")")/$(basename "$file" .xz)
        if command -v xz >/dev/null 2>&1; then
            xz -dc "$file" > "$target"
        else
            python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$file" "$target"
        fi
    done
    chmod +x "$unpacked"/bin/*

    export LD_LIBRARY_PATH="$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export TENSORENGINE_OPENCL_LIBRARY="$unpacked/lib/libOpenCL.so.1"
    export TENSORENGINE_CACHE_DIR="$scratch/cache"
    export TENSORENGINE_KERNELS_DIR="$bundle/kernels"
    {
        echo "bundle revision: $(cat "$bundle/revision" 2>/dev/null || echo unknown)"
        echo "host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r)"
        command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    } >> "$summary" 2>&1 || true

    # step NAME SECONDS COMMAND...: runs the command with its output in OUT/NAME.txt.
    step() {
        local name=$1 limit=$2
        shift 2
        local started=$SECONDS status=0
        echo "gpu-check: $name" >&2
        timeout "$limit" "$@" > "$out/$name.txt" 2>&1 || status=$?
        local verdict=ok
        [ "$status" -eq 0 ] || verdict="failed ($status)"
        [ "$status" -eq 124 ] && verdict="timed out after ${limit} s"
        printf '%-22s %-28s %4d s\n' "$name" "$verdict" $((SECONDS - started)) | tee -a "$summary" >&2
    }
    local bin=$unpacked/bin
    step devices 120 "$bin/tensorplan" devices
    step parity-opencl 300 "$bin/tensorengine-check" --policy opencl
    step calibrate 180 "$bin/tensorplan" calibrate
    [ -f "$scratch/cache/profiles.json" ] && cp "$scratch/cache/profiles.json" "$out/profiles.json"
    step devices-calibrated 60 "$bin/tensorplan" devices
    step opencl-matmul 180 "$bin/tensorbench" --opencl-matmul 1024,2048,4096
    if command -v python3 >/dev/null 2>&1; then
        step torch-matmul 180 python3 "$bundle/gpu_reference.py" 1024 2048 4096
    else
        echo "torch-matmul            skipped (no python3)" >> "$summary"
    fi
    for workload in bert-layer gemm-2048; do
        step "plan-$workload" 120 "$bin/tensorplan" "$workload" --measure
    done
    step bench-full 420 "$bin/tensorbench" --suite full --backend openblas --backend opencl --backend auto \
        --backend reference --budget "${GPU_CHECK_BUDGET:-0.3}" --json "$out/bench-full.json"
    rm -rf "$scratch"
    echo "gpu-check: results in $out (summary.txt)" >&2
}

case "$command" in
    bundle) build_bundle "$@" ;;
    run) run_checks "$@" ;;
    *) usage ;;
esac
