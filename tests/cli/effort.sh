#!/bin/sh
# More effort is never worse: for one graph and one set of options, a
# larger --budget-ms or --exact-ms never gives a larger total (opt's
# improvement and exact search follow one budget-independent sequence of
# layouts that the budget only cuts short: docs/notes/optimized.md, "Effort").
# Replays corpus/effort (instances where 1.5.0 broke this) and MiniMalloc's
# D and J, the instances the issue found it on.
#
# The plans are independent: they run first, TEST_JOBS at a time (default
# 2; under the sanitizers D's and J's take some 35 s each), each total into
# a file of its own; the ladders are then read from those files.
set -u
. tests/cli/common.inc
jobs=${TEST_JOBS:-2}
: >"$T/jobs"
# job NAME GRAPH ARGS...: a plan of GRAPH (--alignment 1 ARGS) whose total
# bytes (every buffer) go to $T/NAME.total, its errors to $T/NAME.err
job() { echo "$*" >>"$T/jobs"; }
# ladder NAME KNOB VALUES...: the totals of jobs NAME-VALUE never grow
ladder() {
    name=$1 knob=$2
    shift 2
    prev=
    for v in "$@"; do
        t=$(cat "$T/$name-$v.total")
        [ -n "$t" ] && [ "$t" != 0 ] || { bad "$name --$knob $v: no plan: $(cat "$T/$name-$v.err")"; return; }
        if [ -n "$prev" ] && [ "$t" -gt "$prev" ]; then
            bad "$name: --$knob $v gives $t bytes, more than $prev with less"
            return
        fi
        prev=$t
    done
    ok
}
# the budgets where 1.5.0 gave more bytes for more effort (the ladders
# stay short: each of these plans is some 35 s under the sanitizers; listed
# first, so that the short ones fill in around them)
for x in "D 60000" "J 5000"; do
    set -- $x
    expect_rc 0 "$M" import-csv "bench/data/minimalloc/$1.1048576.csv" -o "$T/$1.mpg"
    for v in 20 "$2"; do job "$1-budget-$v" "$T/$1.mpg" --exact --exact-ms 10000 --budget-ms "$v"; done
done
BUDGETS="1 3 10 30 100 300 1000" EXACTS="1 3 10 20 100 1000"
for c in corpus/effort/*.csv; do
    n=$(basename "$c" .csv)
    expect_rc 0 "$M" import-csv "$c" -o "$T/$n.mpg"
    for v in $BUDGETS; do job "$n-budget-$v" "$T/$n.mpg" --exact --exact-ms 20 --budget-ms "$v"; done
    for v in $EXACTS; do job "$n-exact-$v" "$T/$n.mpg" --exact --budget-ms 20 --exact-ms "$v"; done
    job "$n-heuristic-0" "$T/$n.mpg"
    job "$n-exact1-0" "$T/$n.mpg" --exact --exact-ms 1
done
export M T
# shellcheck disable=SC2016
xargs -P "$jobs" -L 1 sh -c '
    n=$1 g=$2
    shift 2
    "$M" plan --alignment 1 "$@" "$g" 2>"$T/$n.err" | awk "/^buffers /{s+=\$3} END{print s}" >"$T/$n.total"
' sh <"$T/jobs"
for c in corpus/effort/*.csv; do
    n=$(basename "$c" .csv)
    # shellcheck disable=SC2086
    ladder "$n-budget" budget-ms $BUDGETS
    # shellcheck disable=SC2086
    ladder "$n-exact" exact-ms $EXACTS
    # the exact search keeps the heuristic's layout when it finds nothing better
    h=$(cat "$T/$n-heuristic-0.total") x=$(cat "$T/$n-exact1-0.total")
    [ -n "$h" ] && [ -n "$x" ] && [ "$x" -le "$h" ] && ok || bad "$c: --exact gives $x bytes, the heuristic alone $h"
done
ladder D-budget budget-ms 20 60000
ladder J-budget budget-ms 20 5000
echo "effort: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
