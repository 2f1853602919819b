#!/bin/sh
# run_parallel.sh LABEL JOBS COMMAND ITEM...
#
# Run `sh -c COMMAND _ ITEM` for every ITEM, JOBS at a time (CI's machine
# has two cores), each with its output kept apart.  A line says each run's
# end as it comes ("LABEL: ITEM passed (N s)"); then each run's whole
# output under "== ITEM", in the order given (two at once would interleave
# their lines).  Exits 1 when any run failed, naming them, 2 on bad usage.
# The command-line tests (tests/run_cli.sh) and CI's fuzzing pass
# (fuzz/ci.sh) both run this way.
set -u
[ $# -ge 3 ] || { echo "usage: $0 LABEL JOBS COMMAND ITEM..." >&2; exit 2; }
label=$1 jobs=$2 cmd=$3
shift 3
case $jobs in ''|*[!0-9]*|0) echo "$label: JOBS must be a whole number above 0" >&2; exit 2;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# an item's files are named by its place in the list: items may hold '/'
i=0
for item in "$@"; do
    i=$((i + 1))
    printf '%s\n%s\n' "$i" "$item"
done | xargs -d '\n' -n 2 -P "$jobs" sh -c '
    out=$1 label=$2 cmd=$3 i=$4 item=$5 a=$(date +%s)
    sh -c "$cmd" _ "$item" >"$out/$i.out" 2>&1
    rc=$?
    echo $rc >"$out/$i.rc"
    echo "$label: $item $([ $rc = 0 ] && echo passed || echo FAILED) ($(($(date +%s) - a)) s)"
' _ "$out" "$label" "$cmd"
rc=0 failed= i=0
for item in "$@"; do
    i=$((i + 1))
    echo "== $item"
    cat "$out/$i.out" 2>/dev/null
    [ "$(cat "$out/$i.rc" 2>/dev/null)" = 0 ] || rc=1 failed="$failed $item"
done
[ "$rc" = 0 ] || echo "$label: failed:$failed"
exit "$rc"
