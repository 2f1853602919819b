#!/bin/sh
# Pinned offsets (tensor ... at=OFFSET): opt and the peers place every
# pinned tensor exactly at its pin and the rest around it, and the verifier
# holds them to it; ExecuTorch's planners (greedy, naive) have no pins and
# refuse with exit 3, naming the pin; conflicting or misaligned pins are
# FILE:LINE and exit 3; at= where it means nothing is FILE:LINE and exit 2;
# the writer, the builder (Python), the SVG and the generator carry pins.
set -u
. tests/cli/common.inc
G=corpus/examples/pinned_camera.mpg
for a in opt tflm bestfit; do
    expect_rc 0 "$M" plan --algo $a --verify -o "$T/$a.mpp" "$G"
    grep -q '^alloc frame mem_id=1 obj=[0-9]* offset=0 size=76800 ' "$T/$a.mpp" && ok || bad "$a: frame moved"
    grep -q '^alloc overlay mem_id=1 obj=[0-9]* offset=196608 size=38400 ' "$T/$a.mpp" && ok ||
        bad "$a: overlay moved: $(grep overlay "$T/$a.mpp")"
done
# opt honours both pins at the live-bytes lower bound: the pins cost nothing here
"$M" verify "$G" "$T/opt.mpp" | grep -q "valid; total 268800 bytes, lower bound 268800 bytes" && ok ||
    bad "opt: $("$M" verify "$G" "$T/opt.mpp")"
for a in greedy naive; do
    expect_rc 3 "$M" plan --algo $a -o "$T/$a.mpp" "$G"
    grep -q "pinned_camera.mpg:8: tensor 'frame' is pinned (at=0) and planner '$a' has no pinned offsets" "$T/err" &&
        ok || bad "$a: $(cat "$T/err")"
    [ ! -e "$T/$a.mpp" ] && ok || bad "$a: an output file was written"
done
# the verifier holds a plan to its pins (rule 8, consistency)
sed 's/^alloc overlay \(.*\) offset=196608 /alloc overlay \1 offset=158208 /' "$T/opt.mpp" >"$T/moved.mpp"
expect_rc 1 "$M" verify "$G" "$T/moved.mpp"
grep -q "pin: overlay is at offset 158208 in buffer 1, but line 16 pins it at 196608" "$T/out" && ok ||
    bad "verify: $(cat "$T/out")"
# conflicting pins: both live at node 8 on the same bytes
sed 's/^tensor overlay 38400 at=196608$/tensor overlay 38400 at=38400/' "$G" >"$T/conflict.mpg"
expect_rc 3 "$M" plan -o "$T/c.mpp" "$T/conflict.mpg"
grep -q "conflict.mpg:8: tensor 'frame' pinned at 0: bytes \[0,76800) overlap tensor 'overlay' (line 16), pinned at \[38400,76800), while both live" "$T/err" &&
    ok || bad "conflict: $(cat "$T/err")"
[ ! -e "$T/c.mpp" ] && ok || bad "conflict: an output file was written"
# a pin the alignment does not divide
sed 's/^tensor overlay 38400 at=196608$/tensor overlay 38400 at=196600/' "$G" >"$T/misaligned.mpg"
expect_rc 3 "$M" plan "$T/misaligned.mpg"
grep -q "misaligned.mpg:16: tensor 'overlay' pinned at 196600: not a multiple of the alignment 16" "$T/err" &&
    ok || bad "alignment: $(cat "$T/err")"
expect_rc 0 "$M" plan --alignment 8 --verify "$T/misaligned.mpg"
# at= where it means nothing: FILE:LINE, exit 2
printf 'memplan-graph 1\ngraph g\ntensor x 4\ntensor y 4 inplace=x at=0\nnode placeholder out=x\nnode call in=x out=y\nnode output in=y\nend\n' >"$T/ip.mpg"
expect_rc 2 "$M" plan "$T/ip.mpg"
grep -q "ip.mpg:4: tensor 'y': at= pins storage, and an in-place or view tensor lives in its base's: pin the base" "$T/err" &&
    ok || bad "in-place: $(cat "$T/err")"
printf 'memplan-graph 1\ngraph g\ntensor x 4\ntensor y 4\nnode placeholder out=x\nnode map in=x body=b out=y\nnode output in=y\nend\ngraph b\ntensor i 4\ntensor o 4 at=16\nnode placeholder out=i\nnode call in=i out=o\nnode output in=o\nend\n' >"$T/sub.mpg"
expect_rc 2 "$M" plan "$T/sub.mpg"
grep -q "sub.mpg:11: tensor 'o': at= is allowed in the entry graph only" "$T/err" && ok || bad "sub-graph: $(cat "$T/err")"
printf 'memplan-graph 1\ngraph g\ntensor x 4 at=4611686018427387904\nnode placeholder out=x\nnode output in=x\nend\n' >"$T/big.mpg"
expect_rc 2 "$M" plan "$T/big.mpg"
grep -q "big.mpg:3: bad at '4611686018427387904' (want a byte offset below 2^62)" "$T/err" && ok || bad "big: $(cat "$T/err")"
# a pin on a tensor the options leave unplanned is ignored
expect_rc 0 "$M" plan --no-alloc-inputs --verify -o "$T/ni.mpp" "$G"
grep -q '^alloc frame ' "$T/ni.mpp" && bad "an unplanned input was allocated" || ok
# the SVG marks the pins
expect_rc 0 "$M" svg "$G" "$T/opt.mpp" -o "$T/p.svg"
[ "$(grep -c 'stroke-dasharray="4 2" class="c[0-9]*"><title>pinned at' "$T/p.svg")" = 2 ] && ok ||
    bad "the SVG does not mark both pins"
# the generator pins tensors in some programs (a side stream), and opt plans them
n=0
for s in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    "$M" gen --seed $s --tensors 60 --pins >"$T/g.mpg"
    grep -q ' at=[0-9]' "$T/g.mpg" || continue
    n=$((n + 1))
    expect_rc 0 "$M" plan --verify -o /dev/null "$T/g.mpg"
done
[ "$n" -gt 0 ] && ok || bad "no generated program pins a tensor"
# without --pins the same seeds pin nothing (bench graphs stay as they were)
for s in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$M" gen --seed $s --tensors 60; done >"$T/all.mpg"
grep -q ' at=' "$T/all.mpg" && bad "gen without --pins pinned a tensor" || ok
echo "pins: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
