#!/bin/sh
# reorder_bench.sh [GRAPH...]: the reorder table (docs/reorder.md; make
# bench): per graph, the peak live bytes in the given order and after
# memplan reorder, opt's plan before and after (plan, plan --reorder) and
# the reorder's time.  Without graphs: every generator profile at 10^3,
# 10^4 and 10^5 tensors (seed 1).
M=${MEMPLAN:-build/memplan}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
row() { # NAME FILE
    s=$(date +%s%N)
    "$M" reorder -o "$T/r.mpg" "$2" 2>"$T/err" || { echo "| $1 | reorder failed: $(cat "$T/err") |"; return; }
    e=$(date +%s%N)
    set -- "$1" "$2" $(sed -n 's/.*peak live bytes \([0-9]*\) -> \([0-9]*\).*/\1 \2/p' "$T/err")
    how=$(grep -q "proved optimal" "$T/err" && echo "proved optimal" || echo "heuristic")
    valid=$("$M" verify --order "$2" "$T/r.mpg" | cut -c1-12)
    a=$("$M" plan -o /dev/null --verify "$2" 2>&1 | sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')
    b=$("$M" plan -o /dev/null --verify --reorder "$2" 2>&1 | sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')
    cut=$(awk -v x="$3" -v y="$4" 'BEGIN {printf "%.1f%%", x ? 100 * (x - y) / x : 0}')
    echo "| $1 | $3 | $4 | $cut | $how | $a | $b | $(( (e - s) / 1000000 )) ms | $valid |"
}
echo "| graph | peak before | peak after | lower by | order | opt before | opt after | reorder time | verify --order |"
echo "|---|---:|---:|---:|---|---:|---:|---:|---|"
if [ $# -gt 0 ]; then
    for g in "$@"; do row "$(basename "$g" .mpg)" "$g"; done
    exit 0
fi
for p in mixed chain wide encdec transformer; do
    for n in 1000 10000 100000; do
        "$M" gen --seed 1 --tensors $n --profile $p -o "$T/g.mpg" 2>/dev/null
        row "$p $n" "$T/g.mpg"
    done
done
# the adversarial shapes (a view chain made every node ready at once: 9
# minutes at 10^5 before the scheduler looked at 256 candidates a step)
for p in view-chain inplace-chain many-conds deep wide-node many-pools; do
    "$M" gen --seed 1 --tensors 100000 --profile $p -o "$T/g.mpg" 2>/dev/null
    row "$p 100000" "$T/g.mpg"
done
