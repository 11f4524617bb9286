#!/usr/bin/env bash
# Runs the whole test suite under a sanitizer (docs/RELIABILITY.md):
#
#   scripts/sanitize.sh address     AddressSanitizer + LeakSanitizer (CI runs this one)
#   scripts/sanitize.sh thread      ThreadSanitizer
#
# Release builds with testing enabled, in their own build folders (.build-asan, .build-tsan), so
# the sanitized runs take minutes rather than the hours a debug build would. Extra arguments go
# to `swift test` (e.g. --filter Parity).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: scripts/sanitize.sh address|thread [swift test arguments]}
shift
case "$sanitizer" in
    address)
        build=.build-asan
        flags=()
        # use_sigaltstack=0: with this toolchain, ASan's runtime fails to unmap its own per-thread
        # alternate signal stack when a worker thread exits (munmap gives EINVAL, ASan aborts,
        # seen after every test had passed); without it ASan reports a stack overflow as a plain
        # segfault, which is all it loses. Leak checking stays on, with lsan.supp for XCTest.
        export ASAN_OPTIONS="use_sigaltstack=0:detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
        # Full stacks for leaks (fast unwinding stops at libraries built without frame pointers,
        # which left a reported leak with no caller); about the same run time here.
        export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
        ;;
    thread)
        build=.build-tsan
        export TSAN_OPTIONS="halt_on_error=0${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
        # Locks become pthread mutexes ThreadSanitizer understands (Core/Guarded.swift).
        flags=(-Xswiftc -DTENSORENGINE_TSAN)
        ;;
    *)
        echo "sanitize: unknown sanitizer '$sanitizer' (address or thread)" >&2
        exit 2
        ;;
esac
scripts/setup.sh
# Instrumented kernels are slow: a first-use calibration here would store figures of them.
export TENSORENGINE_CALIBRATION=${TENSORENGINE_CALIBRATION:-off}
echo "sanitize: the test suite under --sanitize=$sanitizer ($build)" >&2
swift test -c release --build-path "$build" --sanitize="$sanitizer" -Xswiftc -enable-testing "${flags[@]}" "$@"
