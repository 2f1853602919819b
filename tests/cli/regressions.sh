#!/bin/sh
# Replays corpus/regressions: every graph the harness once failed on plans
# and verifies with its options, and the repaired mode equals ExecuTorch's
# plan wherever that one is valid (the harness's et-divergence check).
set -u
. tests/cli/common.inc
for g in corpus/regressions/*.mpg; do
    b=${g%.mpg}
    # shellcheck disable=SC2046
    "$M" plan $(cat "$b.args") --verify -o "$T/r.mpp" "$g" 2>"$T/err" && ok || { bad "$g: $(cat "$T/err")"; continue; }
    # shellcheck disable=SC2046
    if "$M" plan $(cat "$b.args") --et-exact -o "$T/e.mpp" "$g" 2>/dev/null &&
        "$M" verify "$g" "$T/e.mpp" >"$T/v" 2>&1 && ! grep -q "warning:" "$T/v"; then
        cmp -s "$T/r.mpp" "$T/e.mpp" && ok || bad "$g: ExecuTorch's plan is valid but the repaired plan differs"
    fi
done
echo "regressions: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
