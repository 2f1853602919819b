#!/bin/sh
# et_verify_corpus.sh CHECKOUT [GRAPH...]: every graph (default: the
# corpus's) planned inside ExecuTorch's own apply_algo by ExecuTorch's greedy
# and by memplan's adapter (memplan:opt), each checked by ExecuTorch's own
# Verifier (tools/et_record.py --verify): a Markdown table, as
# docs/executorch-check.md keeps it.  Needs build/libmemplan.so.1 and
# Debian's python3-torch.
set -u
[ $# -ge 1 ] || { echo "usage: $0 EXECUTORCH_CHECKOUT [GRAPH...]" >&2; exit 2; }
co=$1; shift
[ $# -gt 0 ] || set -- corpus/*/*.mpg
export MEMPLAN_LIBRARY=${MEMPLAN_LIBRARY:-$(pwd)/build/libmemplan.so.1}
say() { # the verdict of one run, short
    case $1 in
    0) sed -n 's/.*accepts the plan (\([0-9]*\) pairs.*/accepted (\1 pairs share storage)/p' "$2" ;;
    1) sed -n "s/.*Verifier rejects the plan: \([A-Za-z]*\): \([A-Za-z_ ]*\).*/rejected (\1: \2)/p" "$2" ;;
    3) sed -n "s/.*cannot plan it: \([A-Za-z]*\): .*\(bad size\|larger than its base\|not planned\).*/refused (\1: \2)/p" "$2" |
        grep . || echo "refused by apply_algo" ;;
    *) echo "error $1" ;;
    esac
}
echo "| graph | ExecuTorch's greedy | memplan:opt through the adapter |"
echo "|---|---|---|"
for g in "$@"; do
    row="| $g"
    for a in greedy memplan:opt; do
        /usr/bin/python3 tools/et_record.py --executorch "$co" --algo "$a" --verify "$g" -o /dev/null 2>/tmp/etv.$$
        row="$row | $(say $? /tmp/etv.$$)"
    done
    echo "$row |"
done
rm -f /tmp/etv.$$
