#!/bin/sh
# artifacts_bench.sh [MEMPLAN] FILE... : for each .tflite or .pte, the
# bytes its own planner needs (TFLite Micro's greedy planner, tflm; or the
# plan the .pte carries), what opt needs, and the lower bound, as a
# markdown table with totals (docs/benchmarks.md, "Compiled programs").
# Files that cannot be imported are listed with the reason.
M=${MEMPLAN:-build/memplan}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
echo "| file | tensors planned | own plan | opt | lower bound | saved |"
echo "|---|---:|---:|---:|---:|---:|"
n=0 own_t=0 opt_t=0 lb_t=0
for f in "$@"; do
    case "$f" in *.pte) kind=pte ;; *) kind=tflite ;; esac
    if ! "$M" import-$kind "$f" -o "$T/g.mpg" --plan "$T/own.mpp" 2>"$T/err"; then
        echo "| $(basename "$f") | not imported: $(tail -1 "$T/err" | sed 's/.*: //') | | | | |"
        continue
    fi
    # the options the file's own plan was read with: its alignment, and
    # whether mutable state is planned (TFLite Micro keeps it outside)
    al=$(sed -n 's/^options alignment=\([0-9]*\) .*/\1/p' "$T/own.mpp")
    flag=""; grep -q '^options .*alloc_mutable=0' "$T/own.mpp" && flag=--no-alloc-mutable
    "$M" verify "$T/g.mpg" "$T/own.mpp" >"$T/v"
    o=$(sed -n 's/.*total \([0-9]*\) bytes.*/\1/p' "$T/v")
    lb=$(sed -n 's/.*lower bound \([0-9]*\) bytes.*/\1/p' "$T/v")
    opt=$("$M" plan --algo opt --alignment "$al" $flag --verify -o /dev/null "$T/g.mpg" 2>&1 |
        sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')
    planned=$(grep -c '^alloc' "$T/own.mpp")
    if grep -q '^INVALID' "$T/v"; then # not a plan to compare with: left out of the totals
        echo "| $(basename "$f") | $planned | $o, invalid ($(grep -c ': overlap:' "$T/v") overlaps) | $opt | $lb | |"
        continue
    fi
    echo "| $(basename "$f") | $planned | $o | $opt | $lb | $((o - opt)) |"
    n=$((n + 1)) own_t=$((own_t + o)) opt_t=$((opt_t + opt)) lb_t=$((lb_t + lb))
done
echo "| **$n files** | | **$own_t** | **$opt_t** | **$lb_t** | **$((own_t - opt_t))** |"
