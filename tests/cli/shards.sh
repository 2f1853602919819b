#!/bin/sh
# Sharded harness runs (harness --shard K/N) and `memplan merge`: N shards
# merged give exactly what one unsharded run records (the gate's dump of
# both is byte-identical, and so is the gate's verdict) for N = 1, 3 and 7;
# shards of different runs, duplicate or missing shards, rows that are not
# a shard's own, and an output that is an input are refused (exit 2) with
# nothing written; merging again writes nothing; a shard is not gated.
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
# a database's content (its file's bytes change when SQLite checkpoints)
sum() { $PY -c "import sqlite3,sys,hashlib; print(hashlib.sha1('\n'.join(sqlite3.connect(sys.argv[1]).iterdump()).encode()).hexdigest())" "$1"; }
H="--seed 5 --count 23 --algos greedy,opt,naive --quiet --failures $T/f"

"$M" harness $H --db "$T/whole.db" >/dev/null 2>&1 || bad "the unsharded run"
"$M" gate --db "$T/whole.db" --baseline "$T/whole.sql" --update >/dev/null || bad "baseline of the whole run"
"$M" gate --db "$T/whole.db" --baseline "$T/whole.sql" >"$T/gate-whole" || bad "gate of the whole run"

for n in 1 3 7; do
    k=0 dbs=""
    while [ $k -lt $n ]; do
        "$M" harness $H --shard $k/$n --db "$T/s$n-$k.db" >"$T/out" 2>&1 || bad "shard $k/$n: $(cat "$T/out")"
        dbs="$dbs $T/s$n-$k.db"
        k=$((k + 1))
    done
    expect_rc 0 "$M" merge "$T/m$n.db" $dbs
    grep -q "^merge: $n shards\{0,1\}, 23 graphs, 69 rows: run 1 in" "$T/out" && ok || bad "merge of $n: $(cat "$T/out")"
    "$M" gate --db "$T/m$n.db" --baseline "$T/m$n.sql" --update >/dev/null || bad "dump of the merge of $n"
    cmp -s "$T/m$n.sql" "$T/whole.sql" && ok || bad "$n shards merged differ from the unsharded run"
    "$M" gate --db "$T/m$n.db" --baseline "$T/whole.sql" >"$T/gate-m" || bad "gate of $n merged shards"
    cmp -s "$T/gate-m" "$T/gate-whole" && ok || bad "gate verdicts differ: $(cat "$T/gate-m")"
done

# a shard's cases are i mod N == K: shard 2/7 of 23 has 2, 9, 16
"$M" report --db "$T/s7-2.db" --format csv >"$T/rep" || bad "report of a shard"
[ "$(grep -c '^worst,[0-9]*,h5-' "$T/rep")" -eq 3 ] && grep -q ',h5-16,' "$T/rep" && ! grep -q ',h5-3,' "$T/rep" && ok ||
    bad "shard 2/7 did not check cases 2, 9, 16"

# merging again: nothing written
before=$(sum "$T/m3.db")
expect_rc 0 "$M" merge "$T/m3.db" "$T/s3-0.db" "$T/s3-1.db" "$T/s3-2.db"
grep -q "already; nothing written" "$T/out" && ok || bad "merge is not idempotent: $(cat "$T/out")"
[ "$(sum "$T/m3.db")" = "$before" ] && ok || bad "a repeated merge changed the database"

# refusals: exit 2, one line, no output file, an existing output unchanged
refused() { # WHAT GREP ARGS...
    what=$1 pat=$2; shift 2
    expect_rc 2 "$M" merge "$T/new.db" "$@"
    grep -q "$pat" "$T/err" && ok || bad "$what: $(cat "$T/err")"
    [ ! -e "$T/new.db" ] && ok || { bad "$what: created the output"; rm -f "$T/new.db"*; }
    expect_rc 2 "$M" merge "$T/m3.db" "$@"
    [ "$(sum "$T/m3.db")" = "$before" ] && ok || bad "$what: changed an existing output"
}
refused "missing shard" "shard 1/3 is missing" "$T/s3-0.db" "$T/s3-2.db"
refused "duplicate shard" "both are shard 0/3" "$T/s3-0.db" "$T/s3-0.db" "$T/s3-1.db"
refused "different shard counts" "differ in shard count" "$T/s3-0.db" "$T/s7-1.db" "$T/s3-2.db"
"$M" harness --seed 6 --count 23 --algos greedy,opt,naive --quiet --failures "$T/f" --shard 1/3 --db "$T/seed6.db" >/dev/null 2>&1
refused "different seeds" "differ in seed" "$T/s3-0.db" "$T/seed6.db" "$T/s3-2.db"
"$M" harness --seed 5 --count 24 --algos greedy,opt,naive --quiet --failures "$T/f" --shard 1/3 --db "$T/c24.db" >/dev/null 2>&1
refused "different counts" "differ in count" "$T/s3-0.db" "$T/c24.db" "$T/s3-2.db"
"$M" harness --seed 5 --count 23 --algos greedy,opt --quiet --failures "$T/f" --shard 1/3 --db "$T/algos.db" >/dev/null 2>&1
refused "different planners" "differ in options" "$T/s3-0.db" "$T/algos.db" "$T/s3-2.db"
cp "$T/s3-1.db" "$T/v.db"
$PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE runs SET version='0.9.0'\"); c.commit()" "$T/v.db"
refused "different versions" "differ in memplan version" "$T/s3-0.db" "$T/v.db" "$T/s3-2.db"
cp "$T/s3-1.db" "$T/r.db"
$PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE results SET graph='h5-3' WHERE graph='h5-4'\"); c.commit()" "$T/r.db"
refused "rows of another shard" "not one of its cases" "$T/s3-0.db" "$T/r.db" "$T/s3-2.db"
cp "$T/s3-1.db" "$T/g.db"
$PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(\"DELETE FROM results WHERE graph='h5-4'\"); c.commit()" "$T/g.db"
refused "a shard with a case missing" "has 7 of its 8 graphs" "$T/s3-0.db" "$T/g.db" "$T/s3-2.db"
refused "not a database" "s3-0.sql\|no metrics database\|not a" "$T/whole.sql"
expect_rc 2 "$M" merge "$T/s3-0.db" "$T/s3-0.db" "$T/s3-1.db" "$T/s3-2.db"
grep -q "is the input" "$T/err" && ok || bad "merge into an input: $(cat "$T/err")"

# a shard is not gated; bad --shard values are usage errors
expect_rc 2 "$M" gate --db "$T/s3-1.db" --baseline "$T/whole.sql"
grep -q "shard 1/3 of a sharded harness run: merge the shards first" "$T/err" && ok || bad "gate of a shard: $(cat "$T/err")"
for s in 3/3 1/0 x/2 1/ /2 -1/3 1/2x 1/2000000; do
    expect_rc 2 "$M" harness $H --shard "$s" --db none
    grep -q "bad --shard" "$T/err" && ok || bad "--shard $s: $(cat "$T/err")"
done

echo "shards: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
