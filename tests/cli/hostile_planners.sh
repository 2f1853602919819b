#!/bin/sh
# External planners are hostile input (issue 45): each command below
# hung the harness, fooled its verdict or escaped it before 1.8.1.
#   B3  closes its descriptors and sleeps: a timeout, in time
#   B4  writes to descriptor 4 (the harness's pipe): not a false crash;
#       a background helper that holds a descriptor: not a false timeout
#   B9  prints without end: killed at the cap, invalid, memory bounded
#   B11 SIGTERM to the harness: no planner left running, no temporary graph
#   B12 a command of 5,000 bytes: run whole
#   B13 a command with a quote: the reproducer line runs it
#   B14 a valid plan then a NUL and garbage: invalid, as memplan verify says
#   B24 a planner that timed out is not run again for the reproducer
#   B26 --failures that is not a folder: refused before the run
set -u
. tests/cli/common.inc
ABS_M=$(cd "$(dirname "$M")" && pwd)/$(basename "$M")
PY=/usr/bin/python3
H="$M harness --seed 1 --count 2 --jobs 1 --quiet --algos opt --no-shrink"
rows() { $PY -c 'import sqlite3,sys; print(" ".join("%s:%s:%d" % r for r in sqlite3.connect(sys.argv[1]).execute("SELECT algo, verify, count(*) FROM results WHERE algo = ? GROUP BY verify ORDER BY verify", (sys.argv[2],))))' "$1" "$2"; }
planner() { # NAME BODY: an executable script $T/NAME.sh
    printf '#!/bin/sh\n%s\n' "$2" >"$T/$1.sh"
    chmod +x "$T/$1.sh"
}
secs() { date +%s; }

# B3: closes stdout, then sleeps long: a timeout at the limit
planner closer "exec $PY -c 'import os, time; os.closerange(0, 65536); time.sleep(30.31)'"
t0=$(secs)
expect_rc 1 timeout 60 $H --db "$T/b3.db" --failures "$T/f3" --planner closer="exec $T/closer.sh" --planner-timeout-ms 300
[ "$(rows "$T/b3.db" closer)" = "closer:timeout:2" ] && ok || bad "B3 rows: $(rows "$T/b3.db" closer)"
[ $(( $(secs) - t0 )) -lt 20 ] && ok || bad "B3: the run waited for the planner's sleep"
pgrep -f 'sleep.30.31' >/dev/null && bad "B3: the planner is still running" || ok

# B4: a write to descriptor 4 reaches nothing of the harness's; a helper
# left in the background with the descriptors it was given is killed with
# the group, and the plan before it counts
planner fd4 "\"$ABS_M\" plan --algo opt \"\$@\"; echo garbage >&4 2>/dev/null; echo garbage >&5 2>/dev/null; exit 0"
expect_rc 0 $H --db "$T/b4.db" --failures "$T/f4" --planner fd4="$T/fd4.sh"
[ "$(rows "$T/b4.db" fd4)" = "fd4:valid:2" ] && ok || bad "B4 write to fd 4: $(rows "$T/b4.db" fd4) $(cat "$T/err")"
planner helper "\"$ABS_M\" plan --algo opt \"\$@\"; (sleep 30.47 </dev/null >/dev/null 2>&1 3>&- 4>&- &) ; (sleep 30.53 &) ; exit 0"
t0=$(secs)
expect_rc 0 timeout 60 $H --db "$T/b4h.db" --failures "$T/f4h" --planner helper="$T/helper.sh" --planner-timeout-ms 5000
[ "$(rows "$T/b4h.db" helper)" = "helper:valid:2" ] && ok || bad "B4 helper: $(rows "$T/b4h.db" helper)"
[ $(( $(secs) - t0 )) -lt 20 ] && ok || bad "B4: the run waited for the helper"
sleep 0.2
pgrep -f 'sleep 30.5[3]|sleep 30.4[7]' >/dev/null && bad "B4: a helper is still running" || ok

# B9: output without end: invalid past the cap, in bounded memory
planner yes 'exec yes alloc'
expect_rc 1 timeout 60 $H --db "$T/b9.db" --failures "$T/f9" --planner yes="$T/yes.sh" --planner-timeout-ms 20000
[ "$(rows "$T/b9.db" yes)" = "yes:invalid:2" ] && ok || bad "B9 rows: $(rows "$T/b9.db" yes)"
grep -q "wrote more than" "$T/f9"/*-invalid-yes.txt && ok || bad "B9: the reproducer does not say why"

# B14: a valid plan, a NUL byte, garbage: invalid (memplan verify agrees)
planner nul "\"$ABS_M\" plan --algo opt \"\$@\"; printf 'x\\000garbage\\n'"
expect_rc 1 $H --db "$T/b14.db" --failures "$T/f14" --planner nul="$T/nul.sh"
[ "$(rows "$T/b14.db" nul)" = "nul:invalid:2" ] && ok || bad "B14 rows: $(rows "$T/b14.db" nul)"

# B12: a 5,000-byte command is run whole (1.8.0 cut it at 4,090 bytes and
# lost "$@": no plan)
pad=$($PY -c "print('x' * 5000)")
planner fine "exec \"$ABS_M\" plan --algo opt \"\$@\""
expect_rc 0 $H --db "$T/b12.db" --failures "$T/f12" --planner long="PAD=$pad $T/fine.sh"
[ "$(rows "$T/b12.db" long)" = "long:valid:2" ] && ok || bad "B12: the long command was not run whole: $(rows "$T/b12.db" long)"

# B13: a command with a quote in it: the reproducer's line runs it as the
# harness did
planner quoted "case \"\$1\" in it\\'s) shift ;; *) exit 9 ;; esac; \"$ABS_M\" plan --algo opt \"\$@\" | awk '/^alloc/ && !d { sub(/offset=/, \"offset=1\"); d = 1 } { print }'"
expect_rc 1 $H --db "$T/b13.db" --failures "$T/f13" --planner q="$T/quoted.sh it\\'s"
[ "$(rows "$T/b13.db" q)" = "q:invalid:2" ] && ok || bad "B13: $(rows "$T/b13.db" q)"
r=$(ls "$T/f13" | grep -- '-invalid-q\.txt$' | head -1)
how=$(sed -n 's/^reproduce: //p' "$T/f13/$r")
(cd "$(dirname "$T")" && eval "$how") >"$T/repro.mpp" 2>"$T/repro.err"
[ -s "$T/repro.mpp" ] && ok || bad "B13: the reproducer line does not run: $how: $(cat "$T/repro.err")"

# B24: a planner that timed out is run once per case, not again for its
# reproducer
planner counted "echo run >>\"$T/runs\"; sleep 30.61"
expect_rc 1 $H --count 1 --db "$T/b24.db" --failures "$T/f24" --planner counted="$T/counted.sh" --planner-timeout-ms 300
[ "$(wc -l <"$T/runs")" -eq 1 ] && ok || bad "B24: the timed-out planner ran $(wc -l <"$T/runs") times"

# B26: --failures that is no folder
printf 'x\n' >"$T/file"
expect_rc 2 $H --db "$T/b26.db" --failures "$T/file" --planner closer="$T/closer.sh"
grep -q "not a folder" "$T/err" && ok || bad "B26: $(cat "$T/err")"

# B11: SIGTERM to the harness while planners run: none is left, no
# temporary graph either.  Eight rounds, the signal at once when the first
# planner runs: a stop that came between a fork and the bookkeeping of its
# pid left a planner running (2.1.0's CI; 7 rounds in 40 under ASan)
ls /tmp/memplan-external-* 2>/dev/null >"$T/tmp-before"
planner slow 'sleep 30.71'
left=0
for round in 1 2 3 4 5 6 7 8; do
    $H --count 4 --jobs 2 --db "$T/b11-$round.db" --failures "$T/f11" --planner slow="$T/slow.sh" \
        --planner-timeout-ms 60000 >/dev/null 2>&1 &
    hp=$!
    i=0
    while ! pgrep -f 'sleep 30.71' >/dev/null && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
    kill -TERM $hp
    wait $hp
    i=0 # a process killed is gone once the kernel has run its exit: at most a few seconds on a busy machine
    while pgrep -f 'sleep 30.71' >/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    pgrep -f 'sleep 30.71' >/dev/null && { left=$((left + 1)); pkill -f 'sleep 30.71'; }
done
[ $left = 0 ] && ok || bad "B11: a planner outlived the harness in $left rounds of 8"
ls /tmp/memplan-external-* 2>/dev/null >"$T/tmp-after"
cmp -s "$T/tmp-before" "$T/tmp-after" && ok || bad "B11: temporary graphs left: $(cat "$T/tmp-after")"

# ... and a hang-up the caller ignores (nohup) stays ignored: the run
# goes on to its end (the 1.8.1 handlers first caught it and ended the run)
planner nap "sleep 1.07; exec \"$ABS_M\" plan --algo opt \"\$@\""
sh -c "trap '' HUP; exec $H --count 2 --jobs 2 --db '$T/b11h.db' --failures '$T/f11h' --planner nap='$T/nap.sh' \
    --planner-timeout-ms 20000" >/dev/null 2>&1 &
hp=$!
i=0
while ! pgrep -f "sleep 1.07" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -HUP $hp
wait $hp
rc=$?
[ $rc = 0 ] && [ "$(rows "$T/b11h.db" nap)" = "nap:valid:2" ] && ok || bad "an ignored SIGHUP ended the run: exit $rc"

echo "hostile_planners: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
