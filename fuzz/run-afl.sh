#!/bin/sh
# run-afl.sh TARGET SECONDS JOBS BINARY CMPLOG_BINARY DB MEMPLAN
#
# A parallel AFL++ campaign (make fuzz-afl): JOBS instances of afl-fuzz on
# one sync directory, build/fuzz/afl/TARGET/out - one main (-M main), the
# rest secondaries (-S sN), the first secondary with CMPLOG (-c, the
# AFL_LLVM_CMPLOG build; with JOBS=1 the main instance takes it).  The
# binaries are libAFLDriver builds, so they run in persistent mode.  Seeds
# are corpus/TARGET (crash inputs left out); a later campaign on the same
# target resumes the queue (AFL_AUTORESUME).  At the end: afl-whatsup's
# summary, and the campaign - executions summed over the instances, the
# main instance's corpus and edges, crashes summed - recorded with
# `MEMPLAN record-campaign --db DB` (DB "none": not recorded).
set -u
[ $# -ge 7 ] || { echo "usage: $0 TARGET SECONDS JOBS BINARY CMPLOG_BINARY DB MEMPLAN" >&2; exit 2; }
target=$1 seconds=$2 jobs=$3 bin=$4 cmplog=$5 db=$6 memplan=$7
case $seconds$jobs in *[!0-9]*) echo "SECONDS and JOBS must be whole numbers" >&2; exit 2;; esac
[ "$jobs" -ge 1 ] || { echo "JOBS must be at least 1" >&2; exit 2; }
command -v afl-fuzz >/dev/null || { echo "afl-fuzz not found (apt-get install afl++)" >&2; exit 2; }
dir=build/fuzz/afl/$target
mkdir -p "$dir/in" "$dir/out"
for f in corpus/"$target"/*; do
    [ -f "$f" ] || continue
    case ${f##*/} in crash-*|leak-*|timeout-*|oom-*) continue;; esac
    cp "$f" "$dir/in/"
done
[ -n "$(ls "$dir/in")" ] || printf 'memplan' >"$dir/in/empty"

dict=""
[ -f "fuzz/$target.dict" ] && dict="-x fuzz/$target.dict"
# [afl] options of fuzz/TARGET.options: timeout (ms)
tmo=$(awk -F' *= *' '/^\[/ {s = $0; next} s == "[afl]" && $1 == "timeout" {print $2}' \
    "fuzz/$target.options" 2>/dev/null)
[ -n "$tmo" ] || tmo=1000
# executions and crashes summed over the instances; a resumed campaign's
# counters go on from the last one's, so the campaign's own are deltas
field() { sed -n "s/^$1 *: *//p" "$2" | head -1; }
totals() {
    execs=0 crashes=0
    for s in "$dir"/out/*/fuzzer_stats; do
        [ -f "$s" ] || continue
        e=$(field execs_done "$s"); c=$(field saved_crashes "$s")
        [ -n "$c" ] || c=$(field unique_crashes "$s")
        execs=$((execs + ${e:-0})); crashes=$((crashes + ${c:-0}))
    done
}
totals
execs0=$execs crashes0=$crashes
export AFL_NO_UI=1 AFL_AUTORESUME=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
export AFL_TRY_AFFINITY=1 AFL_NO_WARN_INSTABILITY=1 AFL_IGNORE_SEED_PROBLEMS=1
export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:malloc_context_size=4:quarantine_size_mb=32
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0
start=$(date +%s)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "fuzz-afl: $target with AFL++, $jobs instance(s) for ${seconds}s (logs: $dir/*.log)"
pids=""
i=0
while [ "$i" -lt "$jobs" ]; do
    if [ "$i" = 0 ]; then role="-M main" name=main; else role="-S s$i" name=s$i; fi
    extra=""
    # one CMPLOG instance: the first secondary (the main one when alone)
    if { [ "$jobs" = 1 ] && [ "$i" = 0 ]; } || { [ "$jobs" -gt 1 ] && [ "$i" = 1 ]; }; then
        extra="-c $cmplog -l 2AT"
    fi
    # shellcheck disable=SC2086
    afl-fuzz $role -i "$dir/in" -o "$dir/out" -V "$seconds" -t "$tmo" -m none $dict $extra \
        -- "$bin" >"$dir/$name.log" 2>&1 &
    pids="$pids $!"
    i=$((i + 1))
done
fail=0
for p in $pids; do wait "$p" || fail=1; done
# afl-fuzz can leave its CMPLOG forkserver behind, stopped and orphaned
# (parent 1): wake it and end it, so that no campaign leaves a process
for p in $(pgrep -x -f "$cmplog" 2>/dev/null); do
    [ "$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')" = 1 ] || continue
    kill -CONT "$p" 2>/dev/null
    kill -TERM "$p" 2>/dev/null
done
end=$(date +%s)
elapsed=$((end - start))
if ! [ -f "$dir/out/main/fuzzer_stats" ]; then
    echo "fuzz-afl: the main instance did not start:" >&2
    tail -25 "$dir/main.log" >&2
    exit 1
fi
# proof of the modes, then AFL++'s own summary (-d: the instances have ended)
sed 's/\x1b\[[0-9;]*m//g' "$dir"/*.log | grep -h -E 'Persistent mode binary detected|CmpLog level' |
    sort | uniq -c | sed 's/^/fuzz-afl: /'
afl-whatsup -s -d "$dir/out" 2>/dev/null | sed -n '/Summary stats/,$p' | grep -v '^=*$' 
totals
execs=$((execs - execs0)) crashes=$((crashes - crashes0))
corp=$(field corpus_count "$dir/out/main/fuzzer_stats")
edges=$(field edges_found "$dir/out/main/fuzzer_stats")
[ "$elapsed" -gt 0 ] || elapsed=1
rate=$((execs / elapsed))
echo "fuzz-afl: $target afl ${elapsed}s, $jobs instance(s): $execs executions ($rate/s), corpus ${corp:-0}, ${edges:-0} edges, $crashes crash(es)"
if [ "$crashes" != 0 ]; then
    for f in "$dir"/out/*/crashes/id:*; do
        [ -f "$f" ] && echo "fuzz-afl: crash input $f (sh fuzz/minimize.sh $target FILE NAME)"
    done
fi
[ "$fail" = 0 ] || echo "fuzz-afl: an afl-fuzz instance exited with an error (see its log)" >&2
if [ "$db" != none ]; then
    "$memplan" record-campaign --db "$db" --target "$target" --engine afl --seconds "$elapsed" \
        --executions "$execs" --corpus-size "${corp:-0}" --coverage "${edges:-0}" \
        --crashes "$crashes" --started "$started" || exit 1
fi
exit "$fail"
