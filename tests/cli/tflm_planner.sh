#!/bin/sh
# TFLite Micro's planner unit tests, ported (issue 49): the cases of
# tensorflow/lite/micro/memory_planner/greedy_memory_planner_test.cc for
# `--algo tflm` and of linear_memory_planner_test.cc for `--algo naive`
# (LinearMemoryPlanner: each buffer after the one before), with their exact
# offsets and sizes.  A case is its AddBuffer(size, first, last) calls, as
# a MiniMalloc CSV (times end-exclusive: last + 1) through import-csv.
set -u
. tests/cli/common.inc
# case NAME "size first last; ...": $T/NAME.mpg
case_of() {
    echo "id,lower,upper,size" >"$T/$1.csv"
    echo "$2" | tr ';' '\n' | awk 'NF == 3 {printf "%d,%d,%d,%d\n", n++, $2, $3 + 1, $1}' >>"$T/$1.csv"
    "$M" import-csv "$T/$1.csv" -o "$T/$1.mpg"
}
# expect NAME ALGO TOTAL "OFFSET ..." (offsets by buffer, in AddBuffer order; "" for none)
expect() {
    "$M" plan --algo "$2" --alignment 1 --verify -o "$T/$1.mpp" "$T/$1.mpg" 2>"$T/err" || { bad "$1 $2: $(cat "$T/err")"; return; }
    got=$(sed -n 's/^buffers 0 //p' "$T/$1.mpp")
    [ "$got" = "$3" ] && ok || bad "$1 $2: total $got, want $3"
    [ -z "$4" ] && return
    got=$(sed -n 's/^alloc b\([0-9]*\) .*offset=\([0-9]*\).*/\1 \2/p' "$T/$1.mpp" | sort -n | awk '{printf "%s%s", s, $2; s = " "}')
    [ "$got" = "$4" ] && ok || bad "$1 $2: offsets $got, want $4"
}
PERSON="9216 0 29; 3 28 29; 256 27 28; 2304 26 27; 2304 25 26; 2304 24 25; 1152 23 24; 4608 22 23; 4608 21 22;
4608 20 21; 4608 19 20; 4608 18 19; 4608 17 18; 4608 16 17; 4608 15 16; 4608 14 15; 4608 13 14; 4608 12 13;
2304 11 12; 9216 10 11; 9216 9 10; 9216 8 9; 4608 7 8; 18432 6 7; 18432 5 6; 18432 4 5; 9216 3 4; 36864 2 3;
18432 1 2; 18432 0 1"
PERSON=$(echo "$PERSON" | tr '\n' ' ')

# GreedyMemoryPlannerTest
case_of basics "10 0 1; 20 2 3"
expect basics tflm 20 "0 0"
case_of medium "10 0 1; 20 1 2; 30 2 3; 40 3 4; 50 0 1"
expect medium tflm 90 "50 70 40 0 0"
case_of overlap "100 0 1; 50 2 3; 20 1 2"
expect overlap tflm 120 ""
case_of person "$PERSON"
"$M" plan --algo tflm --alignment 1 --verify -o "$T/p.mpp" "$T/person.mpg" 2>"$T/err" && ok || bad "person: $(cat "$T/err")"
got=$(sed -n 's/^buffers 0 //p' "$T/p.mpp")
[ "$got" -lt 241027 ] && ok || bad "person: $got, not under the sum of the buffers"
# TestReverseSortInPlace: equal sizes keep the order they were added in
# (ids ascending), so 100 buffers live at once stack in that order
sizes=$(awk 'BEGIN {for (i = 0; i < 100; i++) printf "%d 0 0; ", i % 10 + 1}')
case_of sort "$sizes"
want=$(awk 'BEGIN {for (v = 10; v >= 1; v--) for (k = 0; k < 10; k++) order[n++] = v - 1 + 10 * k
    at = 0; for (i = 0; i < 100; i++) {off[order[i]] = at; at += order[i] % 10 + 1}
    for (i = 0; i < 100; i++) printf "%s%d", (i ? " " : ""), off[i]}')
expect sort tflm 550 "$want"

# LinearMemoryPlannerTest
case_of lbasics "10 0 1; 20 1 2"
expect lbasics naive 30 "0 10"
case_of lperson "$PERSON"
expect lperson naive 241027 ""

echo "tflm_planner: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
