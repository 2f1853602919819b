#!/bin/sh
# Compiled programs (issue 49): the .pte files of ExecuTorch's repository
# (corpus/artifacts/pte) read, verified with the plan they carry, planned
# again by --et-exact into the file's own offsets, and re-planned into a
# file whose only change is the plan; hostile files refused with a reason
# and nothing written.
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
D=corpus/artifacts/pte
FBV=${BUILD:-build}/../memplan-fbverify
[ -x "$FBV" ] || FBV=build/memplan-fbverify
# same_places FILE.mpp OTHER.mpp: every allocation of the first at the
# same pool and offset in the second, and the same buffer sizes
same_places() {
    $PY - "$1" "$2" <<'PYEOF'
import sys
def read(p):
    places, bufs = {}, []
    for line in open(p):
        f = line.split()
        if f[:1] == ["alloc"]:
            kv = dict(x.split("=") for x in f[2:])
            places[f[1]] = (kv["mem_id"], kv["offset"])
        elif f[:1] == ["buffers"]:
            b = f[1:]
            while len(b) > 1 and b[-1] == "0":  # a pool with nothing in it, written or not
                b.pop()
            bufs.append(b)
    return places, bufs
(a, ab), (b, bb) = read(sys.argv[1]), read(sys.argv[2])
diff = [k for k in a if a[k] != b.get(k)]
sys.exit(0 if not diff and ab == bb and len(a) == len(b) else (print("differ:", diff[:5], ab, bb) or 1))
PYEOF
}

# 1. every file: verify (valid), import, --et-exact by the planner that made it
for spec in add:naive arduino_AddModel:greedy arduino_HelloExecuTorch:greedy arduino_KeywordSpotting:greedy \
    ModuleLinear-no-constant-segment:greedy stories260k_hybrid_llama_qnn:greedy; do
    f=$D/${spec%%:*}.pte algo=${spec#*:}
    expect_rc 0 "$M" verify "$f"
    grep -q "^valid" "$T/out" && ok || bad "$f: $(cat "$T/out")"
    expect_rc 0 "$M" import-pte "$f" -o "$T/g.mpg" --plan "$T/file.mpp"
    expect_rc 0 "$M" plan --algo "$algo" --et-exact -o "$T/et.mpp" "$T/g.mpg"
    same_places "$T/file.mpp" "$T/et.mpp" && ok || bad "$f: --et-exact --algo $algo is not the file's plan"
done
# the keyword model's view (a squeeze ExecuTorch emits as no instruction)
# is what makes it exact (without it, 2 of its 27 places differ)
"$M" import-pte $D/arduino_KeywordSpotting.pte -o "$T/kws.mpg" 2>/dev/null
grep -q "^tensor v271 64 mem_id=1 view=v257$" "$T/kws.mpg" && ok || bad "KWS: v271 is not a view of v257"
# the 29 methods of the delegated llama, one graph each
[ "$(sed -n 's/^entry //p' "$T/g.mpg" | wc -w)" = 29 ] && ok || bad "stories260k: $(grep -c '^graph' "$T/g.mpg") methods"

# 2. replan: a valid file, only the plan changed (flatc --json of both, with
# ExecuTorch's schema), never more bytes, segments kept
for n in add arduino_KeywordSpotting ModuleLinear-no-constant-segment stories260k_hybrid_llama_qnn; do
    f=$D/$n.pte
    expect_rc 0 "$M" replan "$f" -o "$T/$n.pte"
    cp "$T/out" "$T/replan.out"
    "$FBV" pte "$T/$n.pte" && ok || bad "$n: the re-planned file fails FlatBuffers' verifier"
    expect_rc 0 "$M" verify "$T/$n.pte"
    rm -rf "$T/j1" "$T/j2"
    flatc --json --strict-json --defaults-json -o "$T/j1" schemas/executorch/program.fbs -- "$f" &&
        flatc --json --strict-json --defaults-json -o "$T/j2" schemas/executorch/program.fbs -- "$T/$n.pte"
    # the changed lines: allocation_info's fields and non_const_buffer_sizes' numbers only
    diff "$T/j1/$n.json" "$T/j2/$n.json" | grep '^[<>]' | grep -v -E '"memory_(id|offset_low|offset_high)": [0-9]+,?$' |
        grep -v -E '^[<>] +[0-9]+,?$' >"$T/other"
    [ ! -s "$T/other" ] && ok || bad "$n: replan changed more than the plan: $(head -3 "$T/other")"
    $PY -c 'import json,sys
a,b=(json.load(open(p)) for p in sys.argv[1:3])
for x in (a,b):
    for ep in x["execution_plan"]:
        ep.pop("non_const_buffer_sizes")
        for v in ep["values"]:
            if v["val_type"] == "Tensor": v["val"].pop("allocation_info", None)
sys.exit(a != b)' "$T/j1/$n.json" "$T/j2/$n.json" && ok || bad "$n: the programs differ beyond the plan"
    before=$(sed -n 's/.* \([0-9]*\) bytes planned before.*/\1/p' "$T/replan.out")
    after=$(sed -n 's/.*before, \([0-9]*\) after.*/\1/p' "$T/replan.out")
    [ -n "$after" ] && [ "$after" -le "$before" ] && ok || bad "$n: $(cat "$T/replan.out")"
done
# the segments (constants) come through byte for byte, and the header points at them
tail -c 39216 $D/arduino_KeywordSpotting.pte >"$T/seg0"; tail -c 39216 "$T/arduino_KeywordSpotting.pte" >"$T/seg1"
cmp -s "$T/seg0" "$T/seg1" && ok || bad "KWS: the constant segment changed"

# outputs as every command writes them: /dev/null stays a device, a
# symbolic link's target is written, an input is never written over
expect_rc 0 "$M" import-pte $D/add.pte -o /dev/null --plan /dev/null
[ -c /dev/null ] && ok || bad "/dev/null is no longer a device"
ln -s "$T/target.mpg" "$T/link.mpg"
expect_rc 0 "$M" import-pte $D/add.pte -o "$T/link.mpg"
[ -L "$T/link.mpg" ] && grep -q "^graph forward" "$T/target.mpg" && ok || bad "the link was replaced"
cp $D/add.pte "$T/in.pte"
expect_rc 2 "$M" replan "$T/in.pte" -o "$T/in.pte"
grep -q "is one of the inputs" "$T/err" && cmp -s "$T/in.pte" $D/add.pte && ok || bad "replan over its input"

# 3. hostile files: a reason, exit 2, nothing written
printf 'ABCDET12' >"$T/short.pte"
head -c 700 $D/add.pte >"$T/cut.pte"
$PY -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[0:4] = (len(d) + 4096).to_bytes(4, "little")  # the root table past the end
open(sys.argv[2], "wb").write(d)
d = bytearray(open(sys.argv[1], "rb").read())
d[16:24] = (10**12).to_bytes(8, "little")  # the header: a program size the file does not hold
open(sys.argv[3], "wb").write(d)' $D/arduino_AddModel.pte "$T/root.pte" "$T/header.pte"
for f in short cut root header; do
    expect_rc 2 "$M" replan "$T/$f.pte" -o "$T/out-$f.pte"
    grep -q "$T/$f.pte: " "$T/err" && ok || bad "$f: $(cat "$T/err")"
    [ ! -e "$T/out-$f.pte" ] && ok || bad "$f: an output was written"
    expect_rc 2 "$M" verify "$T/$f.pte"
done
grep -q "memplan verify: .*header.pte: its extended header" "$T/err" && ok || bad "header: $(cat "$T/err")"
# 200 random byte flips of the keyword model: refused with a reason, or
# read as a program that verifies or not; never a traceback
$PY - $D/arduino_KeywordSpotting.pte "$T/flip.pte" <<'PYEOF' >"$T/flips"
import random, subprocess, sys
src = open(sys.argv[1], "rb").read()
rng = random.Random(49)
for i in range(200):
    d = bytearray(src)
    for _ in range(rng.randint(1, 8)):
        d[rng.randrange(len(d) // 3)] = rng.randrange(256)
    open(sys.argv[2], "wb").write(d)
    r = subprocess.run(["python3", "-m", "memplan", "import-pte", sys.argv[2], "-o", "/dev/null"],
                       capture_output=True, env={"PYTHONPATH": "python", "PATH": "/usr/bin:/bin"})
    err = r.stderr.decode()
    print(r.returncode, "Traceback" in err, err.strip().splitlines()[-1][:100] if err.strip() else "")
PYEOF
grep -c "True" "$T/flips" | grep -qx 0 && ok || bad "flips: a traceback: $(grep True "$T/flips" | head -2)"
awk '$1 != 0 && $1 != 2' "$T/flips" | grep -q . && bad "flips: $(awk '$1 != 0 && $1 != 2' "$T/flips" | head -2)" || ok
echo "artifacts: refused $(awk '$1 == 2' "$T/flips" | wc -l) of 200 flipped files, read $(awk '$1 == 0' "$T/flips" | wc -l)"

# the campaign's findings, replayed; and a short campaign of its own
# (fixed seed: the same 300 cases every run)
for f in corpus/artifacts/regressions/*.pte corpus/artifacts/regressions/*.tflite; do
    [ -e "$f" ] || continue
    case "$f" in *.pte) k=pte ;; *) k=tflite ;; esac
    "$M" import-$k "$f" -o "$T/r.mpg" 2>"$T/err"; rc=$?
    { [ $rc = 0 ] || [ $rc = 2 ]; } && ! grep -q Traceback "$T/err" && ok || bad "$f: exit $rc $(tail -1 "$T/err")"
done
$PY fuzz/artifacts/campaign.py --cases 300 --seed 7 --out "$T/findings" $D/add.pte $D/ModuleLinear-no-constant-segment.pte \
    corpus/artifacts/tflite/test_conv_model.tflite >"$T/c" 2>&1 && ok || bad "campaign: $(cat "$T/c"; cat "$T"/findings/*.txt 2>/dev/null | tail -3)"

echo "artifacts: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
