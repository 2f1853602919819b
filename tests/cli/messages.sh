#!/bin/sh
# What memplan says: plan --exact always ends with a status line (proved
# optimal, or the best, the bound, the gap and why it stopped); offsets
# that run past 2^64 are shown as the file has them, never clamped; a
# control-flow node whose operands do not bind is FILE:LINE and exit 2.
set -u
. tests/cli/common.inc

# --- --exact: proved at the lower bound (the old code said nothing)
expect_rc 0 "$M" plan --exact -o "$T/p.mpp" corpus/examples/model.mpg
tail -1 "$T/err" | grep -q "^exact: proved optimal: [0-9]* buffers\? (" && ok || bad "--exact status: $(cat "$T/err")"
# --- a MiniMalloc instance the search cannot close in 1 ms of work
"$M" import-csv bench/data/minimalloc/A.1048576.csv -o "$T/a.mpg" || bad "import-csv"
expect_rc 0 "$M" plan --exact --exact-ms 1 -o "$T/a.mpp" "$T/a.mpg"
last=$(tail -1 "$T/err")
echo "$last" | grep -q "^exact: not proved optimal: 1 of 1 buffers open: best [0-9]* bytes, lower bound [0-9]*, gap [0-9]* bytes ([0-9.]*%); stopped: 1 at the --exact-ms limit" && ok ||
    bad "--exact gap line: $last"
grep -q "buffer 1: best [0-9]* bytes, lower bound [0-9]*: stopped at the --exact-ms work limit" "$T/err" && ok ||
    bad "--exact buffer line: $(cat "$T/err")"
# the numbers are the plan's: best is the buffer the plan holds
size=$(grep '^buffers' "$T/a.mpp" | awk '{print $3}')
echo "$last" | grep -q "best $size bytes" && ok || bad "--exact best $size: $last"
"$M" plan --help | grep -q "upper bound" && ok || bad "--budget-ms documented as an upper bound"

# --- offsets near 2^64: the end is 2^64 + ..., as the file says
"$M" plan --algo greedy corpus/examples/chain.mpg |
    sed 's/^alloc x \(.*\) offset=[0-9]*/alloc x \1 offset=18446744073709551600/' >"$T/wrap.mpp"
expect_rc 1 "$M" verify corpus/examples/chain.mpg "$T/wrap.mpp"
grep -q "x \[18446744073709551600,18446744073709551712) lies outside" "$T/out" "$T/err" && ok ||
    bad "a wrapping end is clamped: $(cat "$T/out" "$T/err")"
"$M" plan --algo greedy corpus/examples/chain.mpg |
    sed 's/^alloc x \(.*\) offset=[0-9]* size=[0-9]*/alloc x \1 offset=18446744073709551615 size=18446744073709551615/' \
    >"$T/wrap2.mpp"
"$M" verify corpus/examples/chain.mpg "$T/wrap2.mpp" >"$T/out" 2>&1
grep -q "x \[18446744073709551615,36893488147419103230) lies outside" "$T/out" && ok ||
    bad "the largest end: $(cat "$T/out")"

# --- op=: shown by the verifier, the SVG and the trace
cat >"$T/op.mpg" <<'G'
memplan-graph 1
graph main
tensor x 100
tensor a 200
tensor b 200
node placeholder out=x
node call op=aten.relu.default in=x out=a
node call op=aten.add.Tensor in=a,x out=b
node output in=b
end
G
"$M" plan --algo greedy -o "$T/op.mpp" "$T/op.mpg" && ok || bad "plan a graph with op="
sed 's/^alloc b mem_id=1 obj=\([0-9]*\) offset=[0-9]*/alloc b mem_id=1 obj=\1 offset=112/' "$T/op.mpp" >"$T/opbad.mpp"
expect_rc 1 "$M" verify "$T/op.mpg" "$T/opbad.mpp"
grep -q "a (output of node 1, aten.relu.default) \[208,416) and b (output of node 2, aten.add.Tensor)" "$T/out" &&
    ok || bad "verifier message without the operators: $(cat "$T/out")"
"$M" svg -o "$T/op.svg" "$T/op.mpg" "$T/op.mpp" && ok || bad "svg"
grep -q "<title>a (main) output of node 1, aten.relu.default," "$T/op.svg" && ok || bad "SVG tooltip lacks the operator"
"$M" trace -o "$T/op.json" "$T/op.mpg" "$T/op.mpp" && ok || bad "trace"
grep -q '"name":"b (aten.add.Tensor)"' "$T/op.json" && grep -q '"node":2,"op":"aten.add.Tensor"' "$T/op.json" &&
    ok || bad "trace events lack the operator"

# --- a cond whose operands do not match its branch: FILE:LINE, exit 2, no output
cat >"$T/bind.mpg" <<'G'
memplan-graph 1
graph main
tensor p 16
tensor x 64
tensor y 64
node placeholder out=p
node placeholder out=x
node cond in=p,x,x true=br false=br out=y
node output in=y
end
graph br
tensor i 64
tensor o 64
node placeholder out=i
node call in=i out=o
node output in=o
end
G
expect_rc 2 "$M" plan -o "$T/bind.mpp" "$T/bind.mpg"
grep -q "^memplan plan: $T/bind.mpg:8: cond passes 2 operands after its predicate to its true graph 'br', which has 1 placeholder$" "$T/err" &&
    ok || bad "binding message: $(cat "$T/err")"
[ ! -e "$T/bind.mpp" ] && ok || bad "a refused graph left an output"

# --- an empty baseline file is named in the message (found by the baseline fuzz target)
"$M" harness --seed 1 --count 2 --db "$T/g.db" --quiet >/dev/null 2>&1 || bad "harness for the gate"
: >"$T/empty.sql"
expect_rc 2 "$M" gate --db "$T/g.db" --baseline "$T/empty.sql"
grep -q "^memplan gate: $T/empty.sql: not a memplan baseline: " "$T/err" && ok || bad "empty baseline: $(cat "$T/err")"

echo "messages: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
