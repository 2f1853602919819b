#!/bin/sh
# The metrics store and the gate, as a user relies on them: a baseline is
# data (an ATTACH or an UPDATE in it is refused and changes nothing), a
# baseline of another run is one line and exit 2, --update says what it
# changed, runs.started is when the run began, --since must be a date,
# text output never carries a control character from the database, and
# the worst graphs are listed once each.
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
sum() { cksum <"$1"; }

"$M" harness --seed 1 --count 12 --db "$T/h.db" --quiet --failures "$T/f" >/dev/null 2>&1 || bad "harness"
expect_rc 0 "$M" gate --db "$T/h.db" --baseline "$T/base.sql" --update
grep -q "a new baseline" "$T/out" && ok || bad "gate --update on no baseline: $(cat "$T/out")"
grep -q "^CREATE TABLE baseline_run" "$T/base.sql" && ok || bad "the baseline records its run"
expect_rc 0 "$M" gate --db "$T/h.db" --baseline "$T/base.sql"

# --- a baseline is data: ATTACH a new file elsewhere, or the metrics
# database to rewrite it: refused (exit 2), nothing created or changed.
before=$(sum "$T/h.db")
{ echo "ATTACH DATABASE '$T/elsewhere.db' AS x;"; echo "CREATE TABLE x.t(a);"; cat "$T/base.sql"; } >"$T/attack1.sql"
expect_rc 2 "$M" gate --db "$T/h.db" --baseline "$T/attack1.sql"
[ ! -e "$T/elsewhere.db" ] && ok || bad "a baseline's ATTACH created a file"
{ echo "ATTACH DATABASE '$T/h.db' AS m;"; echo "UPDATE m.results SET total_bytes = 1;"; cat "$T/base.sql"; } >"$T/attack2.sql"
expect_rc 2 "$M" gate --db "$T/h.db" --baseline "$T/attack2.sql"
grep -q "passed" "$T/out" && bad "the UPDATE attack passed the gate" || ok
[ "$(sum "$T/h.db")" = "$before" ] && ok || bad "a baseline changed the metrics database"
for stmt in "PRAGMA writable_schema = 1;" "DELETE FROM baseline;" "UPDATE baseline SET total_bytes = 0;" \
    "CREATE TRIGGER t AFTER INSERT ON baseline BEGIN SELECT 1; END;" "SELECT load_extension('x');" \
    "CREATE VIEW v AS SELECT 1;" "DROP TABLE baseline;"; do
    { cat "$T/base.sql"; echo "$stmt"; } >"$T/attack3.sql"
    expect_rc 2 "$M" gate --db "$T/h.db" --baseline "$T/attack3.sql"
done

# --- another seed, count or planner list: one line, exit 2
"$M" harness --seed 2 --count 12 --db "$T/h2.db" --quiet --failures "$T/f" >/dev/null 2>&1
expect_rc 2 "$M" gate --db "$T/h2.db" --baseline "$T/base.sql"
[ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/out" ] && grep -q "differ in seed" "$T/err" && ok ||
    bad "a baseline of another seed: $(cat "$T/out" "$T/err" | head -3)"
"$M" harness --seed 1 --count 12 --algos greedy,opt --db "$T/h3.db" --quiet --failures "$T/f" >/dev/null 2>&1
expect_rc 2 "$M" gate --db "$T/h3.db" --baseline "$T/base.sql"
grep -q "differ in options" "$T/err" && ok || bad "another planner list: $(cat "$T/err")"
sed 's/^\(INSERT INTO baseline_run VALUES(.*\),'"'"'[^'"'"']*'"'"');$/\1,'"'"'0.9.0'"'"');/' "$T/base.sql" >"$T/oldver.sql"
expect_rc 2 "$M" gate --db "$T/h.db" --baseline "$T/oldver.sql"
grep -q "differ in memplan version" "$T/err" && ok || bad "another version: $(cat "$T/err")"

# --- --update reports what changed: one row made worse, one removed
cp "$T/base.sql" "$T/edit.sql"
$PY - "$T/edit.sql" <<'EOF'
import re, sys
p = sys.argv[1]
lines = open(p).read().split("\n")
rows = [i for i, l in enumerate(lines) if l.startswith("INSERT INTO baseline VALUES(") and "'valid');" in l]
i = rows[0]
m = re.match(r"(.*,)(\d+),(\d+),([\d.]+),'valid'\);$", lines[i])
lines[i] = "%s%d,%s,%s,'valid');" % (m.group(1), int(m.group(2)) + 64, m.group(3), m.group(4))
del lines[rows[1]]
open(p, "w").write("\n".join(lines))
EOF
expect_rc 0 "$M" gate --db "$T/h.db" --baseline "$T/edit.sql" --update
grep -q "1 improved, 0 regressed, 0 changed status, 1 added, 0 removed" "$T/out" && ok ||
    bad "gate --update summary: $(tail -1 "$T/out")"
grep -q "^  improved " "$T/out" && ok || bad "gate --update lists the improved row"
cmp -s "$T/edit.sql" "$T/base.sql" && ok || bad "gate --update did not rewrite the same baseline"

# --- runs.started is when the run began: a run long enough to cross
# seconds has started < finished, and started is not before the command.
t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
n=200
while :; do
    s=$(date +%s)
    "$M" harness --seed 4 --count $n --db "$T/t.db" --quiet --failures "$T/f" >/dev/null 2>&1
    [ $(($(date +%s) - s)) -ge 2 ] && break
    n=$((n * 2))
    [ $n -gt 20000 ] && break
done
$PY - "$T/t.db" "$t0" >"$T/times" <<'EOF'
import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT started, finished FROM runs ORDER BY id DESC LIMIT 1").fetchone()
print("ok" if sys.argv[2] <= r[0] < r[1] else "started %s finished %s (command at %s)" % (r[0], r[1], sys.argv[2]))
EOF
[ "$(cat "$T/times")" = ok ] && ok || bad "runs.started: $(cat "$T/times")"

# --- --since: a date or an error
expect_rc 0 "$M" report --db "$T/h.db" --since 2020-01-01
expect_rc 0 "$M" report --db "$T/h.db" --since "2020-01-01T10:00"
for s in yesterday 2026-13-01 2026-1-1 "" 2026-01-01T25:00; do
    expect_rc 2 "$M" report --db "$T/h.db" --since "$s"
done
expect_rc 0 "$M" report --db "$T/h.db" --since 2999-01-01 --format csv
grep -q "^quality," "$T/out" && bad "--since the future still shows runs" || ok

# --- the text report escapes control characters from the database, and
# lists each graph once among the worst
"$M" harness --seed 1 --count 12 --db "$T/h.db" --quiet --failures "$T/f" >/dev/null 2>&1
$PY - "$T/h.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE runs SET git_rev = 'ab' || char(27) || '[2J' || char(7) WHERE id = 1")
db.commit()
EOF
expect_rc 0 "$M" report --db "$T/h.db"
if LC_ALL=C grep -q "$(printf '\033')" "$T/out"; then bad "an escape character reached the text report"; else ok; fi
grep -q 'ab\\x1b\[2J\\x07' "$T/out" && ok || bad "the escaped revision is not shown"
expect_rc 0 "$M" report --db "$T/h.db" --format csv
graphs=$(grep '^worst,' "$T/out" | cut -d, -f3)
[ -n "$graphs" ] && [ "$(echo "$graphs" | sort | uniq -d)" = "" ] && ok || bad "worst lists a graph twice: $graphs"

# --- a harness case back as a graph with its options: planning it gives
# the bytes the harness recorded, for every case of the run
$PY - "$T/h.db" >"$T/cases" <<'EOF'
import sqlite3, sys
q = "SELECT graph, total_bytes FROM results WHERE run_id = 1 AND algo = 'opt' AND verify = 'valid'"
for g, t in sqlite3.connect(sys.argv[1]).execute(q):
    print(g, t)
EOF
[ -s "$T/cases" ] && ok || bad "no harness cases recorded"
while read -r id total; do
    "$M" gen --case "$id" -o "$T/case.mpg" 2>"$T/err" || { bad "gen --case $id"; continue; }
    grep -q "plan it with .memplan plan .* $T/case.mpg" "$T/err" && ok || bad "gen --case says how: $(cat "$T/err")"
    args=$(sed -n '2s/^# memplan harness case [^:]*: memplan plan \(.*\) FILE$/\1/p' "$T/case.mpg")
    # shellcheck disable=SC2086
    got=$("$M" plan --algo opt $args "$T/case.mpg" |
        awk '/^graph/{g++} g==1 && /^buffers/{s=0; for(i=2;i<=NF;i++) s+=$i; print s; exit}')
    [ "$got" = "$total" ] && ok || bad "case $id: plan gives $got bytes, the harness recorded $total"
done <"$T/cases"
expect_rc 2 "$M" gen --case h1-x
expect_rc 2 "$M" gen --case h1-3 --seed 4

echo "store: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
