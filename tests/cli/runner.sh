#!/bin/sh
# tools/run_parallel.sh, which runs these tests and CI's fuzzing pass: every
# item runs, two at a time, its output printed whole under its name in the
# order given; one failed item fails the run and is named.
set -u
. tests/cli/common.inc
R="sh tools/run_parallel.sh"
# the slow first item ends last: the outputs still come in the order given
expect_rc 1 $R x 2 'case $1 in a) sleep 1;; esac; echo "out of $1"; [ "$1" != "b c" ]' a "b c" d/e
[ "$(grep -v '^x: ' "$T/out")" = "$(printf '== a\nout of a\n== b c\nout of b c\n== d/e\nout of d/e')" ] && ok ||
    bad "outputs: $(cat "$T/out")"
grep -qx 'x: b c FAILED ([0-9]* s)' "$T/out" && ok || bad "the failure not said as it came"
grep -qx 'x: failed: b c' "$T/out" && ok || bad "the failed item not named at the end"
[ "$(grep -c 'passed (' "$T/out")" = 2 ] && ok || bad "not every end said: $(cat "$T/out")"
expect_rc 0 $R x 1 'true' a b
expect_rc 2 $R x 0 'true' a
expect_rc 2 $R x 2
echo "runner: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
