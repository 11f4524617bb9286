#!/usr/bin/env bash
# Runs the libFuzzer targets (docs/RELIABILITY.md): builds `tensorfuzz` with -sanitize=fuzzer
# (and AddressSanitizer) into .build-fuzz, then fuzzes each target for a fixed time, starting from
# its saved inputs in Tests/TensorEngineTests/Fixtures/fuzz/TARGET and a scratch corpus.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 s; npy safetensors graph)
#   FUZZ_FLAGS="-runs=1000000 -detect_leaks=0" scripts/fuzz.sh 3600 graph     (a campaign)
#
# FUZZ_FLAGS go to libFuzzer after the script's own. `-detect_leaks=0` leaves leak detection to
# LeakSanitizer at exit (any leak is still reported, with its allocation's stack, but the input
# saved with it is just the last one run): per input, libFuzzer reruns every input that allocates
# more than it frees, as each new graph does while it fills the engine's plan caches, and scans
# the heap on some, which makes the graph target three times slower (docs/RELIABILITY.md).
#
# Before fuzzing, two self-tests check that a finding and a trap each leave their input. A finding
# stops that target and leaves its input as .build-fuzz/findings/TARGET/crash-*;
# replay one with `.build/release/tensorfuzz TARGET FILE` and add it to the saved inputs with a
# regression test. The figures (executions, coverage, findings) go to .build-fuzz/summary.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy safetensors graph)

echo "fuzz: building tensorfuzz for libFuzzer (.build-fuzz)" >&2
# libFuzzer's `main` would clash with the kernel-embedding plugin's tool: embed the kernels with a
# normal build of that tool first (see Package.swift).
swift build -c release --product embed-kernels
generated=Sources/TensorEngine/Generated
trap 'rm -rf "$generated"' EXIT
mkdir -p "$generated"
.build/release/embed-kernels "$generated/EmbeddedKernels.swift" kernels/*.cl
# `--sanitize=fuzzer` tells SwiftPM that libFuzzer provides `main`; the one flag naming both
# sanitizers comes last and wins (given `--sanitize=fuzzer --sanitize=address`, SwiftPM passes two
# flags in no fixed order and the compiler keeps the last, so coverage came and went).
TENSORENGINE_FUZZ=1 swift build -c release --build-path .build-fuzz --product tensorfuzz \
    --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xswiftc -DTENSORFUZZ_LIBFUZZER
rm -rf "$generated"
binary=.build-fuzz/release/tensorfuzz
# Swift's backtracer installs its crash handlers before libFuzzer starts, and libFuzzer keeps a
# handler it finds installed: a trap went to the backtracer, and its input was saved only when the
# backtracer itself then tripped AddressSanitizer. Off, libFuzzer's handlers save it.
export SWIFT_BACKTRACE=enable=no
# Instrumented kernels: no first-use calibration of them is stored.
export TENSORENGINE_CALIBRATION=${TENSORENGINE_CALIBRATION:-off}
for mode in finding trap; do
    selftest=.build-fuzz/selftest/$mode
    rm -rf "$selftest"
    mkdir -p "$selftest/corpus"
    TENSORFUZZ_TARGET=selftest-$mode ASAN_OPTIONS=use_sigaltstack=0:abort_on_error=1 "$binary" -runs=1 \
        -artifact_prefix="$selftest/" "$selftest/corpus" > "$selftest.log" 2>&1 || true
    if ! ls "$selftest"/crash-* > /dev/null 2>&1; then
        echo "fuzz: a $mode in the fuzz target left no input (see $selftest.log)" >&2
        exit 1
    fi
done
summary=.build-fuzz/summary.txt
: > "$summary"
status=0
for target in "${targets[@]}"; do
    corpus=.build-fuzz/corpus/$target
    findings=.build-fuzz/findings/$target
    mkdir -p "$corpus" "$findings"
    seeds=Tests/TensorEngineTests/Fixtures/fuzz/$target
    log=.build-fuzz/$target.log
    echo "fuzz: $target for ${seconds} s" >&2
    started=$SECONDS
    # Leak detection stays on; the graph target's OpenCL-free evaluation leaves nothing behind.
    if TENSORFUZZ_TARGET=$target ASAN_OPTIONS=use_sigaltstack=0:abort_on_error=1 "$binary" \
        -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$findings/" ${FUZZ_FLAGS:-} "$corpus" ${seeds:+$( [ -d "$seeds" ] && echo "$seeds")} > "$log" 2>&1; then
        result=ok
    else
        result="FINDING (see $log and $findings)"
        status=1
    fi
    elapsed=$((SECONDS - started))
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)
    printf '%-12s %10s executions in %4s s, coverage %6s edges, corpus %5s inputs: %s\n' \
        "$target" "${runs:-?}" "$elapsed" "${coverage:-?}" "$(ls "$corpus" | wc -l)" "$result" | tee -a "$summary"
done
exit $status
