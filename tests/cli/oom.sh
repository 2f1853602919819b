#!/bin/sh
# Out of memory in the commands that draw or export a plan (issue 45, B2
# and B15): exit 4, "out of memory", no output file, no abort.  1.8.0's
# export freed its buffer twice ("double free or corruption", exit 134)
# and svg and trace aborted (exit 134).  The limit: ASan's largest
# allocation under a sanitizer (its shadow memory rules out ulimit -v),
# else ulimit -v; either lets the 10^5-tensor graph and plan load (6.4 MB
# at most in one block) and fails the drawing's own first large block.
set -u
. tests/cli/common.inc
"$M" gen --seed 1 --tensors 100000 --profile chain -o "$T/g.mpg" || bad "gen"
"$M" plan "$T/g.mpg" -o "$T/g.mpp" >/dev/null || bad "plan"
if nm "$M" 2>/dev/null | grep -q __asan_init; then
    limited() { ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=8:detect_leaks=1 "$@"; }
else
    limited() { (ulimit -v 40000; "$@"); }
fi
for c in "export --format json" svg trace; do
    rm -f "$T/o.out"
    expect_rc 0 "$M" $c "$T/g.mpg" "$T/g.mpp" -o "$T/whole.out"
    limited "$M" $c "$T/g.mpg" "$T/g.mpp" -o "$T/o.out" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 4 ] && grep -q "out of memory" "$T/err" && ok || bad "$c out of memory: exit $rc: $(tail -2 "$T/err")"
    [ ! -e "$T/o.out" ] && ok || bad "$c out of memory left an output"
    ls "$T" | grep -q '\.tmp\.' && bad "$c left a temporary" || ok
done
echo "oom: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
