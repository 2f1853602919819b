#!/bin/sh
# Metrics databases, shards and baselines from elsewhere are hostile input
# (issue 45): each forged file below crashed, hung or fooled memplan
# before 1.8.1.  Each is refused with exit 2 and one line naming the file,
# and nothing else changes: no output created, an existing one untouched.
#   B1  runs.shards = 4294967295 (merge indexed past its array)
#   B5  two runs started in the same second on one host (the second merge
#       wrote nothing)
#   B6  gate --update onto the database itself, or onto a file that is no
#       baseline (both were overwritten)
#   B7  runs as a view with a recursive CTE; a trigger; a generated column
#       (merge, report, gate, prune looped forever or ran its code)
#   B20 a FIFO as --db or --baseline (blocked in open)
#   B21 shards with different planner sets; a BLOB total_bytes (copied,
#       and the gate then passed)
#   B22 a damaged shard: exit 2 in merge as everywhere else
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
sum() { $PY -c "import sqlite3,sys,hashlib; print(hashlib.sha1('\n'.join(sqlite3.connect(sys.argv[1]).iterdump()).encode()).hexdigest())" "$1"; }
sql() { $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()" "$@"; }
H="--seed 5 --count 6 --algos greedy,opt --quiet --failures $T/f"
for k in 0 1; do "$M" harness $H --shard $k/2 --db "$T/s$k.db" >/dev/null 2>&1 || bad "shard $k"; done
"$M" merge "$T/m.db" "$T/s0.db" "$T/s1.db" >/dev/null || bad "the clean merge"
before=$(sum "$T/m.db")

# timeout: a hang is a failure, not a stalled test run
TO="timeout 60"
forged() { # WHAT GREP SQL: shard 1 forged with SQL, merged with shard 0
    what=$1 pat=$2
    cp "$T/s1.db" "$T/x.db"
    sql "$T/x.db" "$3"
    expect_rc 2 $TO "$M" merge "$T/new.db" "$T/s0.db" "$T/x.db"
    grep -q "$pat" "$T/err" && [ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "$what: $(cat "$T/err")"
    [ ! -e "$T/new.db" ] && ok || { bad "$what: created the output"; rm -f "$T/new.db"*; }
    expect_rc 2 $TO "$M" merge "$T/m.db" "$T/s0.db" "$T/x.db"
    [ "$(sum "$T/m.db")" = "$before" ] && ok || bad "$what: changed an existing output"
}
forged "B1 shards 2^32-1" "bad shard" "UPDATE runs SET shards=4294967295, shard=1000000"
forged "B1 shards 10^6, shard in range" "not one of its cases" \
    "UPDATE runs SET shards=1000000, shard=1"
forged "negative shard" "bad shard" "UPDATE runs SET shard=-1"
# a shard past its run's count indexed past merge's array when it had no rows
forged "shard not below shards" "bad shard" "UPDATE runs SET shard=5, count=4; DELETE FROM results"
forged "text count" "bad count" "UPDATE runs SET count='six'"
forged "B21 BLOB total_bytes" "bad total_bytes" "UPDATE results SET total_bytes=x'00ff' WHERE rowid=1"
forged "B21 negative bytes" "bad total_bytes" "UPDATE results SET total_bytes=-5 WHERE rowid=1"
forged "B21 unknown verdict" "bad verify" "UPDATE results SET verify='great' WHERE rowid=1"
forged "B21 another planner set" "differ in planners" "UPDATE results SET algo='naive' WHERE algo='greedy'"
forged "B21 a row twice" "not one for each" "DROP INDEX IF EXISTS results_worst; CREATE TABLE r2 AS SELECT * FROM results;
  DROP TABLE results; CREATE TABLE results AS SELECT * FROM r2; DROP TABLE r2;
  UPDATE results SET algo='greedy' WHERE rowid=(SELECT min(rowid) FROM results WHERE algo='opt')"
forged "B7 recursive view" "view 'runs'\|not a memplan metrics database" "ALTER TABLE runs RENAME TO r0;
  CREATE VIEW runs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT r0.* FROM r0, c"
forged "B7 trigger" "trigger" "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM results; END"
forged "B7 generated column" "generated or hidden\|column" \
    "ALTER TABLE results ADD COLUMN g INTEGER GENERATED ALWAYS AS (1) VIRTUAL"
forged "B7 extra table" "not a memplan metrics database" "CREATE TABLE evil(x)"
# B7: report, gate and prune on the same view open nothing and loop nowhere
cp "$T/m.db" "$T/v.db"
sql "$T/v.db" "ALTER TABLE runs RENAME TO r0; CREATE VIEW runs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT r0.* FROM r0, c"
expect_rc 2 $TO "$M" report --db "$T/v.db"
expect_rc 2 $TO "$M" gate --db "$T/v.db" --baseline "$T/none.sql"
[ ! -e "$T/none.sql" ] && ok || bad "gate of a hostile database wrote a baseline"
expect_rc 2 $TO "$M" prune --db "$T/v.db" --keep 1

# B22: a damaged file is exit 2 in merge as in report
cp "$T/s1.db" "$T/d.db"
$PY -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(4096); f.write(b'\xff'*8192); f.close()" "$T/d.db"
expect_rc 2 $TO "$M" merge "$T/new.db" "$T/s0.db" "$T/d.db"
[ ! -e "$T/new.db" ] && ok || { bad "damaged shard: created the output"; rm -f "$T/new.db"*; }
expect_rc 2 $TO "$M" report --db "$T/d.db"

# B5: another run with everything the same but its start, in the same
# second on the same host: merged, not taken for the first
cp "$T/s0.db" "$T/t0.db"; cp "$T/s1.db" "$T/t1.db"
sql "$T/t0.db" "UPDATE runs SET finished='2099-01-01T00:00:00Z'"
expect_rc 0 "$M" merge "$T/m.db" "$T/t0.db" "$T/t1.db"
grep -q "run 2 in" "$T/out" && ok || bad "B5: a second run was taken for the first: $(cat "$T/out")"
expect_rc 0 "$M" merge "$T/m.db" "$T/t0.db" "$T/t1.db"
grep -q "already; nothing written" "$T/out" && ok || bad "B5: merge no longer idempotent: $(cat "$T/out")"

# B6: the baseline cannot be the database, nor a file that is no baseline
cp "$T/m.db" "$T/g.db"; gsum=$(sum "$T/g.db")
expect_rc 2 "$M" gate --db "$T/g.db" --baseline "$T/g.db" --update
[ "$(sum "$T/g.db")" = "$gsum" ] && ok || bad "B6: gate --update overwrote its database"
ln -s g.db "$T/link.sql"
expect_rc 2 "$M" gate --db "$T/g.db" --baseline "$T/link.sql" --update
[ "$(sum "$T/g.db")" = "$gsum" ] && ok || bad "B6: gate --update overwrote its database through a link"
printf 'my notes\n' >"$T/notes.txt"
expect_rc 2 "$M" gate --db "$T/g.db" --baseline "$T/notes.txt" --update
grep -q "notes.txt" "$T/err" && [ "$(cat "$T/notes.txt")" = "my notes" ] && ok || bad "B6: a file that is no baseline was overwritten"
expect_rc 0 "$M" gate --db "$T/g.db" --baseline "$T/b.sql" --update
expect_rc 0 "$M" gate --db "$T/g.db" --baseline "$T/b.sql" --update

# B20: a FIFO is refused, not opened (open would block for ever)
mkfifo "$T/fifo"
expect_rc 2 $TO "$M" report --db "$T/fifo"
grep -q "not a regular file" "$T/err" && ok || bad "B20 --db FIFO: $(cat "$T/err")"
expect_rc 2 $TO "$M" gate --db "$T/g.db" --baseline "$T/fifo"
grep -q "not a regular file" "$T/err" && ok || bad "B20 --baseline FIFO: $(cat "$T/err")"
expect_rc 2 $TO "$M" gate --db "$T/g.db" --baseline "$T/fifo" --update
expect_rc 2 $TO "$M" merge "$T/fifo" "$T/s0.db" "$T/s1.db"
expect_rc 2 $TO "$M" harness $H --db "$T/fifo"

echo "hostile_store: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
