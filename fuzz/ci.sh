#!/bin/sh
# ci.sh SECONDS JOBS TARGET...
#
# CI's fuzzing pass (make fuzz-ci): each target for SECONDS with libFuzzer
# (fuzz/run-libfuzzer.sh --ci), JOBS of them at a time: CI's machine has
# two cores, and one campaign keeps one busy, so two at a time halve the
# pass's wall time and give each target the same fuzzing.  Each campaign's
# output is kept and printed whole, in target order, once all have ended
# (two at once would interleave their lines).  Exits 1 when any campaign
# found a crash or failed.
set -u
[ $# -ge 3 ] || { echo "usage: $0 SECONDS JOBS TARGET..." >&2; exit 2; }
seconds=$1 jobs=$2
shift 2
case $jobs in ''|*[!0-9]*|0) echo "JOBS must be a whole number above 0" >&2; exit 2;; esac
out=build/fuzz/ci
mkdir -p "$out"
for t in "$@"; do rm -f "$out/$t.out" "$out/$t.rc"; done
# in batches of JOBS (every campaign takes SECONDS: a batch ends together)
n=0
for t in "$@"; do
    ( sh fuzz/run-libfuzzer.sh "$t" "$seconds" "build/fuzz/libfuzzer/fuzz-$t" none - --ci \
        >"$out/$t.out" 2>&1; echo $? >"$out/$t.rc" ) &
    n=$((n + 1))
    [ $((n % jobs)) = 0 ] && wait
done
wait
rc=0
for t in "$@"; do
    cat "$out/$t.out"
    [ "$(cat "$out/$t.rc" 2>/dev/null)" = 0 ] || rc=1
done
exit $rc
