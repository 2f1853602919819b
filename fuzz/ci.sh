#!/bin/sh
# ci.sh SECONDS JOBS TARGET...
#
# CI's fuzzing pass (make fuzz-ci): each target for SECONDS with libFuzzer
# (fuzz/run-libfuzzer.sh --ci), JOBS of them at a time, through
# tools/run_parallel.sh: CI's machine has two cores, and one campaign keeps
# one busy, so two at a time halve the pass's wall time and give each
# target the same fuzzing.  Each campaign's output is printed whole, in
# target order, once all have ended.  Exits 1 when any campaign found a
# crash or failed.
set -u
[ $# -ge 3 ] || { echo "usage: $0 SECONDS JOBS TARGET..." >&2; exit 2; }
seconds=$1 jobs=$2
shift 2
case $seconds in ''|*[!0-9]*) echo "SECONDS must be a whole number" >&2; exit 2;; esac
exec sh tools/run_parallel.sh fuzz "$jobs" \
    "sh fuzz/run-libfuzzer.sh \"\$1\" $seconds \"build/fuzz/libfuzzer/fuzz-\$1\" none - --ci" "$@"
