#!/usr/bin/env bash
# Every reliability check in one command (docs/RELIABILITY.md):
#
#   scripts/reliability.sh [FUZZ_SECONDS_PER_TARGET]      (default 60)
#
# 1. stress: the concurrency tests with 20 rounds of 64 parallel evaluations on every backend,
#    and the OpenCL fault-injection tests (release build);
# 2. the whole test suite under AddressSanitizer + LeakSanitizer (scripts/sanitize.sh address);
# 3. the whole test suite under ThreadSanitizer (scripts/sanitize.sh thread);
# 4. the libFuzzer targets, each for FUZZ_SECONDS (scripts/fuzz.sh).
# Each step's log goes to .build-reliability/; the summary at the end says which passed.
# CI (.ci/run) runs the fast ones: the test suite (stress round, fault injection, saved fuzz
# inputs, pseudo-random graphs) and the AddressSanitizer pass.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-60}
logs=.build-reliability
mkdir -p "$logs"
results=()

step() {
    local name=$1
    shift
    echo "reliability: $name" >&2
    local start=$SECONDS
    if "$@" > "$logs/$name.log" 2>&1; then
        results+=("$(printf '%-10s passed in %5d s' "$name" $((SECONDS - start)))")
    else
        results+=("$(printf '%-10s FAILED after %5d s (see %s)' "$name" $((SECONDS - start)) "$logs/$name.log")")
    fi
}

scripts/setup.sh
step stress env TENSORENGINE_STRESS_ROUNDS=20 swift test -c release -Xswiftc -enable-testing --filter "Concurrency|FaultInjection"
step address scripts/sanitize.sh address
step thread scripts/sanitize.sh thread
step fuzz scripts/fuzz.sh "$fuzz_seconds"

echo
printf '%s\n' "${results[@]}"
[ -f .build-fuzz/summary.txt ] && cat .build-fuzz/summary.txt
grep -h "Test run with" "$logs"/*.log 2>/dev/null | sed 's/^/  /'
! printf '%s\n' "${results[@]}" | grep -q FAILED
