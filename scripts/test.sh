#!/usr/bin/env bash
# The test command: installs what is missing, then runs the whole suite in a release build
# (the naive reference is plain loops; optimised, the parity suite takes seconds, not minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "test: building and running the test suite (release build with testing enabled)" >&2
# The suite runs its tests side by side: a first-use calibration would measure a loaded machine and
# store it for every later process. The tests of that path give their engines stores of their own.
export TENSORENGINE_CALIBRATION=${TENSORENGINE_CALIBRATION:-off}
swift test -c release -Xswiftc -enable-testing "$@"
# On a CPU with AVX-512 the openblas backend runs its own kernels for products, softmax rows,
# depthwise convolutions and pooling; the parity suite runs again with them off, so the paths of
# CPUs without it (OpenBLAS's sgemm, the Swift kernels) are checked against the reference too.
if [ $# -eq 0 ] && grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    echo "test: the parity suite again with the AVX-512 kernels off (TENSORENGINE_AVX512=off)" >&2
    TENSORENGINE_AVX512=off swift test -c release -Xswiftc -enable-testing --skip-build --filter ParityTests
fi
