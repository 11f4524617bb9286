#!/usr/bin/env bash
# The main job: installs what is missing, then runs tensorbench's quick suite (under a minute on
# two cores). Extra arguments go to tensorbench (`scripts/bench.sh --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "bench: building tensorbench (release) and running the quick suite" >&2
if grep -q '"tensorbench"' Package.swift; then
    swift run -c release tensorbench --suite quick "$@"
else
    swift run -c release tensor-demo "$@"
fi
