#!/bin/sh
# memplan reorder and plan --reorder (issue 50): an operator order of lower
# peak live bytes that keeps the program's meaning, checked by verify
# --order, which goes red on orders that break it.
set -u
. tests/cli/common.inc
D=corpus/reorder
# le A B: decimal A <= B, at any size (peaks reach 2^64, past the shell's numbers)
le() { [ ${#1} -lt ${#2} ] || { [ ${#1} -eq ${#2} ] && [ "$(printf '%s\n%s\n' "$1" "$2" | LC_ALL=C sort | head -1)" = "$1" ]; }; }
peak() { sed -n 's/.*peak live bytes \([0-9]*\) -> \([0-9]*\).*/\1 \2/p' "$T/err"; }

# 1. two branches side by side: one after the other, the peak halves, and
# the exhaustive search proves it cannot go lower
expect_rc 0 "$M" reorder $D/branches.mpg -o "$T/b.mpg"
[ "$(peak)" = "2064 1056" ] && grep -q "order proved optimal" "$T/err" && ok || bad "branches: $(cat "$T/err")"
[ "$(grep '^node call' "$T/b.mpg" | sed 's/.*op=\([A-Za-z0-9]*\).*/\1/' | tr '\n' ' ')" = "A1 A2 B1 B2 cat " ] && ok ||
    bad "branches: $(grep '^node' "$T/b.mpg" | tr '\n' '|')"
expect_rc 0 "$M" verify --order $D/branches.mpg "$T/b.mpg"
grep -q "^order: valid" "$T/out" && ok || bad "branches: $(cat "$T/out")"
expect_rc 0 "$M" plan --reorder --verify -o "$T/b.mpp" $D/branches.mpg
grep -q "total 1056 bytes" "$T/err" && grep -q "the reordered graph's plan" "$T/err" && ok || bad "plan --reorder: $(cat "$T/err")"
expect_rc 0 "$M" verify --order $D/branches.mpg "$T/b.mpg" "$T/b.mpp"
# the given order is kept where it is as good: no change, no note of gain
expect_rc 0 "$M" plan --reorder -o /dev/null corpus/examples/model.mpg
grep -q "the given order's plan, kept" "$T/err" && ok || bad "model: $(cat "$T/err")"

# 2. a write in place stays after the reader of what it overwrites, though
# moving it would lower the peak (a reorder without that rule gave
# inplace.invalid.mpg, 7,184 -> 5,136 bytes: verify --order refuses it)
expect_rc 0 "$M" reorder $D/inplace.mpg -o "$T/i.mpg"
[ "$(peak)" = "7184 7184" ] && ok || bad "inplace: $(cat "$T/err")"
expect_rc 1 "$M" verify --order $D/inplace.mpg $D/inplace.invalid.mpg
grep -q "node 4 (WRITE) now runs before node 2 (READ), which names the same storage" "$T/out" && ok ||
    bad "inplace.invalid: $(cat "$T/out")"
# verify --order is red on each rule: a read before its write, a node
# lost, a moved placeholder
sed 's/^node call op=A1 in=x out=a1$/XX/; s/^node call op=A2 in=a1 out=a2$/node call op=A1 in=x out=a1/; s/^XX$/node call op=A2 in=a1 out=a2/' \
    $D/branches.mpg >"$T/swap.mpg"
expect_rc 1 "$M" verify --order $D/branches.mpg "$T/swap.mpg"
grep -q "node 3 (A2) now runs before node 1 (A1), which writes a tensor it reads" "$T/out" && ok || bad "swap: $(cat "$T/out")"
sed 's/^node call op=B2 in=b1 out=b2$/node call op=B3 in=b1 out=b2/' $D/branches.mpg >"$T/lost.mpg"
expect_rc 1 "$M" verify --order $D/branches.mpg "$T/lost.mpg"
grep -q "node 4 of the original (B2) is not in the reordered graph" "$T/out" && ok || bad "lost: $(cat "$T/out")"
expect_rc 2 "$M" verify --order $D/branches.mpg
grep -q "needs the reordered graph" "$T/err" && ok || bad "usage: $(cat "$T/err")"

# 3. the harness's programs (control flow, devices, in-place, views,
# mutable buffers): every reorder valid, never a higher peak, plan
# --reorder never above plan; the same bytes twice; more effort never worse
lower=0
for k in $(seq 0 59); do
    "$M" gen --case h1-$k -o "$T/h.mpg" 2>/dev/null
    o=$(sed -n 2p "$T/h.mpg" | grep -o -- "--alignment [0-9]*\|--no-alloc-[a-z]*\|--per-device" | tr '\n' ' ')
    # shellcheck disable=SC2086
    "$M" reorder $o -o "$T/r.mpg" "$T/h.mpg" 2>"$T/err" || { bad "h1-$k: reorder: $(cat "$T/err")"; continue; }
    set -- $(peak)
    le "$2" "$1" && ok || bad "h1-$k: peak $1 -> $2"
    [ "$2" != "$1" ] && lower=$((lower + 1))
    "$M" verify --order "$T/h.mpg" "$T/r.mpg" >"$T/v" && ok || bad "h1-$k: $(cat "$T/v")"
done
[ "$lower" -ge 10 ] && ok || bad "reorder lowered the peak of only $lower of 60 harness programs"
echo "reorder: lowered the peak of $lower of 60 harness programs"
"$M" gen --seed 3 --tensors 3000 --profile mixed -o "$T/m.mpg"
"$M" reorder -o "$T/m1.mpg" "$T/m.mpg" 2>/dev/null && "$M" reorder -o "$T/m2.mpg" "$T/m.mpg" 2>/dev/null
cmp -s "$T/m1.mpg" "$T/m2.mpg" && ok || bad "two runs differ"
prev=
for e in 0 1 4 16; do
    "$M" reorder --effort $e -o /dev/null "$T/m.mpg" 2>"$T/err"
    set -- $(peak)
    [ -z "$prev" ] || le "$2" "$prev" && ok || bad "effort $e: $2 after $prev"
    prev=$2
done
for k in 3 7 11; do
    "$M" gen --case h1-$k -o "$T/h.mpg" 2>/dev/null
    o=$(sed -n 2p "$T/h.mpg" | grep -o -- "--alignment [0-9]*\|--no-alloc-[a-z]*\|--per-device" | tr '\n' ' ')
    # shellcheck disable=SC2086
    a=$("$M" plan $o --verify -o /dev/null "$T/h.mpg" 2>&1 | sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')
    # shellcheck disable=SC2086
    b=$("$M" plan $o --reorder --verify -o /dev/null "$T/h.mpg" 2>&1 | sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')
    [ -n "$b" ] && le "$b" "$a" && ok || bad "h1-$k: plan --reorder $b, plan $a"
done

# 4. what the fuzz corpus found, replayed with its options: an in-place
# write across devices (planned apart by --per-device) is still a write;
# live bytes past 64 bits saturate instead of wrapping
for a in $D/*.args; do
    g=${a%.args}.mpg
    # shellcheck disable=SC2046
    "$M" reorder $(cat "$a") -o "$T/f.mpg" "$g" 2>"$T/err" && ok || bad "$g: $(cat "$T/err")"
    "$M" verify --order "$g" "$T/f.mpg" >"$T/v" && ok || bad "$g: $(cat "$T/v")"
    set -- $(peak)
    le "$2" "$1" && ok || bad "$g: peak $1 -> $2"
done
"$M" reorder $(cat $D/fuzz-peak-past-64-bits.args) -o /dev/null $D/fuzz-peak-past-64-bits.mpg 2>"$T/err"
[ "$(peak)" = "18446744073709551615 18446744073709551615" ] && ok || bad "past 64 bits: $(cat "$T/err")"

echo "reorder: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
