#!/usr/bin/env bash
# The test command: installs what is missing, then runs the whole suite in a release build
# (the naive reference is plain loops; optimised, the parity suite takes seconds, not minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "test: building and running the test suite (release build with testing enabled)" >&2
swift test -c release -Xswiftc -enable-testing "$@"
