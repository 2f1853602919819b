#!/bin/sh
# merge.sh TARGET BINARY
#
# Minimize the grown corpus back into the seed corpus (make fuzz-merge):
# libFuzzer's -merge=1 keeps, out of corpus/TARGET and the working corpus
# build/fuzz/work/TARGET/corpus, the smallest set of inputs that reaches the
# same coverage, and that set replaces corpus/TARGET's seeds.  Crash inputs
# (crash-*) are always kept as they are: they are the regression tests.
# The merge keeps coverage edges, not hit counts (-use_counters=0), so the
# seed corpus stays small (a few hundred KB) and covers the same lines;
# MERGE_FLAGS adds libFuzzer flags (MERGE_FLAGS=-use_counters=1: keep the
# inputs that add hit-count features too).
set -u
[ $# = 2 ] || { echo "usage: $0 TARGET BINARY" >&2; exit 2; }
target=$1 bin=$2
seeds=corpus/$target work=build/fuzz/work/$target/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old" "$tmp/new" "$seeds" "$work"
for f in "$seeds"/*; do
    [ -f "$f" ] || continue
    case ${f##*/} in crash-*) ;; *) cp "$f" "$tmp/old/";; esac
done
before=$(ls "$tmp/old" | wc -l)
# no -max_len: hand-made seeds larger than a campaign's max_len (a program
# nested 200 deep) are kept whole
opts=""
# shellcheck disable=SC2086
if ! "$bin" -merge=1 -use_counters=0 ${MERGE_FLAGS:-} $opts "$tmp/new" "$tmp/old" "$work" >"$tmp/log" 2>&1; then
    tail -20 "$tmp/log" >&2
    exit 1
fi
for f in "$seeds"/*; do
    case ${f##*/} in crash-*) ;; *) [ -f "$f" ] && rm -f "$f";; esac
done
cp "$tmp/new"/* "$seeds/" 2>/dev/null
after=$(ls "$tmp/new" | wc -l)
echo "fuzz-merge: $target: $before seeds + $(ls "$work" | wc -l) grown -> $after seeds ($(cat "$seeds"/* 2>/dev/null | wc -c) bytes in $seeds)"
grep -E 'MERGE-OUTER: [0-9]+ new files' "$tmp/log" | tail -1
