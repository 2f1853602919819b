#!/bin/sh
# et_verify_corpus.sh CHECKOUT [GRAPH...]: every graph (default: the
# corpus's) planned inside ExecuTorch's own apply_algo by ExecuTorch's greedy
# and by memplan's adapter (memplan:opt), each checked by ExecuTorch's own
# Verifier (tools/et_record.py --verify), and each plan, every graph of the
# program, by memplan's verifier (`memplan verify`, which ExecuTorch's
# checks only the entry graph's specs): a Markdown table, as
# docs/executorch-check.md keeps it.  Needs build/memplan,
# build/libmemplan.so.2 and Debian's python3-torch.
set -u
[ $# -ge 1 ] || { echo "usage: $0 EXECUTORCH_CHECKOUT [GRAPH...]" >&2; exit 2; }
co=$1; shift
[ $# -gt 0 ] || set -- corpus/*/*.mpg
export MEMPLAN_LIBRARY=${MEMPLAN_LIBRARY:-$(pwd)/build/libmemplan.so.2}
say() { # the verdict of one run, short
    case $1 in
    0) sed -n 's/.*accepts the plan (\([0-9]*\) pairs.*/accepted (\1 pairs share storage)/p' "$2" ;;
    1) sed -n "s/.*Verifier rejects the plan: \([A-Za-z]*\): \([A-Za-z_ ]*\).*/rejected (\1: \2)/p" "$2" ;;
    3) sed -n "s/.*cannot plan it: \([A-Za-z]*\): .*\(bad size\|larger than its base\|not planned\).*/refused (\1: \2)/p" "$2" |
        grep . || sed -n "s/.*cannot plan it: .*\(no plan is safe\).*/refused (\1: D14)/p" "$2" | grep . ||
        echo "refused by apply_algo" ;;
    *) echo "error $1" ;;
    esac
}
whole() { # memplan's verifier on the plan of every graph
    sed -i 's/algo=memplan:[a-z]*/algo=opt/' "$2"
    build/memplan verify "$1" "$2" | tail -n 1 | sed 's/;.*//; s/violations\{0,1\} (\(.*\))/(\1)/'
}
echo "| graph | ExecuTorch's greedy: Verifier | memplan verify | memplan:opt through the adapter: Verifier | memplan verify |"
echo "|---|---|---|---|---|"
for g in "$@"; do
    row="| $g"
    for a in greedy memplan:opt; do
        rm -f /tmp/etp.$$
        /usr/bin/python3 tools/et_record.py --executorch "$co" --algo "$a" --verify "$g" -o /tmp/etp.$$ 2>/tmp/etv.$$
        rc=$?
        [ $rc = 1 ] && # rejected: the plan, written without the Verifier
            /usr/bin/python3 tools/et_record.py --executorch "$co" --algo "$a" "$g" -o /tmp/etp.$$ 2>/dev/null
        row="$row | $(say $rc /tmp/etv.$$) | $( [ $rc -le 1 ] && whole "$g" /tmp/etp.$$ || echo -)"
    done
    echo "$row |"
done
rm -f /tmp/etv.$$ /tmp/etp.$$
