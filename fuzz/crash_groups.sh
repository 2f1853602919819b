#!/bin/sh
# crash_groups.sh TARGET DIR
#
# The crashes both engines kept for TARGET (libFuzzer's
# build/fuzz/work/TARGET/crashes, AFL++'s build/fuzz/afl/TARGET/out/*/crashes),
# each replayed once with the sanitized libFuzzer build and grouped by
# signature: the first three frames of the sanitizer's stack that are in
# memplan's code, or else the target's own "fuzz: ..." message cut at its
# first colon-separated detail.  One input per signature is copied to DIR
# (crash-<n>), with DIR/signatures listing count and signature.
set -u
[ $# = 2 ] || { echo "usage: $0 TARGET DIR" >&2; exit 2; }
t=$1 dir=$2
bin=build/fuzz/libfuzzer/fuzz-$t
mkdir -p "$dir"
: >"$dir/all"
export ASAN_OPTIONS=abort_on_error=1:symbolize=1:detect_leaks=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
for f in build/fuzz/work/"$t"/crashes/* build/fuzz/afl/"$t"/out/*/crashes/id:*; do
    [ -f "$f" ] || continue
    case ${f##*/} in slow-unit-*) continue;; esac # reported, not failures
    log=$("$bin" -runs=1 "$f" 2>&1)
    sig=$(printf '%s\n' "$log" | sed -n 's/^ *#[0-9]* 0x[0-9a-f]* in \([A-Za-z_0-9]*\) .*\(core\|ref\|opt\|verify\|viz\|api\|peers\|fuzz\)\/.*/\1/p' |
        head -3 | tr '\n' ' ')
    [ -n "$sig" ] || sig=$(printf '%s\n' "$log" | grep -m1 '^fuzz: ' | cut -d: -f1-3)
    [ -n "$sig" ] || sig="no failure on replay"
    printf '%s\t%s\n' "$sig" "$f" >>"$dir/all"
done
sort -t '	' -k1,1 "$dir/all" | awk -F '\t' -v dir="$dir" '
    $1 != last { n++; last = $1; count[n] = 0; sig[n] = $1; system("cp \"" $2 "\" \"" dir "/crash-" n "\"") }
    { count[n]++ }
    END { for (i = 1; i <= n; i++) printf "%d\t%s\n", count[i], sig[i] > (dir "/signatures")
          printf "fuzz-campaign: %s: %d crash input(s), %d signature(s)\n", FILENAME == "" ? "" : "", NR, n }' |
    sed "s/^fuzz-campaign: : /fuzz-campaign: $t: /"
[ -f "$dir/signatures" ] && cat "$dir/signatures"
exit 0
