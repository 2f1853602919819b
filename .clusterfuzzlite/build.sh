#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: the same targets as make fuzz
# (fuzz/fuzz_<target>.c), built with the infrastructure's compiler, flags
# (sanitizer, -fsanitize=fuzzer-no-link or AFL++ instrumentation) and
# engine ($LIB_FUZZING_ENGINE).  Each fuzzer gets its dictionary, its
# [libfuzzer] options and a seed corpus (corpus/<target>/, crash inputs
# left out: they are regression tests, replayed by `make test`).
cd "$SRC/memplan"
B=build/oss
# the library through the project's own Makefile; the infrastructure's
# newer clang may warn where ours does not, so warnings are not errors here
make -j"$(nproc)" B=$B CC="$CC" CFLAGS="$CFLAGS" EXTRA_CFLAGS="-Wno-error" $B/libmemplan.a $B/libmemplan-tools.a
INC="-std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Icore -Iref -Iopt -Ipeers -Iverify -Iviz -Icli -Ifuzz"
$CC $CFLAGS $INC -c fuzz/brute.c -o $B/brute.o
for t in parse planners plan verify planfile csv baseline shapes store; do
    $CC $CFLAGS $INC -c "fuzz/fuzz_$t.c" -o "$B/fuzz_$t.o"
    extra=""
    [ "$t" = verify ] && extra=$B/brute.o
    # SQLite statically: the runner image has no libsqlite3
    $CXX $CXXFLAGS $LIB_FUZZING_ENGINE "$B/fuzz_$t.o" $extra $B/libmemplan-tools.a $B/libmemplan.a \
        -Wl,-Bstatic -lsqlite3 -Wl,-Bdynamic -lpthread -ldl -lm -o "$OUT/fuzz-$t"
    [ -f "fuzz/$t.dict" ] && cp "fuzz/$t.dict" "$OUT/fuzz-$t.dict"
    if [ -f "fuzz/$t.options" ]; then
        awk '/^\[/ {keep = ($0 == "[libfuzzer]")} keep' "fuzz/$t.options" >"$OUT/fuzz-$t.options"
    fi
    if [ -d "corpus/$t" ]; then
        find "corpus/$t" -type f ! -name 'crash-*' | zip -q -j -@ "$OUT/fuzz-${t}_seed_corpus.zip"
    fi
done
