#!/bin/sh
# More effort is never worse: for one graph and one set of options, a
# larger --budget-ms or --exact-ms never gives a larger total (opt's
# improvement and exact search follow one budget-independent sequence of
# layouts that the budget only cuts short: docs/optimized.md, "Effort").
# Replays corpus/effort (instances where 1.5.0 broke this) and MiniMalloc's
# D and J, the instances the issue found it on.
set -u
. tests/cli/common.inc
# total FILE.mpg ARGS...: the plan's total bytes (every buffer), or "fail"
total() {
    g=$1
    shift
    "$M" plan --alignment 1 "$@" "$g" 2>"$T/err" | awk '/^buffers /{s+=$3} END{print s}'
}
# ladder FILE.mpg NAME FIXED VALUES...: totals never grow along VALUES of --NAME
ladder() {
    g=$1 knob=$2 fixed=$3
    shift 3
    prev=
    for v in "$@"; do
        # shellcheck disable=SC2086
        t=$(total "$g" $fixed --$knob "$v")
        [ -n "$t" ] && [ "$t" != 0 ] || { bad "$g --$knob $v: no plan: $(cat "$T/err")"; return; }
        if [ -n "$prev" ] && [ "$t" -gt "$prev" ]; then
            bad "$g: --$knob $v gives $t bytes, more than $prev with less"
            return
        fi
        prev=$t
    done
    ok
}
for c in corpus/effort/*.csv; do
    g=$T/$(basename "$c" .csv).mpg
    expect_rc 0 "$M" import-csv "$c" -o "$g"
    ladder "$g" budget-ms "--exact --exact-ms 20" 1 3 10 30 100 300 1000
    ladder "$g" exact-ms "--exact --budget-ms 20" 1 3 10 20 100 1000
    # the exact search keeps the heuristic's layout when it finds nothing better
    h=$(total "$g")
    x=$(total "$g" --exact --exact-ms 1)
    [ "$x" -le "$h" ] && ok || bad "$c: --exact gives $x bytes, the heuristic alone $h"
done
# the budgets where 1.5.0 gave more bytes for more effort (each run here
# is some 35 s under the sanitizers: the ladders stay short)
for x in "D 60000" "J 5000"; do
    set -- $x
    g=$T/$1.mpg
    expect_rc 0 "$M" import-csv "bench/data/minimalloc/$1.1048576.csv" -o "$g"
    ladder "$g" budget-ms "--exact --exact-ms 10000" 20 "$2"
done
echo "effort: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
