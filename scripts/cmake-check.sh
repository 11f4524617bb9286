#!/usr/bin/env bash
# The CMake pass: installs cmake and ninja-build if missing, configures and builds the release
# build in build/cmake, runs ctest, installs into a temporary prefix, then builds and runs the
# consumer project Tests/CMakeConsumer against that install. The build folder is kept between runs,
# so a second pass rebuilds only what changed. Builds with at most two jobs (CMAKE_JOBS overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja-build)
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=()
    if [ "$(id -u)" -eq 0 ]; then
        echo "cmake-check: installing ${missing[*]} with apt-get (as root)" >&2
    else
        echo "cmake-check: installing ${missing[*]} with apt-get (via sudo)" >&2
        sudo_cmd=(sudo)
    fi
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

jobs="${CMAKE_JOBS:-2}"
build=build/cmake
start=$SECONDS

echo "cmake-check: configuring $build (Release, Ninja)" >&2
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
echo "cmake-check: building with -j$jobs" >&2
cmake --build "$build" -j "$jobs"

# Smoke runs, side by side: no first-use calibration of a loaded machine is stored.
export TENSORENGINE_CALIBRATION=${TENSORENGINE_CALIBRATION:-off}
echo "cmake-check: running ctest" >&2
ctest --test-dir "$build" --output-on-failure

prefix="$(mktemp -d "${TMPDIR:-/tmp}/tensorengine-install.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
echo "cmake-check: installing into $prefix" >&2
cmake --install "$build" --prefix "$prefix" >/dev/null
"$prefix/bin/tensorplan" devices >/dev/null

echo "cmake-check: building Tests/CMakeConsumer against the installed package" >&2
consumer="$prefix/consumer-build"
cmake -S Tests/CMakeConsumer -B "$consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix"
cmake --build "$consumer" -j "$jobs"
"$consumer/tensorengine-consumer"

echo "cmake-check: passed in $((SECONDS - start)) s" >&2
