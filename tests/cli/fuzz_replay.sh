#!/bin/sh
# Replay every fuzz corpus (corpus/<target>/: the seeds and every input that
# ever crashed or failed) with the replay drivers of $BUILD - in `make test`
# those are built under ASan+UBSan with the test compiler, no fuzzer needed.
# Each input runs in a child of its own (replay --fork), so every failing
# input is named.  Exits non-zero on any failure.
set -u
B=${BUILD:-build/test}
pass=0 fail=0
for t in parse planners plan verify planfile csv baseline shapes store shard external pyapi; do
    d=corpus/$t
    [ -d "$d" ] || continue
    r=$B/fuzz-replay-$t
    if ! [ -x "$r" ]; then
        echo "FAIL: $r is missing (make B=$B $r)"
        fail=$((fail + 1))
        continue
    fi
    out=$(ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} "$r" -q --fork --timeout 120 "$d" 2>"$B/fuzz-replay-$t.log")
    p=$(echo "$out" | sed -n 's/^replay: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(echo "$out" | sed -n 's/^replay: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        echo "FAIL: $r did not finish (see $B/fuzz-replay-$t.log)"
        fail=$((fail + 1))
        continue
    fi
    pass=$((pass + p)) fail=$((fail + f))
    echo "$t: $p passed, $f failed"
    if [ "$f" != 0 ]; then
        grep -E '^replay: FAIL|^fuzz: ' "$B/fuzz-replay-$t.log" | sed 's/^/  /' | head -40
    fi
done
echo "fuzz-replay: $pass passed, $fail failed"
[ "$fail" = 0 ]
