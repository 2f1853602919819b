#!/bin/sh
# The history across commits: report --by-commit (per commit in the order
# first measured, the newest command's harness runs only, the change
# against the commit before; text, JSON and HTML), the worst graphs found
# from the index equal to ranking every row, the changes newest first, and
# prune --keep (old runs lose their rows, never their summaries: quality
# and --by-commit unchanged, the gate still reads the newest run).
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
sql() { $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); r=c.execute(sys.argv[2]).fetchall(); c.commit(); print('\n'.join('|'.join(str(v) for v in x) for x in r))" "$@"; }
H="--count 8 --algos greedy,opt --quiet --failures $T/f --db $T/h.db"

# runs 1, 2 at commit aaa, run 3 another command (seed 4), run 4 at bbb, 5 at ccc
for s in 3 3 4 3 3; do "$M" harness --seed $s $H >/dev/null 2>&1 || bad "harness --seed $s"; done
sql "$T/h.db" "UPDATE runs SET git_rev = CASE id WHEN 1 THEN 'aaa' WHEN 2 THEN 'aaa' WHEN 3 THEN 'zzz' WHEN 4 THEN 'bbb' ELSE 'ccc' END" >/dev/null
# commit ccc: greedy's mean ratio 0.01 worse
sql "$T/h.db" "UPDATE summaries SET mean_ratio = mean_ratio + 0.01 WHERE run_id = 5 AND algo = 'greedy'" >/dev/null

expect_rc 0 "$M" report --db "$T/h.db" --by-commit --format csv
cp "$T/out" "$T/bc.csv"
[ "$(grep -c '^by_commit,' "$T/bc.csv")" -eq 6 ] && ok || bad "--by-commit: 3 commits x 2 planners: $(cat "$T/bc.csv")"
awk -F, '$1 == "by_commit" {print $2}' "$T/bc.csv" | uniq | tr '\n' ' ' | grep -qx 'aaa bbb ccc ' && ok ||
    bad "--by-commit order or the other command's run: $(cut -d, -f2 "$T/bc.csv" | tr '\n' ' ')"
grep -q '^by_commit,aaa,1,2,2,greedy,16,' "$T/bc.csv" && ok || bad "commit aaa counts runs 1 and 2: $(grep aaa "$T/bc.csv")"
grep '^by_commit,ccc,5,5,1,greedy,' "$T/bc.csv" | cut -d, -f12 | grep -qx '+0.0100' && ok ||
    bad "ccc's greedy ratio change: $(grep ccc "$T/bc.csv")"
grep '^by_commit,bbb,4,4,1,opt,' "$T/bc.csv" | cut -d, -f12 | grep -qx '+0.0000' && ok || bad "bbb's opt: no change"
grep '^by_commit,aaa,' "$T/bc.csv" | cut -d, -f12 | grep -qx '' && ok || bad "the first commit has no change"
expect_rc 0 "$M" report --db "$T/h.db" --by-commit --algo opt --format json
$PY -c "import json,sys; d=json.load(open(sys.argv[1])); r=d['by_commit']; assert [x['commit'] for x in r]==['aaa','bbb','ccc'] and all(x['algo']=='opt' for x in r) and isinstance(r[0]['mean_ratio'], float)" "$T/out" && ok ||
    bad "--by-commit --algo opt --format json: $(cat "$T/out")"
expect_rc 0 "$M" report --db "$T/h.db" --by-commit --html -o "$T/bc.html"
grep -q 'per commit and algorithm' "$T/bc.html" && grep -q '>ccc<' "$T/bc.html" && grep -q '<h2>Commits</h2>' "$T/bc.html" &&
    grep -q '3 commits (the harness runs of one command)' "$T/bc.html" && ok || bad "--by-commit --html draws per commit"
expect_rc 0 "$M" report --db "$T/h.db" --html -o "$T/runs.html"
grep -q '<h2>Runs</h2>' "$T/runs.html" && ! grep -q 'per commit' "$T/runs.html" && ok || bad "plain --html is per run"

# the worst graphs: the index scan equals ranking every row (each graph once)
"$M" report --db "$T/h.db" --format csv | grep '^worst,' | cut -d, -f2-5 >"$T/worst.got"
sql "$T/h.db" "SELECT run_id, graph, algo, printf('%.4f', ratio) FROM (SELECT x.run_id, x.graph, x.algo, x.ratio,
  row_number() OVER (PARTITION BY x.graph ORDER BY x.ratio DESC, x.run_id DESC, x.algo) AS k FROM results x
  WHERE x.verify = 'valid') WHERE k = 1 ORDER BY ratio DESC, run_id DESC, graph LIMIT 10" | tr '|' , >"$T/worst.want"
[ -s "$T/worst.got" ] && cmp -s "$T/worst.got" "$T/worst.want" && ok ||
    bad "worst graphs differ from ranking every row: $(diff "$T/worst.got" "$T/worst.want" | head -5)"
for a in greedy opt; do
    "$M" report --db "$T/h.db" --algo $a --format csv | grep '^worst,' | cut -d, -f2-5 >"$T/worst.got"
    sql "$T/h.db" "SELECT run_id, graph, algo, printf('%.4f', ratio) FROM (SELECT x.run_id, x.graph, x.algo, x.ratio,
      row_number() OVER (PARTITION BY x.graph ORDER BY x.ratio DESC, x.run_id DESC) AS k FROM results x
      WHERE x.verify = 'valid' AND x.algo = '$a') WHERE k = 1 ORDER BY ratio DESC, run_id DESC, graph LIMIT 10" |
        tr '|' , >"$T/worst.want"
    cmp -s "$T/worst.got" "$T/worst.want" && ok || bad "worst graphs of $a: $(diff "$T/worst.got" "$T/worst.want" | head -5)"
done

# the changes: run 5 against run 4 (the same command), newest first
g=$(sql "$T/h.db" "SELECT graph FROM results WHERE run_id = 5 AND algo = 'opt' ORDER BY graph LIMIT 1")
sql "$T/h.db" "UPDATE results SET total_bytes = total_bytes + 64 WHERE run_id = 5 AND algo = 'opt' AND graph = '$g'" >/dev/null
"$M" report --db "$T/h.db" --format csv | grep '^changes,' >"$T/changes"
[ "$(wc -l <"$T/changes")" -eq 1 ] && grep -q "^changes,4,5,harness,$g,opt,[0-9]*,[0-9]*,+64,valid,valid$" "$T/changes" && ok ||
    bad "changes: $(cat "$T/changes")"

# prune: quality and --by-commit unchanged, rows only for the newest run
"$M" report --db "$T/h.db" --format csv | grep '^quality,' >"$T/q.before"
expect_rc 0 "$M" prune --db "$T/h.db" --keep 1
grep -q "the per-case rows of 4 runs dropped (64 rows)" "$T/out" && ok || bad "prune: $(cat "$T/out")"
[ "$(sql "$T/h.db" "SELECT group_concat(DISTINCT run_id) FROM results")" = 5 ] && ok || bad "prune kept other runs' rows"
"$M" report --db "$T/h.db" --format csv | grep '^quality,' >"$T/q.after"
cmp -s "$T/q.before" "$T/q.after" && ok || bad "prune changed the quality table"
"$M" report --db "$T/h.db" --by-commit --format csv >"$T/bc2.csv"
cmp -s "$T/bc.csv" "$T/bc2.csv" && ok || bad "prune changed --by-commit"
expect_rc 0 "$M" gate --db "$T/h.db" --baseline "$T/b.sql" --update
expect_rc 0 "$M" prune --db "$T/h.db" --keep 1 --vacuum
grep -q "of 0 runs dropped (0 rows)" "$T/out" && ok || bad "prune again: $(cat "$T/out")"
expect_rc 2 "$M" prune --db "$T/none.db" --keep 3
[ ! -e "$T/none.db" ] && ok || bad "prune created a database"
expect_rc 2 "$M" prune --db "$T/h.db" --keep 0
expect_rc 2 "$M" prune --db "$T/h.db"

# the bench of a long history, small: every query answers, prune drops the old runs' rows
expect_rc 0 "$M" bench --history --runs 6 --cases 5 --keep 2
grep -q "^| prune --keep 2 .* | *100 |$" "$T/out" && [ "$(grep -c '^| after prune: ' "$T/out")" -eq 6 ] && ok ||
    bad "bench --history: $(cat "$T/out" "$T/err")"

echo "history: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
