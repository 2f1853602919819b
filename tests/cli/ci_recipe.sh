#!/bin/sh
# docs/ci.md, followed as written on a clean machine: its four blocks (install
# from a clone of this repository's HEAD, baseline, three shards, merge +
# report + gate) run in an empty folder with a fresh HOME and a PATH without
# this build; the gate passes.  Then the project's planner gets worse and the
# same recipe fails the gate (exit 1) naming its rows; the report is written
# either way.
set -u
. tests/cli/common.inc
ROOT=$(pwd)
command -v git >/dev/null || { echo "ci_recipe: git is required"; exit 1; }

# the blocks after each <!-- ci-step: NAME --> marker, as they are
step() { awk -v want="$1" '/^<!-- ci-step: / {on = ($3 == want); next} on && /^```sh$/ {inb = 1; next}
    inb && /^```$/ {inb = 0; on = 0; next} inb {print}' docs/ci.md; }
for s in install baseline shard gate; do
    step $s >"$T/$s.sh"
    [ -s "$T/$s.sh" ] && ok || bad "docs/ci.md has no '$s' block"
done

mkdir -p "$T/home" "$T/work"
cat >"$T/work/my-planner" <<'EOF'
#!/bin/sh
# the project's own planner (here: one of memplan's peers)
exec memplan plan --algo bestfit -o - "$@"
EOF
chmod +x "$T/work/my-planner"
cat >"$T/recipe.sh" <<EOF
set -e
. "$T/install.sh"
command -v memplan | grep -q "^$T/home/.local/bin/memplan\$"
. "$T/baseline.sh"
N=3
for K in 0 1 2; do . "$T/shard.sh"; done
. "$T/gate.sh"
EOF
run_recipe() {
    (cd "$T/work" && env -i HOME="$T/home" PATH=/usr/bin:/bin MEMPLAN_GIT="$ROOT" \
        MEMPLAN_REF="$(git -C "$ROOT" rev-parse HEAD)" \
        HARNESS="--seed 2 --count 12 --algos greedy,opt --planner mine=./my-planner" \
        sh "$T/recipe.sh") >"$T/out" 2>"$T/err"
}
run_recipe; rc=$?
[ $rc -eq 0 ] && ok || { bad "the recipe failed (exit $rc)"; tail -5 "$T/err" "$T/out"; }
grep -q "^merge: 3 shards, 12 graphs, 36 rows" "$T/out" && ok || bad "merge: $(grep merge "$T/out")"
grep -q "^gate: passed" "$T/out" && ok || bad "gate: $(tail -2 "$T/out")"
grep -q "<h1>memplan metrics report</h1>" "$T/work/memplan-out/memplan-report.html" && ok || bad "no HTML report"
grep -q "mine" "$T/work/memplan-out/memplan-report.txt" && ok || bad "the report lacks the project's planner"

# the planner gets worse: the same recipe (a fresh clone, the committed baseline) fails the gate
sed -i 's/--algo bestfit/--algo naive/' "$T/work/my-planner"
rm -rf "$T/work/memplan-src" "$T/work"/shard-*.db "$T/work/memplan-out"
sed -i '/baseline.sh/d' "$T/recipe.sh"
run_recipe; rc=$?
[ $rc -eq 1 ] && ok || bad "a worse planner: exit $rc, want 1"
grep -q "^more-bytes .* mine " "$T/out" && grep -q "^gate: FAILED" "$T/out" && ok || bad "gate: $(tail -3 "$T/out")"
[ -s "$T/work/memplan-out/memplan-report.html" ] && ok || bad "no report when the gate fails"

echo "ci_recipe: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
