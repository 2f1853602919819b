#!/bin/sh
# A delegate's working memory (scratch=BYTES): every planner plans it as a
# tensor live at its node alone and the verifier checks it; opt reaches the
# lower bound on the example (the scratch reuses the dead embedding's
# bytes); the SVG shows it; the generator makes it; a scratch= anywhere but
# on a delegate is FILE:LINE and exit 2.
set -u
. tests/cli/common.inc
G=corpus/examples/delegate_scratch.mpg
for a in greedy naive opt tflm bestfit; do
    expect_rc 0 "$M" plan --algo $a --verify -o "$T/$a.mpp" "$G"
    grep -q '^alloc scratch.4 mem_id=1 obj=[0-9]* offset=[0-9]* size=98304 life=4,4$' "$T/$a.mpp" && ok ||
        bad "$a: no scratch allocation: $(grep scratch "$T/$a.mpp")"
done
"$M" verify "$G" "$T/opt.mpp" | grep -q "valid; total 163840 bytes, lower bound 163840 bytes" && ok ||
    bad "opt is not at the bound: $("$M" verify "$G" "$T/opt.mpp")"
# the scratch kept beside the plan (a buffer live throughout) needs 32 KiB more: 196,608 bytes
sed -e 's/ scratch=98304//' -e 's/^tensor logits 16384$/tensor logits 16384\ntensor beside 98304/' \
    -e 's/^node placeholder out=w$/node placeholder out=w\nnode placeholder out=beside/' \
    -e 's/^node output in=logits$/node output in=logits,beside/' "$G" >"$T/beside.mpg"
"$M" plan --verify -o /dev/null "$T/beside.mpg" 2>&1 | grep -q "total 196608 bytes" && ok ||
    bad "beside: $("$M" plan --verify -o /dev/null "$T/beside.mpg" 2>&1)"
expect_rc 0 "$M" svg "$G" "$T/opt.mpp" -o "$T/s.svg"
grep -q 'scratch.4' "$T/s.svg" && ok || bad "the SVG does not show the scratch"
"$M" gen --seed 3 --tensors 300 >"$T/g.mpg"
grep -q ' scratch=[0-9]' "$T/g.mpg" && ok || bad "the generator makes no scratch="
expect_rc 0 "$M" plan --verify -o /dev/null "$T/g.mpg"
printf 'memplan-graph 1\ngraph g\ntensor x 4\nnode placeholder out=x\nnode call in=x scratch=8\nnode output\nend\n' >"$T/bad.mpg"
expect_rc 2 "$M" plan "$T/bad.mpg"
grep -q "bad.mpg:5: scratch= is only for delegate nodes" "$T/err" && ok || bad "error: $(cat "$T/err")"
echo "scratch: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
