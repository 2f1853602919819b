#!/bin/sh
# The library as a user gets it: make install (PREFIX, DESTDIR) and make
# uninstall, pkg-config for the shared and the static link, a program
# built against the installed header that plans through the builder, the
# shared library's SONAME, exported symbols and dependencies, and header
# tracking (touching one header rebuilds only what includes it).
set -u
. tests/cli/common.inc
CC=${CC:-cc}
J="make --no-print-directory -s -j2 B=$T/b CC=$CC CFLAGS=-O1"

# install into a prefix; the build of the library is a plain one
$J install PREFIX="$T/inst" >"$T/log" 2>&1 && ok || { bad "make install"; cat "$T/log"; }
for f in bin/memplan include/memplan.h lib/libmemplan.a lib/libmemplan.so lib/libmemplan.so.2 \
    lib/pkgconfig/memplan.pc; do
    [ -e "$T/inst/$f" ] && ok || bad "not installed: $f"
done
[ "$(ls "$T/inst/include")" = memplan.h ] && ok || bad "installed headers beside memplan.h: $(ls "$T/inst/include")"
# the Python package, installed beside the library, finds it there
PY=${PYTHON:-/usr/bin/python3}
(cd "$T" && env -u MEMPLAN_LIBRARY PYTHONPATH="$T/inst/lib/python3/dist-packages" "$PY" -c \
    'import memplan, sys; p = memplan.load(sys.argv[1]); print(memplan.version(), memplan.plan(p).total_bytes)' \
    "$OLDPWD/corpus/examples/chain.mpg") >"$T/py" 2>&1 && grep -q "^2\.[0-9]*\.[0-9]* [1-9][0-9]*$" "$T/py" &&
    ok || bad "the installed Python package: $(cat "$T/py")"

cat >"$T/use.c" <<'C'
#include <memplan.h>
#include <stdio.h>
#include <string.h>
/* interface 2: handles and accessors only */
int main(void) {
    mp_err err;
    mp_builder *b = mp_builder_new(&err);
    mp_builder_graph(b, "main", &err);
    const char *names[] = {"x", "y"};
    for (int i = 0; i < 2; i++) {
        mp_tensor_spec t = {.struct_size = sizeof t, .name = names[i], .size = 100};
        mp_builder_tensor(b, &t, &err);
    }
    mp_node_spec n[3] = {{sizeof n[0], MP_NODE_PLACEHOLDER, NULL, 0, names, 1, {0, 0}, 0, 0, 0},
                         {sizeof n[0], MP_NODE_CALL, names, 1, names + 1, 1, {0, 0}, 0, 0, 0},
                         {sizeof n[0], MP_NODE_OUTPUT, names + 1, 1, NULL, 0, {0, 0}, 0, 0, 0}};
    for (int i = 0; i < 3; i++) mp_builder_node(b, &n[i], &err);
    mp_program *p = mp_builder_finish(b, &err);
    mp_builder_free(b);
    if (!p) { fprintf(stderr, "%s\n", err.msg); return 1; }
    mp_options *o = mp_options_new(&err);
    if (!o || mp_options_set(o, "alignment", "16", &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    mp_plan *plan = mp_plan_program(p, o, &err);
    mp_report *r = plan ? mp_verify_plan(p, plan, &err) : NULL;
    printf("memplan %s: %s, %llu bytes, %s at %llu\n", mp_version(), mp_report_valid(r) ? "valid" : "invalid",
           (unsigned long long)mp_plan_total_bytes(plan), mp_plan_alloc_name(plan, 0, 0),
           (unsigned long long)mp_plan_alloc_get(plan, 0, 0, MP_ALLOC_OFFSET));
    int rc = mp_report_valid(r) ? 0 : 1;
    mp_report_free(r);
    mp_options_free(o);
    mp_plan_free(plan);
    mp_program_free(p);
    return rc;
}
C
# the installed header alone, as C99 with pedantic errors and as C++11
printf '#include <memplan.h>\nint main(void) { return mp_version() == 0; }\n' >"$T/h.c"
cp "$T/h.c" "$T/h.cc"
$CC -std=c99 -pedantic-errors -Wall -Wextra -Werror -I"$T/inst/include" -fsyntax-only "$T/h.c" 2>"$T/err" \
    && ok || { bad "memplan.h is not C99"; cat "$T/err"; }
clang++ -std=c++11 -pedantic-errors -Wall -Werror -I"$T/inst/include" -fsyntax-only "$T/h.cc" 2>"$T/err" \
    && ok || { bad "memplan.h is not C++11"; cat "$T/err"; }
export PKG_CONFIG_PATH="$T/inst/lib/pkgconfig"
# shellcheck disable=SC2046
$CC -o "$T/use" "$T/use.c" $(pkg-config --cflags --libs memplan) 2>"$T/err" && ok || { bad "shared link"; cat "$T/err"; }
expect_rc 0 env LD_LIBRARY_PATH="$T/inst/lib" "$T/use"
grep -q "^memplan 2\.[0-9]*\.[0-9]*: valid, 224 bytes, [xy] at [0-9]*$" "$T/out" && ok || bad "use: $(cat "$T/out")"
# shellcheck disable=SC2046
$CC -static -o "$T/use-static" "$T/use.c" $(pkg-config --static --cflags --libs memplan) 2>"$T/err" \
    && ok || { bad "static link"; cat "$T/err"; }
expect_rc 0 "$T/use-static"
so="$T/inst/lib/libmemplan.so.2"
readelf -d "$so" | grep -q 'SONAME.*\[libmemplan\.so\.2\]' && ok || bad "SONAME"
readelf -d "$so" | grep NEEDED | grep -q sqlite && bad "the library needs SQLite" || ok
pkg-config --static --libs memplan | grep -q sqlite && bad "memplan.pc asks for SQLite" || ok
nm -D --defined-only "$so" | awk '{print $3}' >"$T/syms"
grep -qv '^mp_' "$T/syms" && bad "exported without the prefix: $(grep -v '^mp_' "$T/syms" | head -3)" || ok
grep -qx 'mp_xmalloc\|mp_opt_plan\|mp_pk_solve\|mp_ref_greedy_plan' "$T/syms" && bad "internals exported" || ok
# every function the header declares is exported, and nothing else
sed -n 's/^MP_API [^(]*[ *]\(mp_[a-z0-9_]*\)(.*/\1/p' include/memplan.h | sort >"$T/api"
[ "$(wc -l <"$T/api")" -ge 60 ] && ok || bad "declarations not read from memplan.h: $(wc -l <"$T/api")"
sort "$T/syms" | diff "$T/api" - >"$T/apidiff" && ok || bad "header and exports differ: $(tr '\n' ' ' <"$T/apidiff")"
for f in lib/libmemplan.a lib/libmemplan-tools.a; do
    [ -e "$T/b/${f#lib/}" ] || continue
    nm -g --defined-only "$T/b/${f#lib/}" | awk 'NF == 3 {print $3}' | grep -v '^mp_' >"$T/bad"
    [ -s "$T/bad" ] && bad "$f defines $(head -3 "$T/bad" | tr '\n' ' ')" || ok
done

# DESTDIR stages the same tree; uninstall removes what install wrote
$J install DESTDIR="$T/stage" PREFIX=/usr >"$T/log" 2>&1 && ok || bad "install DESTDIR"
[ -e "$T/stage/usr/lib/libmemplan.so.2" ] && grep -q '^prefix=/usr$' "$T/stage/usr/lib/pkgconfig/memplan.pc" \
    && ok || bad "DESTDIR layout"
$J uninstall DESTDIR="$T/stage" PREFIX=/usr >"$T/log" 2>&1 && ok || bad "uninstall"
[ -z "$(find "$T/stage" -type f -o -type l)" ] && ok || bad "left after uninstall: $(find "$T/stage" -type f -o -type l)"

# header tracking: a header touched rebuilds only the files that include it
sleep 1
touch peers/peers.h
$J -n "$T/b/libmemplan.a" | grep -o '[a-z_/]*\.c ' | sort -u >"$T/rebuilt"
[ "$(tr -d ' ' <"$T/rebuilt" | tr '\n' ' ')" = "api/planners.c peers/bestfit.c peers/placed.c peers/tflm.c " ] \
    && ok || bad "touching peers/peers.h rebuilds: $(cat "$T/rebuilt")"

echo "library: $pass passed, $fail failed"
[ "$fail" = 0 ]
