#!/bin/sh
# coverage.sh COVDIR LLVM_PROFDATA LLVM_COV TARGET...
#
# Line coverage that the corpus reaches (make fuzz-coverage): replays
# corpus/TARGET with COVDIR/replay-TARGET (clang source-based coverage,
# -fprofile-instr-generate -fcoverage-mapping), merges the profiles and
# prints the lines covered per directory (core/, ref/, opt/, peers/, verify/,
# viz/), per group (the planners opt/*.c, peers/*.c and ref/*.c, the verifier's rule files) and per
# file.  The full table is COVDIR/report.txt, the annotated sources
# COVDIR/html/index.html.
set -eu
[ $# -ge 4 ] || { echo "usage: $0 COVDIR LLVM_PROFDATA LLVM_COV TARGET..." >&2; exit 2; }
dir=$1 profdata=$2 cov=$3
shift 3
rm -rf "$dir/prof" "$dir/html"
mkdir -p "$dir/prof"
objs=""
for t in "$@"; do
    [ -d "corpus/$t" ] || continue
    # %m: one profile per binary, merged online across the forked children
    # (crash inputs fail, as in make test; what they reach before failing counts)
    LLVM_PROFILE_FILE="$dir/prof/$t-%m.profraw" \
        "$dir/replay-$t" -q --fork "corpus/$t" 2>"$dir/$t.log" | sed "s/^replay:/coverage: $t:/" || true
    if [ -z "$objs" ]; then objs="$dir/replay-$t"; else objs="$objs -object $dir/replay-$t"; fi
done
"$profdata" merge -sparse "$dir"/prof/*.profraw -o "$dir/all.profdata"
# shellcheck disable=SC2086
"$cov" report -instr-profile="$dir/all.profdata" $objs core ref opt peers verify viz api >"$dir/report.txt"
# shellcheck disable=SC2086
"$cov" show -format=html -output-dir="$dir/html" -instr-profile="$dir/all.profdata" $objs \
    core ref opt peers verify viz api >/dev/null 2>&1 || true

# Columns of llvm-cov report: file, regions, missed, cover, functions,
# missed, executed, lines, missed lines, cover, ...
awk -v root="$(pwd)/" '
function add(g, n, m) { L[g] += n; M[g] += m; if (!(g in seen)) { seen[g] = 1; order[++k] = g } }
$1 ~ /\.c$/ {
    f = $1; sub(root, "", f)
    lines = $8; missed = $9
    F[f] = sprintf("%6d %6d %7.2f%%", lines, lines - missed, lines ? 100 * (lines - missed) / lines : 100)
    files[++nf] = f
    split(f, p, "/"); d = p[1] "/"
    add(d, lines, missed)
    if (f ~ /^(opt|peers|ref)\//) add("planners (opt/*.c peers/*.c ref/*.c)", lines, missed)
    if (f ~ /^opt\//) add("  opt/*.c", lines, missed)
    if (f ~ /^peers\//) add("  peers/*.c", lines, missed)
    if (f ~ /^ref\//) add("  ref/*.c", lines, missed)
    if (f ~ /^verify\/(rules|overlap|live|verify|itree|quality)\.c$/)
        add("verifier (verify/{rules,overlap,live,verify,itree,quality}.c)", lines, missed)
    if (f ~ /^core\/(graph|plan)_(parse|write)\.c$/) add("parsers and writers (core/{graph,plan}_{parse,write}.c)", lines, missed)
}
END {
    printf "%-64s %6s %6s %8s\n", "lines covered by the corpus", "lines", "hit", "cover"
    for (i = 1; i <= k; i++) {
        g = order[i]
        printf "%-64s %6d %6d %7.2f%%\n", g, L[g], L[g] - M[g], L[g] ? 100 * (L[g] - M[g]) / L[g] : 100
    }
    print ""
    for (i = 1; i <= nf; i++) printf "  %-62s %s\n", files[i], F[files[i]]
}' "$dir/report.txt"
echo "coverage: full table $dir/report.txt, annotated sources $dir/html/index.html"
