#!/bin/sh
# `memplan bench` (`make bench` runs it in full): the table, its targets
# and its rows in the store, on generated graphs of up to 10^3 tensors and
# one real instance.  $MEMPLAN is the binary.
set -u
. tests/cli/common.inc

mkdir -p "$T/data/idealloc"
cp bench/data/idealloc/resnet50.csv "$T/data/idealloc/"
mkdir -p "$T/corpus/examples"
cp corpus/examples/model.mpg "$T/corpus/examples/"
expect_rc 0 "$M" bench --db "$T/b.db" --data "$T/data" --corpus "$T/corpus" --max-tensors 1000 --repeat 2
cp "$T/out" "$T/table"
for p in mixed chain wide encdec transformer inplace-chain view-chain many-devices many-pools wide-node many-conds deep \
    plain-chain inplace-pairs fan-in scratch-chain; do
    for n in 100 1000; do
        grep -q "^| $p-$n | [0-9]* | greedy | [0-9]* | [0-9]* | [0-9.]* | " "$T/table" &&
            grep -q "^| $p-$n | [0-9]* | opt | [0-9]* | [0-9]* | [0-9.]* | .* | [0-9.]*x |$" "$T/table" &&
            ok || bad "rows of $p-$n: $(grep "$p-$n " "$T/table")"
    done
done
grep -q '^| resnet50 | 1042 | opt | 1515472556 | 1515472556 | 1.0000 | ' "$T/table" && ok ||
    bad "resnet50: $(grep resnet50 "$T/table")"
grep -q 'minimalloc/A.1048576.csv: cannot open' "$T/err" && ok || bad "missing instance not reported"
# the corpus's models, every planner
for a in greedy opt tflm bestfit; do
    grep -q "^| examples/model | 22 | $a | [0-9]* | 9895936 | " "$T/table" && ok || bad "examples/model $a: $(grep examples/model "$T/table")"
done
grep -q "^| examples/model | 22 | naive | refused | " "$T/table" && ok || bad "naive has no in-place tensors"
grep -q '^- chain: mean ratio opt 1.0000, greedy ' "$T/table" && ok || bad "chain target line"
grep -q '^- opt above greedy: 0 of 34 cases$' "$T/table" && ok || bad "opt above greedy"
grep -q '^- invalid plans: 0$' "$T/table" && ok || bad "invalid plans"
grep -q "^recorded as bench run 1 in $T/b.db\$" "$T/table" && ok || bad "not recorded"
# each plan ran in a fresh process (a fork of the bench inherits its heap,
# which made plans of 0.4 ms show as 1-3 ms), and the child mode answers
grep -q "fresh process" "$T/err" && bad "plans ran in forks: $(cat "$T/err")" || ok
"$M" bench --child opt 16 0 model < corpus/examples/model.mpg > "$T/child" && [ -s "$T/child" ] && ok ||
    bad "bench --child gave nothing"
expect_rc 2 "$M" bench --child nope 16 0 model

# every plan is a row of the store, greedy and opt side by side
expect_rc 0 "$M" report --db "$T/b.db" --format csv
grep -q '^quality,1,.*,bench,.*,greedy,34,34,0,0,' "$T/out" && ok || bad "greedy rows: $(head -3 "$T/out")"
# opt is at the bound on all but scratch-chain, 64 bytes above it there (1.0001)
grep -q '^quality,1,.*,bench,.*,opt,34,34,0,0,1.0000,1.000[01],' "$T/out" && ok || bad "opt rows: $(head -3 "$T/out")"

# the stages as a user runs them: three sizes, three stages, recorded and
# reported; the bench's runs in the same database keep their quality rows
expect_rc 0 "$M" bench --stages --max-tensors 100000 --db "$T/b.db"
for n in 10000 100000; do
    for st in gen plan verify; do
        grep -q "^| transformer | $n | $st | [0-9.]* | [0-9.]* | [0-9.]* | [0-9]* | " "$T/out" && ok ||
            bad "stage $st at $n: $(cat "$T/out")"
    done
done
grep -q '^| transformer | 100000 | plan | [0-9.]* | [0-9.]* | [0-9.]* | [0-9]* | [0-9.]*x | [0-9.]*x |$' "$T/out" &&
    ok || bad "no growth columns"
# a stage's CPU times are part of its wall time, not more
awk -F' [|] ' '/^[|] transformer/ && $5 + 0 > 0 && $5 + 0 > $4 + 0.01 { bad = 1 } END { exit bad }' "$T/out" && ok ||
    bad "user time above wall time: $(cat "$T/out")"
grep -q '^## Stages, .*the fastest of 3 runs' "$T/out" && ok || bad "stages header: $(head -1 "$T/out")"
expect_rc 0 "$M" bench --stages --max-tensors 10000 --repeat 2 --db none
grep -q '^## Stages, .*the fastest of 2 runs' "$T/out" && ok || bad "stages --repeat 2: $(head -1 "$T/out")"
expect_rc 0 "$M" report --db "$T/b.db" --format csv
[ "$(grep -c '^stages,2,.*,transformer-[0-9]*,\(gen\|plan\|verify\),[0-9.]*,[0-9]*,ok$' "$T/out")" = 6 ] && ok ||
    bad "stage rows: $(grep '^stages' "$T/out")"
# and each stage's CPU time in user space and in the kernel, as stages of their own
[ "$(grep -c '^stages,2,.*,transformer-[0-9]*,\(gen\|plan\|verify\) \(user\|kernel\),[0-9.]*,[0-9]*,ok$' "$T/out")" = 12 ] &&
    ok || bad "CPU rows: $(grep '^stages' "$T/out")"
grep -q '^quality,2,' "$T/out" && bad "the stages run has quality rows" || ok
grep -q '^quality,1,.*,opt,34,' "$T/out" && ok || bad "the bench's quality rows went"

# bad arguments: exit 2, nothing run, no database made
expect_rc 2 "$M" bench --db "$T/c.db" --repeat 0
expect_rc 2 "$M" bench --db "$T/c.db" --max-tensors 10
[ ! -e "$T/c.db" ] && ok || bad "a database was made on bad arguments"

echo "bench: $pass passed, $fail failed"
[ "$fail" = 0 ]
