#!/bin/sh
# campaign.sh HOURS (make fuzz-campaign HOURS=N)
#
# A long campaign on two cores: every target in turn, libFuzzer (fork mode,
# one worker, so a crash does not end it) and AFL++ (one instance, with
# CMPLOG) side by side, each for HOURS / targets.  Each engine records its
# run in the metrics database (`memplan report` lists them: target, engine,
# duration, executions, coverage, crashes).  After each target, AFL++'s
# queue joins libFuzzer's working corpus and `make fuzz-merge` minimizes
# both back into corpus/TARGET (the new inputs to commit).  The crashes of
# both engines are replayed once and grouped by their failure signature
# (the sanitizer's top frames, or the target's own message up to its first
# detail), one file per signature kept in build/fuzz/campaign/TARGET/;
# `sh fuzz/minimize.sh TARGET FILE NAME` files one into the corpus as a
# test.  HOURS may be fractional (0.5).  TARGETS="parse verify" narrows.
set -u
[ $# = 1 ] || { echo "usage: $0 HOURS" >&2; exit 2; }
secs=$(awk -v h="$1" 'BEGIN { if (h !~ /^[0-9]+(\.[0-9]+)?$/ || h <= 0) exit 1; printf "%d", h * 3600 }') ||
    { echo "HOURS must be a positive number" >&2; exit 2; }
targets=${TARGETS:-parse planners verify planfile}
n=$(echo "$targets" | wc -w)
per=$((secs / n))
[ "$per" -ge 10 ] || { echo "HOURS too small for $n targets" >&2; exit 2; }
make --no-print-directory build/memplan >/dev/null || exit 2
out=build/fuzz/campaign
mkdir -p "$out"
echo "fuzz-campaign: $targets, ${per}s each on libFuzzer and AFL++ side by side"
for t in $targets; do
    make --no-print-directory build/fuzz/libfuzzer/fuzz-$t build/fuzz/afl/fuzz-$t \
        build/fuzz/cmplog/fuzz-$t >/dev/null || exit 2
    FORK=1 make --no-print-directory fuzz TARGET=$t SECONDS=$per >"$out/$t.libfuzzer.log" 2>&1 &
    lf=$!
    make --no-print-directory fuzz-afl TARGET=$t SECONDS=$per JOBS=1 >"$out/$t.afl.log" 2>&1
    wait $lf
    for l in "$out/$t.libfuzzer.log" "$out/$t.afl.log"; do grep -E '^record-campaign' "$l" | tail -1; done
    # AFL++'s queue into the working corpus, then both minimized into corpus/
    for q in build/fuzz/afl/$t/out/*/queue/id:*; do
        [ -f "$q" ] && cp "$q" "build/fuzz/work/$t/corpus/afl-$(cksum <"$q" | cut -d' ' -f1)"
    done
    make --no-print-directory fuzz-merge TARGET=$t | tail -2
    sh fuzz/crash_groups.sh "$t" "$out/$t"
done
