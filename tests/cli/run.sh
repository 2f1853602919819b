#!/bin/sh
# CLI tests: exit codes, messages, atomic output.  $MEMPLAN is the binary.
set -u
. tests/cli/common.inc

expect_rc 0 "$M" --help
expect_rc 0 "$M" plan --help
grep -q -- "--per-device" "$T/out" && ok || bad "plan --help lacks --per-device"
expect_rc 2 "$M"
expect_rc 2 "$M" frobnicate
expect_rc 2 "$M" plan
expect_rc 2 "$M" plan --bogus corpus/examples/chain.mpg
expect_rc 2 "$M" plan --alignment 0 corpus/examples/chain.mpg
expect_rc 2 "$M" plan --alignment x corpus/examples/chain.mpg
expect_rc 2 "$M" plan --algo best corpus/examples/chain.mpg
expect_rc 2 "$M" plan "$T/missing.mpg"
expect_rc 0 "$M" plan corpus/examples/chain.mpg
grep -q '^memplan-plan 1$' "$T/out" && ok || bad "plan output lacks header"
expect_rc 0 "$M" plan --algo=naive --alignment=32 corpus/examples/chain.mpg
grep -q 'alignment=32 .*algo=naive' "$T/out" && ok || bad "options line"

# a broken file: FILE:LINE: message, exit 2, no output file
printf 'memplan-graph 1\ngraph g\ntensor x 4 bogus\n' >"$T/broken.mpg"
expect_rc 2 "$M" plan -o "$T/p.mpp" "$T/broken.mpg"
grep -q "broken.mpg:3: unknown tensor attribute 'bogus'" "$T/err" && ok || bad "message: $(cat "$T/err")"
[ ! -e "$T/p.mpp" ] && ok || bad "partial output left behind"
[ -z "$(ls "$T" | grep tmp)" ] && ok || bad "temporary file left behind"

# a graph that cannot be planned: exit 3, the old output kept intact
printf 'old\n' >"$T/p.mpp"
printf 'memplan-graph 1\ngraph g\ntensor a 4 inplace=b\ntensor b 4 inplace=a\nnode placeholder out=a\nnode call in=a out=b\nnode output in=b\nend\n' >"$T/cycle.mpg"
expect_rc 3 "$M" plan -o "$T/p.mpp" "$T/cycle.mpg"
[ "$(cat "$T/p.mpp")" = old ] && ok || bad "output file changed on failure"
expect_rc 3 "$M" plan --et-exact -o "$T/p.mpp" "$T/cycle.mpg"

# -o writes the same bytes as stdout
"$M" plan corpus/examples/chain.mpg >"$T/a.mpp"
"$M" plan -o "$T/b.mpp" corpus/examples/chain.mpg
cmp -s "$T/a.mpp" "$T/b.mpp" && ok || bad "-o differs from stdout"

# replay every corpus graph with its recorded plan(s)
for f in corpus/*/*.mpg; do
    for exp in "${f%.mpg}".*.mpp; do
        [ -e "$exp" ] || continue
        # options are in the first line of the expected plan's sibling .args
        args_file="${exp%.mpp}.args"
        args=""
        [ -e "$args_file" ] && args=$(cat "$args_file")
        # shellcheck disable=SC2086
        "$M" plan $args "$f" >"$T/got.mpp" 2>"$T/err"
        if cmp -s "$T/got.mpp" "$exp"; then ok; else bad "replay $exp ($args)"; diff "$exp" "$T/got.mpp" | head -20; fi
    done
done

# record-campaign: a campaign row the report shows; bad input changes nothing
C="--target planners --engine libfuzzer --executions 1234 --corpus-size 56 --coverage 789 --crashes 1"
# shellcheck disable=SC2086
expect_rc 0 "$M" record-campaign --db "$T/camp.db" --seconds 2 $C
# shellcheck disable=SC2086
expect_rc 2 "$M" record-campaign --db "$T/camp.db" --seconds -3 $C
grep -q "bad value '-3' for --seconds" "$T/err" && ok || bad "record-campaign message: $(cat "$T/err")"
expect_rc 2 "$M" record-campaign --db "$T/camp.db" --target planners --engine gdb --seconds 2
expect_rc 0 "$M" record-campaign --db "$T/camp.db" --target plan --engine libfuzzer-nosan --seconds 4 \
    --executions 8000 --corpus-size 5 --coverage 6 --crashes 0
expect_rc 0 "$M" report --db "$T/camp.db" --format csv
[ "$(grep -c ',planners,libfuzzer,2.0,1234,617,56,789,1$' "$T/out")" = 1 ] && ok ||
    bad "report lacks the one campaign: $(cat "$T/out")"
grep -q ',plan,libfuzzer-nosan,4.0,8000,2000,5,6,0$' "$T/out" && ok ||
    bad "report lacks the campaign without sanitizers: $(cat "$T/out")"

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
