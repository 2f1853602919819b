#!/bin/sh
# The layer picture of docs/architecture.md holds: every include is one a
# folder may make (tools/layers.py), no object calls into a folder above
# its own (nm), no two object files call each other in a loop, every SQL statement and sqlite3.h live in store/, the
# planner table is the one list of planners.
set -u
. tests/cli/common.inc
PY=$(command -v python3 || echo /usr/bin/python3)
B=${BUILD:-build}

"$PY" tools/layers.py check-includes >"$T/out" 2>&1 && ok || { bad "includes"; cat "$T/out"; }
"$PY" tools/layers.py check-cycles "$B/obj" >"$T/out" 2>&1 && ok || { bad "call loops"; cat "$T/out"; }
"$PY" tools/layers.py check-calls "$B/obj" >"$T/out" 2>&1 && ok || { bad "calls up"; cat "$T/out"; }
# no function over 60 lines, in any C file of the project
# shellcheck disable=SC2046
"$PY" tools/layers.py check-functions 60 $(git ls-files '*.c' 2>/dev/null || find . -name '*.c') \
    >"$T/out" 2>&1 && ok || { bad "long functions"; cat "$T/out"; }
# the checkers themselves: a call up, a loop and a long function are caught
mkdir -p "$T/up/core" "$T/up/api"
printf 'const char *mp_algo_name(unsigned);\nconst char *x(void) { return mp_algo_name(0); }\n' >"$T/x.c"
printf 'const char *mp_algo_name(unsigned a) { return a ? "b" : "a"; }\n' >"$T/y.c"
${CC:-cc} -c "$T/x.c" -o "$T/up/core/export.o" && ${CC:-cc} -c "$T/y.c" -o "$T/up/api/planners.o"
"$PY" tools/layers.py check-calls "$T/up" >"$T/out" 2>&1 && bad "a call up went unseen" || ok
grep -q 'core/export.o uses mp_algo_name of api/planners.o' "$T/out" && ok || bad "call-up report: $(cat "$T/out")"
mkdir -p "$T/loop/x"
printf 'int b(void);\nint a(void) { return b(); }\n' >"$T/a.c"
printf 'int a(void);\nint b(void) { return a(); }\n' >"$T/b.c"
${CC:-cc} -c "$T/a.c" -o "$T/loop/x/a.o" && ${CC:-cc} -c "$T/b.c" -o "$T/loop/x/b.o"
"$PY" tools/layers.py check-cycles "$T/loop" >"$T/out" 2>&1 && bad "a loop went unseen" || ok
grep -q 'x/a.o x/b.o' "$T/out" && ok || bad "loop report: $(cat "$T/out")"
{ printf 'static int\nlong_one(int x,\n         int y) {\n'; i=0; while [ $i -lt 60 ]; do echo "    x += y;"; i=$((i + 1)); done
  printf '    return x;\n}\n'; } >"$T/long.c"
"$PY" tools/layers.py check-functions 60 "$T/long.c" >"$T/out" 2>&1 && bad "a long function went unseen" || ok
grep -q 'long_one is 65 lines' "$T/out" && ok || bad "long function report: $(cat "$T/out")"

grep -rln 'sqlite3' --include='*.c' --include='*.h' core ref opt peers verify api harness viz cli include \
    | grep -v '^store/' >"$T/out"
[ -s "$T/out" ] && bad "SQLite outside store: $(cat "$T/out")" || ok
grep -rlnE '"(SELECT|INSERT|CREATE|UPDATE|DELETE) ' --include='*.c' core ref opt peers verify api harness viz cli \
    | grep -v '^store/' >"$T/out"
[ -s "$T/out" ] && bad "SQL outside store: $(cat "$T/out")" || ok
# planners are named in one table only: no list of names elsewhere
grep -rn '"greedy", *"naive"\|"naive", *"opt"' --include='*.c' core ref opt peers verify api store harness viz cli \
    >"$T/out"
[ -s "$T/out" ] && bad "a list of planners outside the table: $(cat "$T/out")" || ok
"$M" plan --help >"$T/out"
for p in greedy naive opt tflm bestfit; do grep -q "^  $p " "$T/out" && ok || bad "plan --help lacks $p"; done

echo "architecture: $pass passed, $fail failed"
[ "$fail" = 0 ]
