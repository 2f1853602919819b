#!/bin/sh
# memplan export: MiniMalloc's CSV reads back (import-csv) as the same
# problem and its offsets are a valid solution; JSON parses and carries
# every allocation with its operator; TFLite Micro's offline buffer is
# [1, 1, n, offsets or -1] in little-endian int32.
set -u
. tests/cli/common.inc
PY=/usr/bin/python3
CSV=bench/data/minimalloc/A.1048576.csv

# --- minimalloc-csv: round trip through import-csv
"$M" import-csv "$CSV" -o "$T/a.mpg" && "$M" plan --alignment 1 -o "$T/a.mpp" "$T/a.mpg" && ok || bad "import and plan"
expect_rc 0 "$M" export --format minimalloc-csv -o "$T/a.csv" "$T/a.mpg" "$T/a.mpp"
head -1 "$T/a.csv" | grep -qx "id,lower,upper,size,offset" && ok || bad "CSV header: $(head -1 "$T/a.csv")"
problem() { $PY -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(sorted((int(x["lower"]),int(x["upper"]),int(x["size"])) for x in r))' "$1"; }
[ "$(problem "$T/a.csv")" = "$(problem "$CSV")" ] && ok || bad "the exported CSV is not the imported problem"
"$M" import-csv "$T/a.csv" -o "$T/b.mpg" && "$M" plan --alignment 1 -o "$T/b.mpp" "$T/b.mpg" &&
    "$M" export --format minimalloc-csv -o "$T/b.csv" "$T/b.mpg" "$T/b.mpp" && ok || bad "re-import"
[ "$(problem "$T/b.csv")" = "$(problem "$T/a.csv")" ] && ok || bad "import-csv of the export is another problem"
# the offsets solve it: rows live together never share bytes, all fit
$PY - "$T/a.csv" "$(sed -n 's/^buffers 0 //p' "$T/a.mpp" | head -1)" >"$T/check" <<'P'
import csv, sys
r = [{k: (v if k == "id" else int(v)) for k, v in x.items()} for x in csv.DictReader(open(sys.argv[1]))]
cap = int(sys.argv[2])
bad = [(a["id"], b["id"]) for i, a in enumerate(r) for b in r[i + 1:]
       if a["lower"] < b["upper"] and b["lower"] < a["upper"]
       and a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]]
print("ok" if not bad and all(x["offset"] + x["size"] <= cap for x in r) else "bad %s" % bad[:3])
P
[ "$(cat "$T/check")" = ok ] && ok || bad "exported offsets: $(cat "$T/check")"
# an in-place family is one row (its base's bytes, the hull of its lives)
"$M" plan --algo greedy -o "$T/m.mpp" corpus/examples/model.mpg
"$M" export --format minimalloc-csv -o "$T/m.csv" corpus/examples/model.mpg "$T/m.mpp"
fam=$(awk '/^graph /{g++} g == 1 && /inplace=/' corpus/examples/model.mpg | wc -l)
want=$(($(awk '/^graph /{g++} g == 1 && /^alloc .* mem_id=1 /' "$T/m.mpp" | wc -l) - fam))
[ "$(($(wc -l <"$T/m.csv") - 1))" = "$want" ] && ok || bad "rows $(($(wc -l <"$T/m.csv") - 1)), want $want"

# --- json
cat >"$T/op.mpg" <<'G'
memplan-graph 1
graph main
tensor x 100
tensor w 64 const
tensor y 100
node placeholder out=x
node placeholder out=w
node call op=aten.linear.default in=x,w out=y
node output in=y
end
G
"$M" plan -o "$T/op.mpp" "$T/op.mpg"
expect_rc 0 "$M" export --format json -o "$T/op.json" "$T/op.mpg" "$T/op.mpp"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); t={x["name"]: x for b in d["blocks"] for x in b["tensors"]}
assert set(t) == {"x", "y"}, t
assert t["y"]["op"] == "aten.linear.default" and t["x"]["op"] is None
assert t["y"]["lifetime"] == [2, 3] and t["y"]["size"] == 112 and t["y"]["mem_id"] == 1
print("ok")' "$T/op.json" >"$T/j" 2>&1
[ "$(cat "$T/j")" = ok ] && ok || bad "json: $(cat "$T/j")"

# --- tflm-offline
expect_rc 0 "$M" export --format tflm-offline -o "$T/op.bin" "$T/op.mpg" "$T/op.mpp"
words=$(od -An -v -td4 "$T/op.bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
xo=$(sed -n 's/^alloc x .*offset=\([0-9]*\).*/\1/p' "$T/op.mpp"); yo=$(sed -n 's/^alloc y .*offset=\([0-9]*\).*/\1/p' "$T/op.mpp")
[ "$words" = "1 1 3 $xo -1 $yo" ] && ok || bad "tflm words '$words', want '1 1 3 $xo -1 $yo'"
[ "$(wc -c <"$T/op.bin")" -eq 24 ] && ok || bad "tflm size"
# one arena only: a tensor in pool 2 cannot be said
sed 's/^tensor y 100$/tensor y 100 mem_id=2/' "$T/op.mpg" >"$T/pool.mpg"
"$M" plan -o "$T/pool.mpp" "$T/pool.mpg"
expect_rc 2 "$M" export --format tflm-offline -o "$T/d.bin" "$T/pool.mpg" "$T/pool.mpp"
grep -q "tensor 'y' is in buffer 2" "$T/err" && ok || bad "tflm pool refusal: $(cat "$T/err")"
[ ! -e "$T/d.bin" ] && ok || bad "a refused export wrote its output"
# a buffer the plan does not have, or another than the arena: refused
# with the range (1.8.0 wrote an empty file, exit 0; issue 46)
expect_rc 2 "$M" export --format minimalloc-csv --buffer 4 -o "$T/e.csv" "$T/op.mpg" "$T/op.mpp"
grep -q "no buffer 4: the plan's entry graph has buffers 1 to 1" "$T/err" && [ ! -e "$T/e.csv" ] && ok ||
    bad "csv --buffer 4: $(cat "$T/err")"
expect_rc 2 "$M" export --format tflm-offline --buffer 7 -o "$T/e.bin" "$T/op.mpg" "$T/op.mpp"
grep -q "no buffer 7: TFLite Micro's offline plan is of buffer 1" "$T/err" && ok || bad "tflm --buffer 7: $(cat "$T/err")"
# several graphs: TFLite Micro counts every subgraph's tensors; refused
# with the reason (1.8.0 wrote the entry graph's 13 of them)
"$M" plan -o "$T/model.mpp" corpus/examples/model.mpg
expect_rc 2 "$M" export --format tflm-offline -o "$T/e.bin" corpus/examples/model.mpg "$T/model.mpp"
grep -q "the program has 4 graphs" "$T/err" && [ ! -e "$T/e.bin" ] && ok || bad "tflm of 4 graphs: $(cat "$T/err")"
expect_rc 2 "$M" export --format bogus "$T/op.mpg" "$T/op.mpp"
expect_rc 2 "$M" export "$T/op.mpg" "$T/op.mpp"

echo "export: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
