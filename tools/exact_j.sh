#!/bin/sh
# exact_j.sh: MiniMalloc's J at --exact --exact-ms 30000 holds at or below
# 1,036,288 bytes (issue 50: f0418d4 found it, 1.8.0 to 2.1.0 found
# 1,044,480: the exact search's second pass never came back to a capacity
# its first pass had left for want of work; opt/exact.c retries those).
# A bench check (make bench), not a timed unit test: ~12 s of fixed work.
M=${MEMPLAN:-build/memplan}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$M" import-csv bench/data/minimalloc/J.1048576.csv -o "$T/J.mpg" || exit 2
for e in 30000 60000; do
    "$M" plan --alignment 1 --exact --exact-ms $e -o "$T/J.mpp" "$T/J.mpg" 2>/dev/null || exit 2
    b=$(sed -n 's/^buffers 0 //p' "$T/J.mpp")
    if [ "$b" -le 1036288 ]; then
        echo "MiniMalloc J, --exact-ms $e: $b bytes (held at or below 1,036,288)"
    else
        echo "MiniMalloc J, --exact-ms $e: $b bytes, above 1,036,288: the exact search lost ground" >&2
        exit 1
    fi
done
