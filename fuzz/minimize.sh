#!/bin/sh
# minimize.sh TARGET CRASHFILE NAME
#
# Minimize a crashing input and file it into the corpus as
# corpus/TARGET/crash-NAME-<hash>, where `make test` replays it from then
# on (it fails the replay until the bug is fixed, then guards against its
# return).  NAME says what it found, e.g. opt-offset-overflow.
#
# ENGINE=libfuzzer (default) minimizes with libFuzzer's -minimize_crash=1,
# ENGINE=afl with afl-tmin; MINIMIZE_SECONDS bounds the search (default
# 60).  The minimized input must still fail the sanitized build; from then
# on tests/cli/fuzz_replay.sh replays it with the plain replay driver.
set -u
[ $# = 3 ] || { echo "usage: $0 TARGET CRASHFILE NAME" >&2; exit 2; }
target=$1 crash=$2 name=$3
case $name in ''|*[!a-z0-9-]*) echo "NAME: lower-case letters, digits and '-' only" >&2; exit 2;; esac
[ -f "$crash" ] || { echo "$crash: no such file" >&2; exit 2; }
[ -d "corpus/$target" ] || mkdir -p "corpus/$target"
engine=${ENGINE:-libfuzzer}
secs=${MINIMIZE_SECONDS:-60}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/min

case $engine in libfuzzer|afl) ;; *) echo "ENGINE must be libfuzzer or afl" >&2; exit 2;; esac
bin=build/fuzz/$engine/fuzz-$target
make --no-print-directory "$bin" >/dev/null || exit 2
export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0
# The failure's signature: the target's own message up to the kind
# ("planners: invalid (opt)") and, for a plan the verifier rejects, the
# first rule it names ("planners: invalid (opt): *: alignment:"); else the
# sanitizer's report kind.  While minimizing, only failures that match it
# count (MEMPLAN_FUZZ_ONLY), so the input cannot drift to another bug.
signature() {
    "$bin" "$1" >"$tmp/sig.log" 2>&1
    head=$(sed -n 's/^fuzz: \([^:]*: [^:]*\):.*/\1/p' "$tmp/sig.log" | head -1)
    rule=$(sed -n 's/^fuzz: [^:]*: [^:]*: [^: ]*: \([a-z-]*\): .*/\1/p' "$tmp/sig.log" | head -1)
    if [ -n "$head" ] && [ -n "$rule" ]; then echo "$head: *: $rule:"
    elif [ -n "$head" ]; then echo "$head"
    else
        sed -n 's/^SUMMARY: [A-Za-z]*Sanitizer: \([^ ]*\).*/\1/p' "$tmp/sig.log" | head -1 | grep . ||
            { grep -q 'runtime error' "$tmp/sig.log" && echo 'runtime error'; } ||
            { grep -q -E 'deadly signal|ERROR: libFuzzer' "$tmp/sig.log" && echo 'crash'; }
    fi
}
sig=$(signature "$crash") || { echo "minimize: $crash does not fail $bin" >&2; exit 1; }
echo "minimize: failure '$sig'"
only=""
case $sig in *": "*) only=$sig;; esac

case $engine in
libfuzzer)
    MEMPLAN_FUZZ_ONLY=$only "$bin" -minimize_crash=1 -max_total_time="$secs" -exact_artifact_path="$out" \
        "$crash" >"$tmp/log" 2>&1
    ;;
afl)
    MEMPLAN_FUZZ_ONLY=$only timeout "$secs" afl-tmin -m none -i "$crash" -o "$out" -- "$bin" >"$tmp/log" 2>&1
    ;;
esac
if ! [ -s "$out" ] || [ "$(signature "$out")" != "$sig" ]; then
    echo "minimize: no smaller input found; filing the input as it is" >&2
    cp "$crash" "$out"
fi

"$bin" "$out" >"$tmp/replay" 2>&1
hash=$(sha1sum "$out" | cut -c1-12)
dest=corpus/$target/crash-$name-$hash
cat "$out" >"$dest"
echo "minimize: $(wc -c <"$crash") -> $(wc -c <"$dest") bytes, filed as $dest"
grep -m3 -E '^fuzz: |runtime error|ERROR: AddressSanitizer' "$tmp/replay"
exit 0
