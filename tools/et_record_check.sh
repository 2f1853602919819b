#!/bin/sh
# Re-record every ExecuTorch plan the corpus holds with ExecuTorch's own
# planner (tools/et_record.py) from a checkout, and compare byte for byte:
# corpus/et/*.mpp (what `memplan plan --et-exact` must reproduce) and
# corpus/defects/*.et.mpp (each defect as memplan models it; a `.et.rc` file
# means ExecuTorch refuses the graph).  Usage:
#   tools/et_record_check.sh EXECUTORCH_CHECKOUT      (or: make et-record-check EXECUTORCH=...)
# Exit 0 when every plan is ExecuTorch's, 1 otherwise (the differences are listed).
set -u
et=${1:?usage: tools/et_record_check.sh EXECUTORCH_CHECKOUT}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
tmp=$(mktemp -d) || exit 4
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0
for args in corpus/et/*.args corpus/defects/*.et.args; do
    stem=${args%.args}
    case $args in
        corpus/et/*) graph=${stem%.*}.mpg ;;
        *) graph=${stem%.et}.mpg ;;
    esac
    # shellcheck disable=SC2046 # the options file holds words
    "$py" tools/et_record.py --executorch "$et" $(cat "$args") "$graph" >"$tmp/plan" 2>"$tmp/err"
    rc=$?
    if [ -f "$stem.mpp" ]; then
        if [ $rc -eq 0 ] && cmp -s "$tmp/plan" "$stem.mpp"; then same=$((same + 1)); continue; fi
        echo "differs: $stem.mpp (exit $rc)"; diff "$tmp/plan" "$stem.mpp" | head -5; cat "$tmp/err"
    elif [ -f "$stem.rc" ] && [ "$rc" = "$(cat "$stem.rc")" ]; then
        same=$((same + 1)); continue
    else
        echo "differs: $stem (exit $rc, expected $(cat "$stem.rc" 2>/dev/null))"; cat "$tmp/err"
    fi
    differ=$((differ + 1))
done
echo "et-record-check: $same plans as ExecuTorch writes them, $differ different"
[ $differ -eq 0 ]
