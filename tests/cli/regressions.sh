#!/bin/sh
# Replays corpus/regressions: every graph the harness once failed on plans
# and verifies with its options, opt needs no more than greedy, and the
# repaired mode equals ExecuTorch's plan wherever that one is valid (the
# harness's et-divergence check).
set -u
. tests/cli/common.inc
# le A B: decimal A <= B, at any size (sizes reach 2^64, past the shell's numbers)
le() { [ ${#1} -lt ${#2} ] || { [ ${#1} -eq ${#2} ] && [ "$(printf '%s\n%s\n' "$1" "$2" | LC_ALL=C sort | head -1)" = "$1" ]; }; }
for g in corpus/regressions/*.mpg; do
    b=${g%.mpg}
    [ -f "$b.args" ] || { bad "$g: no $b.args (the options it failed with)"; continue; }
    # shellcheck disable=SC2046
    "$M" plan $(cat "$b.args") --verify -o "$T/r.mpp" "$g" 2>"$T/err" && ok || { bad "$g: $(cat "$T/err")"; continue; }
    # opt needs no more than greedy (whose answer may be ExecuTorch's own plan)
    args=$(sed 's/--algo [a-z]*//' "$b.args")
    # shellcheck disable=SC2086
    if "$M" plan $args --algo greedy --verify -o /dev/null "$g" 2>"$T/g" && "$M" plan $args --algo opt --verify -o /dev/null "$g" 2>"$T/o"; then
        gb=$(sed -n 's/.*total \([0-9]*\) bytes.*/\1/p' "$T/g"); ob=$(sed -n 's/.*total \([0-9]*\) bytes.*/\1/p' "$T/o")
        le "$ob" "$gb" && ok || bad "$g: opt needs $ob bytes, greedy $gb"
    fi
    # shellcheck disable=SC2046
    if "$M" plan $(cat "$b.args") --et-exact -o "$T/e.mpp" "$g" 2>/dev/null &&
        "$M" verify "$g" "$T/e.mpp" >"$T/v" 2>&1 && ! grep -q "warning:" "$T/v"; then
        cmp -s "$T/r.mpp" "$T/e.mpp" && ok || bad "$g: ExecuTorch's plan is valid but the repaired plan differs"
    fi
done
echo "regressions: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
