#!/bin/sh
# seeds_hostile.sh MEMPLAN OUTDIR - seed material for the targets of
# issue 45's hostile inputs (docs/fuzzing.md), named by their SHA-1 as
# corpus/ names its files:
#   OUTDIR/shard     a selector byte, then a shard database: two clean
#                    shards and tests/cli/hostile_store.sh's forgeries
#   OUTDIR/external  an exit byte, then a planner's output: valid plans of
#                    the fixed program, the same with a NUL and garbage,
#                    refusals, signals, nothing
#   OUTDIR/pyapi     two bytes N, a mode byte, then a graph: each example
#                    graph with the allocator failing at 0 (never), 3, 40
#                    and 400, and the builder's mode
set -eu
[ $# = 2 ] || { echo "usage: $0 MEMPLAN OUTDIR" >&2; exit 2; }
M=$1 out=$2
PY=/usr/bin/python3
mkdir -p "$out/shard" "$out/external" "$out/pyapi"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep() { # DIR FILE: FILE into DIR under its SHA-1
    cp "$2" "$1/$(sha1sum "$2" | cut -c1-40)"
}
prefix() { # BYTE(octal) FILE OUT
    { printf "\\$1"; cat "$2"; } >"$3"
}

# shard: two shards of a run, clean and forged
H="--seed 5 --count 4 --algos greedy,opt --quiet --no-shrink --failures $tmp/f"
"$M" harness $H --shard 0/2 --db "$tmp/s0.db" >/dev/null 2>&1 || true
"$M" harness $H --shard 1/2 --db "$tmp/s1.db" >/dev/null 2>&1 || true
for k in 0 1; do
    $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA journal_mode=DELETE'); c.execute('VACUUM')" "$tmp/s$k.db"
done
prefix 001 "$tmp/s1.db" "$tmp/clean"; keep "$out/shard" "$tmp/clean"
prefix 000 "$tmp/s0.db" "$tmp/clean"; keep "$out/shard" "$tmp/clean"
i=0
while IFS= read -r forge; do
    i=$((i + 1))
    cp "$tmp/s1.db" "$tmp/x$i.db"
    $PY -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit(); c.execute('VACUUM')" "$tmp/x$i.db" "$forge"
    prefix 001 "$tmp/x$i.db" "$tmp/forged"; keep "$out/shard" "$tmp/forged"
done <<'F'
UPDATE runs SET shards=4294967295, shard=1000000
UPDATE runs SET shards=1000000, shard=1
UPDATE runs SET count='six'
UPDATE results SET total_bytes=x'00ff' WHERE rowid=1
UPDATE results SET algo='naive' WHERE algo='greedy'
ALTER TABLE runs RENAME TO r0; CREATE VIEW runs AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT r0.* FROM r0, c
CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM results; END
ALTER TABLE results ADD COLUMN g INTEGER GENERATED ALWAYS AS (1) VIRTUAL
UPDATE runs SET started='2099-01-01T00:00:00Z', host=''
F

# external: plans of the fixed program (fuzz/fuzz.h), with exit bytes
cat >"$tmp/fixed.mpg" <<'G'
memplan-graph 1
graph main
tensor x 40
tensor w 64 const
tensor kv 32 mutable
tensor a 40
tensor b 24 dynamic
tensor v 40 view=a
tensor c 40 inplace=a
tensor y 16 device=cuda:0
node placeholder out=x
node placeholder out=w
node placeholder out=kv
node call in=x,w out=a
node call in=a,kv out=b
node call in=v,b out=c
node cond in=c,c out=y true=T false=F
node output in=y
end
graph T
tensor p 40
tensor q 16
node placeholder out=p
node call in=p out=q
node output in=q
end
graph F
tensor p 40
tensor r 16
node placeholder out=p
node call in=p out=r
node output in=r
end
G
for a in opt greedy naive; do
    "$M" plan --algo $a "$tmp/fixed.mpg" -o "$tmp/p-$a.mpp" 2>/dev/null || continue
    prefix 040 "$tmp/p-$a.mpp" "$tmp/e"; keep "$out/external" "$tmp/e"
    { printf '\040'; cat "$tmp/p-$a.mpp"; printf 'x\000garbage\n'; } >"$tmp/e"; keep "$out/external" "$tmp/e"
done
for b in 000 001 010 014 240 310 377; do
    prefix $b "$tmp/p-opt.mpp" "$tmp/e"; keep "$out/external" "$tmp/e"
done

# pyapi: the example graphs under failing allocators, and the builder
for g in corpus/examples/*.mpg; do
    [ "$(wc -c <"$g")" -le 4000 ] || continue
    for n in '\000\000' '\000\003' '\000\050' '\001\220'; do
        { printf "$n\\000"; cat "$g"; } >"$tmp/py"; keep "$out/pyapi" "$tmp/py"
        { printf "$n\\022"; cat "$g"; } >"$tmp/py"; keep "$out/pyapi" "$tmp/py"
    done
done
for n in '\000\000' '\000\007' '\000\060'; do
    printf "$n\\200\\006\\004\\001\\010\\000\\020\\003" >"$tmp/py"; keep "$out/pyapi" "$tmp/py"
done
