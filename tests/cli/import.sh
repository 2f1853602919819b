#!/bin/sh
# memplan import-csv: a MiniMalloc / idealloc problem becomes a graph as
# large as the problem (a node per distinct time, not per time unit), whose
# nodes carry the gaps between times as span= so opt still weighs real
# lifetimes: MiniMalloc's A plans in a few MiB and --exact still proves it
# (with ranks for widths it does not); times past 2^30 fall back to ranks.
set -u
. tests/cli/common.inc
A=bench/data/minimalloc/A.1048576.csv
expect_rc 0 "$M" import-csv "$A" -o "$T/a.mpg"
rows=$(($(wc -l <"$A") - 1))
nodes=$(grep -c '^node ' "$T/a.mpg")
[ "$nodes" -le $((2 * rows + 2)) ] && ok || bad "$nodes nodes for $rows buffers"
grep -q ' span=[0-9]' "$T/a.mpg" && ok || bad "no span= in the imported graph"
# node times are the file's own: the first node covers the time before the first bound
first=$(sort -t, -k2,2n "$A" | sed -n 2p | cut -d, -f2)
[ "$first" -eq 0 ] || head -5 "$T/a.mpg" | grep -q "^node call span=$first\$\|^node call\$" && ok || bad "no leading node for time 0..$first"
expect_rc 0 "$M" plan --alignment 1 --exact -o "$T/a.mpp" "$T/a.mpg"
grep -q "^buffers 0 1048576$" "$T/a.mpp" && ok || bad "A --exact: $(grep '^buffers' "$T/a.mpp")"
grep -q "exact: proved optimal" "$T/err" && ok || bad "A --exact not proved: $(tail -1 "$T/err")"
# one buffer over four million time units: three nodes, not four million
printf 'id,lower,upper,size\n0,3999990,4000000,64\n1,0,5,32\n' >"$T/wide.csv"
expect_rc 0 "$M" import-csv "$T/wide.csv" -o "$T/w.mpg"
[ "$(grep -c '^node ' "$T/w.mpg")" -le 6 ] && ok || bad "$(grep -c '^node ' "$T/w.mpg") nodes for 2 buffers"
expect_rc 0 "$M" plan --alignment 1 --verify -o "$T/w.mpp" "$T/w.mpg"
expect_rc 0 "$M" export --format minimalloc-csv -o "$T/w.csv" "$T/w.mpg" "$T/w.mpp"
grep -q '^b0,3999990,4000000,64,' "$T/w.csv" && ok || bad "export lost the real times: $(cat "$T/w.csv")"
# times past 2^30: ranks, no span, still a valid plan
printf 'id,lower,upper,size\n0,0,2000000000,64\n1,1000000000,1000000001,32\n' >"$T/far.csv"
expect_rc 0 "$M" import-csv "$T/far.csv" -o "$T/f.mpg"
grep -q ' span=' "$T/f.mpg" && bad "span= past 2^30" || ok
expect_rc 0 "$M" plan --alignment 1 --verify -o "$T/f.mpp" "$T/f.mpg"
echo "import: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
