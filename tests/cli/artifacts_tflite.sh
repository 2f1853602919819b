#!/bin/sh
# TFLite models (issue 49): corpus/artifacts/tflite read with TFLite
# Micro's lifetimes, verified with the plan TFLite Micro runs (its greedy
# planner's, or the offline plan the model carries), re-planned into an
# offline plan TFLite Micro reads; hostile files refused, nothing written.
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
D=corpus/artifacts/tflite
FBV=build/memplan-fbverify
total() { sed -n 's/.*total \([0-9]*\) bytes.*/\1/p' "$T/out"; }

# 1. the arena heads TFLite Micro measures (memory_arena_threshold_test.cc):
# the conv test model's 7,744 bytes exactly; the keyword model's 672 less
# its kernels' scratch buffers (288 planned: the tensors the file names)
expect_rc 0 "$M" verify $D/test_conv_model.tflite
[ "$(total)" = 7744 ] && ok || bad "conv test model: $(cat "$T/out")"
expect_rc 0 "$M" verify $D/keyword_scrambled.tflite
[ "$(total)" = 288 ] && ok || bad "keyword: $(cat "$T/out")"
# TFLite Micro's lifetimes: an operator's inputs and outputs live together
expect_rc 0 "$M" import-tflite $D/test_conv_model.tflite -o "$T/conv.mpg"
grep -q "^node call op=CONV_2D in=t0,t6,t1 out=t8$" "$T/conv.mpg" && ok || bad "conv: $(grep CONV "$T/conv.mpg" | head -1)"
grep -q "^tensor t5 11520 const$" "$T/conv.mpg" && ok || bad "conv: the weights are not const"
for a in tflm opt; do
    expect_rc 0 "$M" plan --algo $a --alignment 16 --no-alloc-mutable --verify -o /dev/null "$T/conv.mpg"
    grep -q "total 7744 bytes, lower bound 7744" "$T/err" && ok || bad "conv $a: $(cat "$T/err")"
done

# 2. an offline plan the model carries is what is checked: Vela's plan for
# the Ethos-U puts the input, the output and both scratch areas at 0 (the
# NPU's command stream works inside its scratch area): six overlaps,
# found, not hidden
expect_rc 1 "$M" verify $D/person_detect_vela.tflite
grep -q "INVALID: 6 violations (overlap 6); total 74464 bytes" "$T/out" && ok || bad "vela: $(tail -1 "$T/out")"
expect_rc 2 "$M" replan $D/person_detect_vela.tflite -o "$T/vela.tflite"
grep -q "carries an offline plan already" "$T/err" && ok || bad "vela replan: $(cat "$T/err")"
[ ! -e "$T/vela.tflite" ] && ok || bad "vela: an output was written"

# 3. replan: an OfflineMemoryAllocation TFLite Micro reads (one offset per
# tensor, -1 for what it allocates itself); the model otherwise unchanged
for n in keyword_scrambled test_conv_model; do
    expect_rc 0 "$M" replan $D/$n.tflite -o "$T/$n.tflite"
    grep -q "bytes planned before" "$T/out" && ok || bad "$n: $(cat "$T/out")"
    "$FBV" tflite "$T/$n.tflite" && ok || bad "$n: the re-planned model fails FlatBuffers' verifier"
    expect_rc 0 "$M" verify "$T/$n.tflite"
    [ "$(total)" -le "$( "$M" verify $D/$n.tflite | sed -n 's/.*total \([0-9]*\) bytes.*/\1/p')" ] && ok ||
        bad "$n: the offline plan needs more than TFLite Micro's"
    "$M" import-tflite "$T/$n.tflite" -o "$T/re.mpg" 2>/dev/null
    grep -q "an offline plan" "$T/re.mpg" && ok || bad "$n: the re-planned model shows no offline plan"
    rm -rf "$T/j1" "$T/j2"
    flatc --json --strict-json --defaults-json -o "$T/j1" schemas/tflite/schema.fbs -- $D/$n.tflite &&
        flatc --json --strict-json --defaults-json -o "$T/j2" schemas/tflite/schema.fbs -- "$T/$n.tflite"
    $PY -c 'import json, struct, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
meta = b["metadata"].pop()
buf = b["buffers"].pop(meta["buffer"])
if not b["metadata"] and "metadata" not in a:  # the model had none
    del b["metadata"]
words = struct.unpack("<%di" % (len(buf["data"]) // 4), bytes(buf["data"]))
ok = meta["name"] == "OfflineMemoryAllocation" and words[0] == 1 and words[2] == len(words) - 3
ok = ok and words[2] == sum(len(g["tensors"]) for g in a["subgraphs"]) and a == b
sys.exit(0 if ok else 1)' "$T/j1/$n.json" "$T/j2/$n.json" && ok || bad "$n: more changed than the offline plan"
done

# 4. control flow (a model made here: tests/cli/make_if_tflite.py): the
# branches spliced in where IF runs them, in TFLite Micro's scope order:
# the IF's output created first, each branch's inputs, operators and
# outputs, then the IF's inputs and output used once more
$PY tests/cli/make_if_tflite.py "$T/if.tflite" && ok || bad "make_if_tflite.py"
expect_rc 0 "$M" import-tflite "$T/if.tflite" -o "$T/if.mpg"
grep '^node' "$T/if.mpg" | tr '\n' '|' >"$T/if.nodes"
[ "$(cat "$T/if.nodes")" = "node placeholder out=t0|node placeholder out=t1|node call op=IF out=t2|\
node call op=subgraph1.inputs out=s1.t0|node call op=ADD in=s1.t0,s1.t0 out=s1.t1|node call op=subgraph1.outputs in=s1.t1|\
node call op=subgraph2.inputs out=s2.t0|node call op=MUL in=s2.t0,s2.t0 out=s2.t2|node call op=ADD in=s2.t0,s2.t0 out=s2.t1|\
node call op=subgraph2.outputs in=s2.t1|node call op=IF.end in=t0,t1,t2|node call op=ADD in=t2,t1 out=t3|node output in=t3|" ] &&
    ok || bad "IF: $(cat "$T/if.nodes")"
expect_rc 0 "$M" replan "$T/if.tflite" -o "$T/if2.tflite"
expect_rc 0 "$M" verify "$T/if2.tflite"
grep -q "^valid" "$T/out" && ok || bad "IF re-planned: $(cat "$T/out")"

# an operator that names a constant twice before anything else does
# (MUL(w, w), as rf_keras in tflite-micro's history): one tensor, defined once
$PY tests/cli/make_if_tflite.py "$T/twice.tflite" twice && ok || bad "make_if_tflite.py twice"
expect_rc 0 "$M" import-tflite "$T/twice.tflite" -o "$T/twice.mpg"
grep -q "^node call op=MUL in=t1,t1 out=t2$" "$T/twice.mpg" && ok || bad "twice: $(grep '^node' "$T/twice.mpg" | tr '\n' '|')"
expect_rc 0 "$M" verify "$T/twice.tflite"

# 5. replan --reorder: the operators of a model whose branches interleave
# run one branch after the other, the arena halves, and the new order is a
# valid schedule of the old (verify --order over both imports); only the
# operators' order and the offline plan change (flatc --json)
$PY tests/cli/make_if_tflite.py "$T/br.tflite" branches && ok || bad "make_if_tflite.py branches"
expect_rc 0 "$M" replan --reorder "$T/br.tflite" -o "$T/br2.tflite"
grep -q "2064 bytes planned before, 1056 after" "$T/out" && ok || bad "reorder: $(cat "$T/out" "$T/err")"
"$M" import-tflite "$T/br.tflite" -o "$T/br.mpg" 2>/dev/null && "$M" import-tflite "$T/br2.tflite" -o "$T/br2.mpg" 2>/dev/null
expect_rc 0 "$M" verify --order "$T/br.mpg" "$T/br2.mpg"
[ "$(grep '^node call' "$T/br2.mpg" | sed 's/.* in=\([^ ]*\) .*/\1/' | tr '\n' ' ')" = "t0,t0 t1,t1 t0,t0 t2,t2 t3,t4 " ] && ok ||
    bad "reorder: $(grep '^node' "$T/br2.mpg" | tr '\n' '|')"
expect_rc 0 "$M" verify "$T/br2.tflite"
grep -q "^valid; total 1056 bytes" "$T/out" && ok || bad "reorder: $(cat "$T/out")"
rm -rf "$T/j1" "$T/j2"
flatc --json --strict-json --defaults-json -o "$T/j1" schemas/tflite/schema.fbs -- "$T/br.tflite" &&
    flatc --json --strict-json --defaults-json -o "$T/j2" schemas/tflite/schema.fbs -- "$T/br2.tflite"
$PY -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
meta = b["metadata"].pop()
b["buffers"].pop(meta["buffer"])
if not b["metadata"] and "metadata" not in a:
    del b["metadata"]
key = lambda op: json.dumps(op, sort_keys=True)
ops_a, ops_b = a["subgraphs"][0].pop("operators"), b["subgraphs"][0].pop("operators")
sys.exit(0 if a == b and sorted(map(key, ops_a)) == sorted(map(key, ops_b)) and ops_a != ops_b else 1)' \
    "$T/j1/br.json" "$T/j2/br2.json" && ok || bad "reorder: more changed than the operators' order and the plan"
# a model where no order is lower keeps its own (and says nothing is saved)
expect_rc 0 "$M" replan --reorder $D/test_conv_model.tflite -o "$T/conv2.tflite"
grep -q "7744 bytes planned before, 7744 after" "$T/out" && ok || bad "conv --reorder: $(cat "$T/out")"
expect_rc 2 "$M" replan --reorder corpus/artifacts/pte/add.pte -o "$T/x.pte"
grep -q "instructions keep their order" "$T/err" && ok || bad "pte --reorder: $(cat "$T/err")"

# 6. hostile models: a reason, exit 2, nothing written
head -c 4000 $D/keyword_scrambled.tflite >"$T/cut.tflite"
$PY -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[0:4] = (len(d) + 64).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)' $D/keyword_scrambled.tflite "$T/root.tflite"
# an offline plan with one offset too few: TFLite Micro refuses it, so do we
$PY - "$T/test_conv_model.tflite" "$T/short-plan.tflite" <<'PYEOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
k = d.find((1).to_bytes(4, "little") + (1).to_bytes(4, "little") + (15).to_bytes(4, "little"))
assert k > 0
d[k + 8:k + 12] = (14).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)
PYEOF
for f in cut root short-plan; do
    expect_rc 2 "$M" replan "$T/$f.tflite" -o "$T/out-$f.tflite"
    [ ! -e "$T/out-$f.tflite" ] && ok || bad "$f: an output was written"
    expect_rc 2 "$M" verify "$T/$f.tflite"
    grep -q "memplan verify: $T/$f.tflite: " "$T/err" && ok || bad "$f: $(cat "$T/err")"
done
grep -q "gives 14 offsets for 15 tensors" "$T/err" && ok || bad "short plan: $(cat "$T/err")"

echo "artifacts_tflite: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
