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
