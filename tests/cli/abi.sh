#!/bin/sh
# The shared library keeps the promise of its SONAME (tools/abi_check.sh,
# abidiff from Debian's abigail-tools): the built libmemplan against the
# dump committed for its SONAME, and the check's policy on two-line
# libraries of our own: a public struct that grows, a function removed and
# a new SONAME without its dump are refused; a function added is fine.
set -u
. tests/cli/common.inc
B=${BUILD:-build}
command -v abidiff >/dev/null && command -v abidw >/dev/null && ok || { bad "abigail-tools missing"; exit 1; }
lib=$B/libmemplan.so.$(sed -n "s/^#define MP_VERSION_MAJOR //p" include/memplan.h)
expect_rc 0 sh tools/abi_check.sh "$lib" tools/abi include
grep -q "keeps the interface of libmemplan.so.2" "$T/out" && ok || bad "abi_check: $(cat "$T/out")"

CC=${CC:-cc}
mk() { # mk NAME SONAME SOURCE: a small shared library with debug info
    printf '%s\n' "$3" >"$T/$1.c"
    $CC -g -shared -fPIC -Wl,-soname,"$2" -o "$T/$1.so" "$T/$1.c"
}
V='__attribute__((visibility("default")))'
mk v1 libt.so.1 "struct s { int a; }; $V int f(struct s *x) { return x->a; }"
mkdir -p "$T/dumps" && abidw --no-corpus-path --out-file "$T/dumps/libt.so.1.abi" "$T/v1.so" && ok || bad "abidw"
mk grown libt.so.1 "struct s { int a; long b; }; $V int f(struct s *x) { return x->a + (int)x->b; }"
mk added libt.so.1 "struct s { int a; }; $V int f(struct s *x) { return x->a; } $V int g(void) { return 1; }"
mk removed libt.so.1 "struct s { int a; }; $V int g(struct s *x) { return x->a; }"
mk major libt.so.2 "struct s { int a; long b; }; $V int f(struct s *x) { return x->a + (int)x->b; }"
expect_rc 0 sh tools/abi_check.sh "$T/v1.so" "$T/dumps" "$T"
expect_rc 1 sh tools/abi_check.sh "$T/grown.so" "$T/dumps" "$T"
grep -q "breaks the interface of libt.so.1" "$T/err" && ok || bad "grown: $(cat "$T/err")"
expect_rc 0 sh tools/abi_check.sh "$T/added.so" "$T/dumps" "$T"
grep -q "1 functions added" "$T/out" && ok || bad "added: $(cat "$T/out")"
expect_rc 1 sh tools/abi_check.sh "$T/removed.so" "$T/dumps" "$T"
expect_rc 1 sh tools/abi_check.sh "$T/major.so" "$T/dumps" "$T"
grep -q "no ABI dump for libt.so.2" "$T/err" && ok || bad "major: $(cat "$T/err")"
# a struct that carries its size (sized-structs.suppr) may grow at its
# end, not in the middle; other structs still may not grow
mk s1 libu.so.1 "typedef struct mp_tensor_spec { unsigned struct_size; int a; } mp_tensor_spec; $V int f(const mp_tensor_spec *x) { return x->a; }"
mkdir -p "$T/d2" && abidw --no-corpus-path --out-file "$T/d2/libu.so.1.abi" "$T/s1.so" && cp tools/abi/sized-structs.suppr "$T/d2/"
mk s_end libu.so.1 "typedef struct mp_tensor_spec { unsigned struct_size; int a; long b; } mp_tensor_spec; $V int f(const mp_tensor_spec *x) { return x->a; }"
mk s_mid libu.so.1 "typedef struct mp_tensor_spec { unsigned struct_size; long b; int a; } mp_tensor_spec; $V int f(const mp_tensor_spec *x) { return x->a; }"
expect_rc 0 sh tools/abi_check.sh "$T/s_end.so" "$T/d2" "$T"
expect_rc 1 sh tools/abi_check.sh "$T/s_mid.so" "$T/d2" "$T"
mk s_type libu.so.1 "typedef struct mp_tensor_spec { unsigned struct_size; long a; } mp_tensor_spec; $V int f(const mp_tensor_spec *x) { return (int)x->a; }"
mk s_gone libu.so.1 "typedef struct mp_tensor_spec { unsigned struct_size; } mp_tensor_spec; $V int f(const mp_tensor_spec *x) { return (int)x->struct_size; }"
expect_rc 1 sh tools/abi_check.sh "$T/s_type.so" "$T/d2" "$T"
expect_rc 1 sh tools/abi_check.sh "$T/s_gone.so" "$T/d2" "$T"
rm "$T/d2/sized-structs.suppr"
expect_rc 1 sh tools/abi_check.sh "$T/s_end.so" "$T/d2" "$T"
echo "abi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
