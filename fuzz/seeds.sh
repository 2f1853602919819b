#!/bin/sh
# seeds.sh MEMPLAN OUTDIR
#
# Raw seed material for the four targets, made from the repository's graph
# corpora and `memplan gen` / `memplan plan` (deterministic: same memplan,
# same files).  It is not the seed corpus itself: run libFuzzer on it for a
# while, then `make fuzz-merge` (-merge=1) keeps the few inputs that cover
# as much - that minimized set is corpus/<target>/.  docs/fuzzing.md.
#   OUTDIR/parse     graph files (valid, and small broken variants)
#   OUTDIR/planfile  plan files (from every algorithm, ExecuTorch's too)
#   OUTDIR/verify    graph file + plan file, valid and broken plans
#   OUTDIR/planners  graph files with "# options:" lines, and byte strings
set -eu
[ $# = 2 ] || { echo "usage: $0 MEMPLAN OUTDIR" >&2; exit 2; }
M=$1 out=$2
mkdir -p "$out/parse" "$out/planfile" "$out/verify" "$out/planners"
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"' EXIT
n=0
# the repository's graphs (small ones) ...
for g in corpus/examples/*.mpg corpus/defects/*.mpg corpus/et/*.mpg; do
    [ -f "$g" ] || continue
    [ "$(wc -c <"$g")" -le 6000 ] || continue
    n=$((n + 1)); cp "$g" "$graphs/r$n.mpg"
done
# ... and generated ones: every profile, depths, devices
for p in mixed chain wide encdec transformer; do
    for s in 1 2 3; do
        for t in 6 14 30; do
            n=$((n + 1))
            "$M" gen --seed "$s$t" --tensors "$t" --depth $((s % 3)) --profile "$p" \
                --devices cpu,cuda:0,cuda:1 -o "$graphs/g$n.mpg"
        done
    done
done
for g in "$graphs"/*.mpg; do
    b=$(basename "$g" .mpg)
    cp "$g" "$out/parse/$b"
    # a few broken variants: a line dropped, a number mangled
    sed '3d' "$g" >"$out/parse/$b-drop3"
    sed 's/ \([0-9][0-9]*\)$/ x\1/' "$g" | head -12 >"$out/parse/$b-bad"
    k=0
    for args in "--algo greedy" "--algo naive" "--algo opt --budget-ms 1" \
        "--algo greedy --et-exact" "--algo greedy --per-device --alignment 8" \
        "--algo opt --no-alloc-inputs --no-alloc-outputs --budget-ms 1"; do
        k=$((k + 1))
        # shellcheck disable=SC2086
        "$M" plan $args "$g" >"$graphs/p.mpp" 2>/dev/null || continue
        cp "$graphs/p.mpp" "$out/planfile/$b-$k"
        cat "$g" "$graphs/p.mpp" >"$out/verify/$b-$k"
        # broken plans: an offset moved, a size changed, a line dropped
        sed '0,/offset=0 /s//offset=16 /' "$graphs/p.mpp" | cat "$g" - >"$out/verify/$b-$k-off"
        sed '0,/ size=\([0-9]\)/s// size=1\1/' "$graphs/p.mpp" | cat "$g" - >"$out/verify/$b-$k-size"
        sed '5d' "$graphs/p.mpp" | cat "$g" - >"$out/verify/$b-$k-drop"
    done
    opts=""
    case $b in *[13579]) opts="--alignment 8 --per-device";; *[02468]) opts="--no-alloc-inputs";; esac
    { echo "memplan-graph 1"; echo "# options: $opts --budget-ms 1"; sed 1d "$g"; } >"$out/planners/$b"
done
# structural byte strings for the planner target's decoder
i=0
for bytes in '\000\000' '\020\000\001\007\003\000\005\000\006\001' \
    '\064\010\002\100\003\107\011\007\002\003\000\000\001\000\002\007\001\000\003' \
    '\371\217\003\002\006\005\007\003\000\001\002\300\004\010\011\012\005\000\007'; do
    i=$((i + 1))
    printf "$bytes" >"$out/planners/bytes$i"
done
echo "seeds: $(ls "$out/parse" | wc -l) parse, $(ls "$out/planfile" | wc -l) planfile, $(ls "$out/verify" | wc -l) verify, $(ls "$out/planners" | wc -l) planners in $out"
