#!/bin/sh
# Several methods sharing state (an entry line, shared tensors): every
# method's blocks are in the plan, the shared state has one place in all of
# them and the arena is the largest method's; the verifier checks each
# method and the shared state; ExecuTorch's planners refuse shared state
# (exit 3) but plan methods that share nothing; the format's rules are
# FILE:LINE, exit 2; svg draws any method; the generator makes methods.
set -u
. tests/cli/common.inc
G=corpus/examples/llm_methods.mpg
for a in opt tflm bestfit; do
    expect_rc 0 "$M" plan --algo $a --verify -o "$T/$a.mpp" "$G"
    [ "$(grep -c '^graph ' "$T/$a.mpp")" = 2 ] && ok || bad "$a: not one block per method"
    for t in k0 v0 k1 v1; do
        [ "$(grep "^alloc $t " "$T/$a.mpp" | sed 's/ obj=[0-9]*//' | sort -u | wc -l)" = 1 ] && ok ||
            bad "$a: $t differs between the methods: $(grep "^alloc $t " "$T/$a.mpp")"
    done
done
# one arena for both: prefill's 2,621,440 bytes (decode alone needs 1,067,008;
# two arenas with a cache each would need 3,688,448)
[ "$(grep -c '^buffers 0 2621440$' "$T/opt.mpp")" = 2 ] && ok || bad "opt arena: $(grep buffers "$T/opt.mpp")"
"$M" verify "$G" "$T/opt.mpp" | grep -q '^valid; total 2621440 bytes' && ok || bad "verify: $("$M" verify "$G" "$T/opt.mpp")"
for a in greedy naive; do
    expect_rc 3 "$M" plan --algo $a "$G"
    grep -q "planner '$a' cannot keep the state methods share at one place" "$T/err" && ok || bad "$a: $(cat "$T/err")"
done
# methods that share nothing: every planner plans each on its own
sed 's/ shared$//' "$G" >"$T/apart.mpg"
expect_rc 0 "$M" plan --algo greedy --verify -o "$T/apart.mpp" "$T/apart.mpg"
[ "$(grep -c '^graph ' "$T/apart.mpp")" = 2 ] && ok || bad "apart: $(grep '^graph' "$T/apart.mpp")"
# the verifier: shared state moved in one method; an activation over it
awk '/^graph decode/ { d = 1 } d && /^alloc k1 / { sub(/offset=[0-9]+/, "offset=1835008") } { print }' "$T/opt.mpp" >"$T/moved.mpp"
expect_rc 1 "$M" verify "$G" "$T/moved.mpp"
grep -q "^decode: shared: k1 is at offset 1835008 (size 262144) in buffer 1, but method prefill has it at offset 524288" "$T/out" &&
    ok || bad "moved: $(cat "$T/out")"
awk '/^graph decode/ { d = 1 } d && /^alloc x / { sub(/offset=[0-9]+/, "offset=0") } { print }' "$T/opt.mpp" >"$T/over.mpp"
expect_rc 1 "$M" verify "$G" "$T/over.mpp"
grep -q "^decode: overlap: .*k0" "$T/out" && ok || bad "overlap: $(cat "$T/out")"
# the format's rules
bad_file() { # LINE FRAGMENT: the file on stdin is refused at LINE with FRAGMENT
    cat >"$T/b.mpg"
    expect_rc 2 "$M" plan "$T/b.mpg"
    grep -q "b.mpg:$1: $2" "$T/err" && ok || bad "want b.mpg:$1: $2, got $(cat "$T/err")"
}
H='memplan-graph 1'
A='graph a
tensor s 64 mutable shared
tensor y 8
node placeholder out=s
node call in=s out=y
node output in=y
end'
B='graph b
tensor s 64 mutable shared
tensor y 8
node placeholder out=s
node call in=s out=y
node output in=y
end'
printf '%s\nentry a c\n%s\n%s\n' "$H" "$A" "$B" | bad_file 2 "entry: graph 'c' is not defined in this file"
printf '%s\nentry b a\n%s\n%s\n' "$H" "$A" "$B" | bad_file 2 "entry: the first method must be the file's first graph ('a')"
printf '%s\nentry a a\n%s\n%s\n' "$H" "$A" "$B" | bad_file 2 "entry: method 'a' named twice"
printf '%s\nentry a b\n%s\n%s\nentry a b\n' "$H" "$A" "$B" | bad_file 17 "a second entry line"
printf '%s\n%s\n%s\n' "$H" "$A" "$B" | bad_file 3 "tensor 's': shared state belongs to a method (the file has no entry line)"
printf '%s\nentry a b\n%s\n%s\n' "$H" "$A" "$(echo "$B" | sed 's/tensor s 64 mutable shared/tensor s 32 mutable shared/')" |
    bad_file 11 "tensor 's' is shared with method 'a' (line 4) but differs in size, mem_id or device"
printf '%s\nentry a b\n%s\n%s\n' "$H" "$A" "$(echo "$B" | sed 's/tensor s 64 mutable shared/tensor s 64 shared/')" |
    bad_file 11 "tensor 's': shared is for a mutable tensor"
printf '%s\nentry a b\n%s\n%s\n' "$H" "$(echo "$A" | sed 's/node call in=s out=y/node map in=s out=y body=b/')" "$B" |
    bad_file 7 "graph 'b' is a method (entry line): no node may run it"
S='graph s
tensor i 64
tensor o 8
node placeholder out=i
node call in=i out=o
node output in=o
end'
printf '%s\nentry a b\n%s\n%s\n%s\n' "$H" "$(echo "$A" | sed 's/node call in=s out=y/node map in=s out=y body=s/')" \
    "$(echo "$B" | sed 's/node call in=s out=y/node map in=s out=y body=s/')" "$S" |
    bad_file 2 "methods 'a' and 'b' both run graph 's': give each method its own copy"
# svg: the first method by default, any with --method
expect_rc 0 "$M" svg "$G" "$T/opt.mpp" -o "$T/p.svg"
grep -q 'q0 (prefill)' "$T/p.svg" && ok || bad "svg: prefill not drawn"
expect_rc 0 "$M" svg --method decode "$G" "$T/opt.mpp" -o "$T/d.svg"
grep -q 'logits (decode)' "$T/d.svg" && ! grep -q '(prefill)' "$T/d.svg" && ok || bad "svg --method decode"
expect_rc 2 "$M" svg --method nope "$G" "$T/opt.mpp" -o "$T/n.svg"
[ ! -e "$T/n.svg" ] && ok || bad "svg: an output was written"
# the generator's methods profile
"$M" gen --seed 4 --tensors 60 --profile methods >"$T/g.mpg"
grep -q '^entry prefill decode$' "$T/g.mpg" && ok || bad "gen: no entry line"
expect_rc 0 "$M" plan --verify -o /dev/null "$T/g.mpg"
# shared state in two pools whose map keys hash alike: each stack starts at 0
expect_rc 0 "$M" plan --per-device --verify -o "$T/pk.mpp" corpus/regressions/review-shared-pool-key-collision.mpg
[ "$(grep -c '^alloc s[12] .* offset=0 ' "$T/pk.mpp")" = 4 ] && ok || bad "pool keys: $(grep '^alloc s' "$T/pk.mpp")"
echo "methods: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
