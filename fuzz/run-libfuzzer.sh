#!/bin/sh
# run-libfuzzer.sh TARGET SECONDS BINARY DB MEMPLAN [--ci]
#
# One libFuzzer campaign (make fuzz).  The working corpus,
# build/fuzz/work/TARGET/corpus, starts as a copy of corpus/TARGET (crash
# inputs left out) and grows from campaign to campaign; `make fuzz-merge`
# minimizes it back into corpus/TARGET.  Crashing inputs land in
# build/fuzz/work/TARGET/crashes (see fuzz/minimize.sh).  Options come from
# fuzz/TARGET.options ([libfuzzer] section, as on OSS-Fuzz) and the
# dictionary fuzz/TARGET.dict.  At the end the campaign is recorded with
# `MEMPLAN record-campaign --db DB` (DB "none": not recorded).
#
# FORK=N in the environment runs libFuzzer's fork mode (-fork=N
# -ignore_crashes=1): N worker processes, and the campaign goes on after a
# crash, so a known open bug does not end it.
#
# ENGINE in the environment names the engine on record (default
# "libfuzzer"; make fuzz SAN=none: "libfuzzer-nosan").
#
# --ci: a fresh corpus from corpus/TARGET each time, nothing kept, exit 1
# when the campaign found a crash.
set -u
[ $# -ge 5 ] || { echo "usage: $0 TARGET SECONDS BINARY DB MEMPLAN [--ci]" >&2; exit 2; }
target=$1 seconds=$2 bin=$3 db=$4 memplan=$5 ci=${6:-}
case $seconds in ''|*[!0-9]*) echo "SECONDS must be a whole number" >&2; exit 2;; esac
work=build/fuzz/work/$target
[ -n "$ci" ] && work=build/fuzz/ci/$target && rm -rf "$work"
mkdir -p "$work/corpus" "$work/crashes"
# seed the working corpus (crash inputs would stop the campaign at once)
for f in corpus/"$target"/*; do
    [ -f "$f" ] || continue
    case ${f##*/} in crash-*|leak-*|timeout-*|oom-*) continue;; esac
    [ -e "$work/corpus/${f##*/}" ] || cp "$f" "$work/corpus/"
done

# [libfuzzer] options of fuzz/TARGET.options as -key=value flags
opts=""
if [ -f "fuzz/$target.options" ]; then
    opts=$(awk -F' *= *' '/^\[/ {s = $0; next} s == "[libfuzzer]" && NF == 2 && $1 !~ /^#/ {printf " -%s=%s", $1, $2}' \
        "fuzz/$target.options")
fi
dict=""
[ -f "fuzz/$target.dict" ] && dict="-dict=fuzz/$target.dict"
fork=${FORK:-0}
case $fork in ''|*[!0-9]*) echo "FORK must be a whole number" >&2; exit 2;; esac
[ "$fork" -gt 0 ] && opts="$opts -fork=$fork -ignore_crashes=1"
# findings: crash-, timeout-, oom-, leak- files; slow-unit- files
# (-report_slow_units) are reported, not counted: a loaded machine makes them
findings() { ls -t "$work/crashes" | grep -v '^slow-unit-'; }
before=$(findings | wc -l)
slow0=$(ls "$work/crashes" | grep -c '^slow-unit-')
log=$work/libfuzzer.log
start=$(date +%s)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "fuzz: $target with libFuzzer for ${seconds}s (log: $log)"
# ASan's quarantine of freed blocks (256 MB by default) is where a long
# campaign's memory went (the planners targets free large per-input arrays:
# 670 MB peak in 25 s with it, 146 MB with 16 MB); 32 MB keeps
# use-after-free detection for what one input frees.  Recording 4 frames
# of each allocation's stack, not 30, saves a fifth of a planner target's
# time (ASan's stack depot was 16% of it); a crash is replayed with full
# stacks when it is grouped (crash_groups.sh)
# shellcheck disable=SC2086
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:quarantine_size_mb=32:malloc_context_size=4} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bin" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/crashes/" \
    $opts $dict "$work/corpus" >"$log" 2>&1
rc=$?
end=$(date +%s)
elapsed=$((end - start))
[ "$elapsed" -gt 0 ] || elapsed=1

# figures: the final stats block, else the last status line ("#N DONE
# cov: C ft: F corp: K/..." in-process, "#N: cov: C ... corp: K" forked)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
status=$(grep -E '^#[0-9]+:?[[:space:]].*cov: ' "$log" | tail -1)
[ -n "$execs" ] || execs=$(echo "$status" | sed -n 's/^#\([0-9]*\).*/\1/p')
[ -n "$execs" ] || execs=0
[ -n "$rate" ] || rate=$((execs / elapsed))
cov=$(echo "$status" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
corp=$(echo "$status" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
[ -n "$corp" ] || corp=$(ls "$work/corpus" | wc -l)
after=$(findings | wc -l)
crashes=$((after - before))
slow=$(($(ls "$work/crashes" | grep -c '^slow-unit-') - slow0))
[ "$slow" = 0 ] || echo "fuzz: $slow slow input(s) in $work/crashes/slow-unit-* (over report_slow_units; not failures)"
[ -n "$cov" ] || cov=0
if [ "$rc" != 0 ] && [ "$crashes" = 0 ]; then
    echo "fuzz: libFuzzer failed (exit $rc) without a crash file:" >&2
    tail -20 "$log" >&2
    exit 1
fi
echo "fuzz: $target ${ENGINE:-libfuzzer} ${elapsed}s: $execs executions ($rate/s), corpus $corp, cov $cov edges, $crashes crash(es)"
if [ "$crashes" != 0 ]; then
    grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: )' "$log" | head -5
    for f in $(findings | head -"$((crashes < 5 ? crashes : 5))"); do
        echo "fuzz: crash input $work/crashes/$f"
    done
    [ "$crashes" -le 5 ] || echo "fuzz: ... and $((crashes - 5)) more in $work/crashes"
    if [ -n "$ci" ]; then
        # CI's machine is gone afterwards: the log must carry the input
        # (decode with `base64 -d > FILE`) and the campaign's seed
        grep -m1 '^INFO: Seed:' "$log"
        f=$(findings | head -1)
        echo "fuzz: crash input as base64 ($(wc -c <"$work/crashes/$f") bytes):"
        base64 "$work/crashes/$f" | head -c 16384
        echo
    fi
    echo "fuzz: minimize one and file it into the corpus: sh fuzz/minimize.sh $target FILE NAME"
fi
if [ "$db" != none ]; then
    "$memplan" record-campaign --db "$db" --target "$target" --engine "${ENGINE:-libfuzzer}" --seconds "$elapsed" \
        --executions "$execs" --corpus-size "$corp" --coverage "$cov" --crashes "$crashes" \
        --started "$started" || exit 1
fi
[ -n "$ci" ] && [ "$crashes" != 0 ] && exit 1
exit 0
