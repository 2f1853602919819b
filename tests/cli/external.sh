#!/bin/sh
# Planners outside memplan in the harness (--planner NAME=COMMAND): a
# correct one is recorded as valid, reported and gated; a wrong one (one
# offset shifted) is caught, shrunk and written as a reproducer that
# reproduces; one that hangs is killed at the limit and recorded as a
# timeout, leaving no process behind.
set -u
. tests/cli/common.inc
ABS_M=$(cd "$(dirname "$M")" && pwd)/$(basename "$M")
cat >"$T/ok.sh" <<S
#!/bin/sh
exec "$ABS_M" plan --algo opt "\$@"
S
cat >"$T/bad.sh" <<S
#!/bin/sh
"$ABS_M" plan --algo opt "\$@" | awk '!done && /^alloc / { sub(/offset=[0-9]+/, "offset=" (substr(\$0, index(\$0, "offset=") + 7) + 16)); done = 1 } { print }'
S
cat >"$T/hang.sh" <<'S'
#!/bin/sh
sleep 97.25
S
chmod +x "$T/ok.sh" "$T/bad.sh" "$T/hang.sh"
H="$M harness --seed 1 --count 4 --jobs 2 --quiet"
PY=/usr/bin/python3
rows() { $PY -c 'import sqlite3,sys; print(" ".join("%s:%s:%d" % r for r in sqlite3.connect(sys.argv[1]).execute("SELECT algo, verify, count(*) FROM results WHERE algo = ? GROUP BY verify ORDER BY verify", (sys.argv[2],))))' "$1" "$2"; }

# a correct external planner: valid everywhere, like opt (greedy refuses the
# harness cases that pin tensors)
expect_rc 0 $H --db "$T/ok.db" --failures "$T/f1" --planner ok="$T/ok.sh"
[ "$(rows "$T/ok.db" ok)" = "ok:valid:4" ] && ok || bad "ok rows: $(rows "$T/ok.db" ok)"
expect_rc 0 "$M" report --db "$T/ok.db" --algo ok --format csv
grep -q '^quality,1,.*,ok,4,4,0,0,' "$T/out" && ok || bad "report --algo ok: $(head -3 "$T/out")"
expect_rc 0 "$M" gate --db "$T/ok.db" --baseline "$T/base.sql" --update
grep -q "'--seed 1 --count 4 --algos greedy,naive,opt,tflm,bestfit --planner ok'" "$T/base.sql" && ok ||
    bad "the baseline does not name the external planner"
expect_rc 0 "$M" gate --db "$T/ok.db" --baseline "$T/base.sql"
# without it, the run is another run
expect_rc 0 $H --db "$T/plain.db" --failures "$T/f0"
expect_rc 2 "$M" gate --db "$T/plain.db" --baseline "$T/base.sql"

# a wrong one: caught, shrunk, reproducible
expect_rc 1 $H --db "$T/bad.db" --failures "$T/f2" --planner bad="$T/bad.sh"
n=$(ls "$T/f2" | grep -c -- '-invalid-bad\.mpg$')
[ "$n" -ge 1 ] && ok || bad "no reproducer for the wrong planner: $(ls "$T/f2")"
r=$(ls "$T/f2" | grep -- '-invalid-bad\.mpg$' | head -1)
id=${r%%-invalid-bad.mpg}
full=$("$M" gen --case "$id" 2>/dev/null | grep -c '^tensor ')
small=$(grep -c '^tensor ' "$T/f2/$r")
[ "$small" -lt "$full" ] && ok || bad "the reproducer is not shrunk ($small of $full tensors)"
how=$(sed -n 's/^reproduce: //p' "$T/f2/${r%.mpg}.txt")
(cd "$(dirname "$T")" && eval "$how") >"$T/repro.mpp" 2>/dev/null
expect_rc 1 "$M" verify "$T/f2/$r" "$T/repro.mpp"
[ -s "$T/f2/${r%.mpg}.mpp" ] && ok || bad "the failing plan is not saved"

# one that hangs: killed at the limit, a timeout, no process left behind
expect_rc 1 $H --db "$T/hang.db" --failures "$T/f3" --planner hang="$T/hang.sh" --planner-timeout-ms 200
[ "$(rows "$T/hang.db" hang)" = "hang:timeout:4" ] && ok || bad "hang rows: $(rows "$T/hang.db" hang)"
ls "$T/f3" | grep -q -- '-timeout-hang\.txt$' && ok || bad "no timeout reproducer"
sleep 0.2
pgrep -f 'sleep 97.25' >/dev/null && bad "the hanging planner is still running" || ok

# bad usage
expect_rc 2 $H --db none --planner greedy=/bin/true
expect_rc 2 $H --db none --planner "x"
expect_rc 2 $H --db none --planner ok=/bin/true --planner ok=/bin/false

echo "external: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
