#!/bin/sh
# The known ExecuTorch defects (corpus/defects, docs/deviations.md): for each
# graph, ExecuTorch's plan (--et-exact) is reproduced exactly and rejected by
# the verifier naming the right rule (or refused, exit 3, as ExecuTorch
# raises; or, where it is only wasteful, accepted with a warning); the repaired plan is exactly the recorded one and valid; the
# optimized planner's plan is valid too.
set -u
. tests/cli/common.inc
for g in corpus/defects/*.mpg; do
    b=${g%.mpg}
    # shellcheck disable=SC2046
    "$M" plan $(cat "$b.et.args") "$g" >"$T/et.mpp" 2>"$T/err"; rc=$?
    if [ -e "$b.et.rc" ]; then
        [ "$rc" = "$(cat "$b.et.rc")" ] && ok || bad "$g: --et-exact exit $rc, want $(cat "$b.et.rc")"
    else
        [ "$rc" = 0 ] && cmp -s "$T/et.mpp" "$b.et.mpp" && ok || bad "$g: --et-exact plan differs (exit $rc)"
        "$M" verify "$g" "$T/et.mpp" >"$T/v" 2>&1; vrc=$?
        if [ "$(cat "$b.et.rule")" = wasteful ]; then
            # wasteful, not unsafe: valid (exit 0) with a warning naming the bytes
            [ "$vrc" = 0 ] && ok || bad "$g: ExecuTorch's wasteful plan not valid (exit $vrc)"
            grep -q "warning: wasteful: tensor .* [0-9]* bytes the runtime never uses" "$T/v" && ok ||
                { bad "$g: no wasteful warning"; cat "$T/v"; }
        else
            [ "$vrc" = 1 ] && ok || bad "$g: ExecuTorch's plan not rejected (exit $vrc)"
            for rule in $(cat "$b.et.rule"); do
                grep -q ": $rule: " "$T/v" && ok || { bad "$g: verifier did not name '$rule'"; cat "$T/v"; }
            done
        fi
    fi
    # ExecuTorch with a pending upstream fix (--et-upstream PR): the recorded
    # plan, and valid
    if [ -e "$b.upstream.args" ]; then
        # shellcheck disable=SC2046
        "$M" plan $(cat "$b.upstream.args") "$g" >"$T/up.mpp" 2>"$T/err"; rc=$?
        [ "$rc" = 0 ] && cmp -s "$T/up.mpp" "$b.upstream.mpp" && ok || bad "$g: --et-upstream plan differs (exit $rc)"
        "$M" verify "$g" "$T/up.mpp" >"$T/v" 2>&1 && ok || { bad "$g: the upstream fix's plan is invalid"; cat "$T/v"; }
    fi
    # shellcheck disable=SC2046
    "$M" plan $(cat "$b.fixed.args") "$g" >"$T/fx.mpp" 2>"$T/err"; rc=$?
    if [ -e "$b.fixed.rc" ]; then
        [ "$rc" = "$(cat "$b.fixed.rc")" ] && ok || bad "$g: repaired exit $rc, want $(cat "$b.fixed.rc")"
    else
        [ "$rc" = 0 ] && cmp -s "$T/fx.mpp" "$b.fixed.mpp" && ok || bad "$g: repaired plan differs (exit $rc)"
        "$M" verify "$g" "$T/fx.mpp" >"$T/v" 2>&1 && ok || { bad "$g: repaired plan invalid"; cat "$T/v"; }
        opts=$(sed 's/--algo greedy//' "$b.fixed.args")
        # shellcheck disable=SC2086
        "$M" plan --algo opt $opts --verify "$g" >/dev/null 2>"$T/v" && ok || { bad "$g: opt plan invalid"; cat "$T/v"; }
    fi
done
echo "defects: $pass passed, $fail failed"
[ "$fail" = 0 ]
