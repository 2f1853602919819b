#!/bin/sh
# run_cli.sh: every command-line test (tests/cli/*.sh), TEST_JOBS of them
# at a time (default 2: CI's machine has two cores, and most of these
# tests run one sanitized process at a time, so two at once halve their
# wall time).  MEMPLAN, BUILD and CC pass through to each test.  A line
# says each test's end as it comes; then each test's whole output, in
# name order (two at once would interleave their lines); exits 1 when any
# test failed, naming them.
set -u
jobs=${TEST_JOBS:-2}
case $jobs in ''|*[!0-9]*|0) echo "TEST_JOBS must be a whole number above 0" >&2; exit 2;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2016
ls tests/cli/*.sh | xargs -P "$jobs" -n 1 sh -c '
    n=$(basename "$1" .sh) a=$(date +%s)
    sh "$1" >"$0/$n.out" 2>&1
    rc=$?
    echo $rc >"$0/$n.rc"
    echo "cli: $1 $([ $rc = 0 ] && echo passed || echo FAILED) ($(($(date +%s) - a)) s)"
' "$out"
rc=0 failed=
for s in tests/cli/*.sh; do
    n=$(basename "$s" .sh)
    echo "== $s"
    cat "$out/$n.out" 2>/dev/null
    [ "$(cat "$out/$n.rc" 2>/dev/null)" = 0 ] || rc=1 failed="$failed $s"
done
[ "$rc" = 0 ] || echo "cli: failed:$failed"
exit "$rc"
