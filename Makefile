# memplan - plain make; see README.md.
#
#   make                 build/libmemplan.a and build/memplan (optimised)
#   make bench           the benchmark table (README), into results/metrics.db
#   make test            build everything again under ASan+UBSan in
#                        build/test/ and run every test (SANITIZE=0: plain)
#   make install PREFIX=/usr/local
#   make clean
#
# CC may be gcc or clang; both must build with no warning.

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?= 1

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
STD     := -std=c11 -D_POSIX_C_SOURCE=200809L
CFLAGS  ?= -O2 -g
ALL_CFLAGS = $(STD) $(WARN) -Iinclude -Isrc/util $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS  := -lsqlite3 -lm

LIB_SRC := $(wildcard src/util/*.c src/graph/*.c src/plan/*.c src/opt/*.c \
                      src/viz/*.c ref/*.c verify/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
HDRS    := $(wildcard include/*.h src/*/*.h ref/*.h verify/*.h)

# Extra test prerequisites and steps: modules (fuzz/fuzz.mk) append to these.
TEST_DEPS :=

B := build
LIB_OBJ := $(LIB_SRC:%.c=$(B)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/obj/%.o)

.PHONY: all test clean install bench FORCE
all: $(B)/libmemplan.a $(B)/memplan

GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

# the revision file changes only when the revision does
$(B)/git-rev: FORCE
	@mkdir -p $(B)
	@echo '$(GIT_REV)' | cmp -s - $@ || echo '$(GIT_REV)' > $@

$(B)/obj/src/util/version.o: src/util/version.c $(HDRS) $(B)/git-rev
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DMP_GIT_REV='"$(GIT_REV)"' -c $< -o $@

FORCE:

$(B)/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(B)/libmemplan.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/memplan: $(CLI_OBJ) $(B)/libmemplan.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(B)/libmemplan.a $(LDLIBS)

# ---------------------------------------------------------------- tests
T := build/test
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
TEST_CFLAGS := -O1 -g $(SAN_FLAGS)
TEST_SRC := $(wildcard tests/*.c)

test:
	$(MAKE) --no-print-directory B=$(T) CFLAGS="$(TEST_CFLAGS)" $(T)/memplan $(T)/unit $(TEST_DEPS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(T)/unit --jobs 2 --short-filename
	@set -e; for s in tests/cli/*.sh; do \
	  echo "== $$s"; MEMPLAN=$(T)/memplan BUILD=$(T) sh $$s; done

$(T)/unit: $(TEST_SRC) $(T)/libmemplan.a $(HDRS)
	$(CC) $(ALL_CFLAGS) -Isrc -Iref -o $@ $(TEST_SRC) $(T)/libmemplan.a -lcriterion $(LDLIBS)

# ---------------------------------------------------------------- bench
# The benchmark table (README): every algorithm side by side, recorded in
# the metrics store.  BENCH_ARGS=--max-tensors 100000 for a shorter run.
bench: $(B)/memplan
	@mkdir -p results
	$(B)/memplan bench --db results/metrics.db --data bench/data $(BENCH_ARGS)

# -------------------------------------------------------------- install
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(B)/memplan $(DESTDIR)$(PREFIX)/bin/memplan
	install -m 644 $(B)/libmemplan.a $(DESTDIR)$(PREFIX)/lib/libmemplan.a
	install -m 644 include/memplan.h $(DESTDIR)$(PREFIX)/include/memplan.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/^#define MEMPLAN_VERSION "\(.*\)"/\1/p' include/memplan.h)|g' \
	  memplan.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/memplan.pc

clean:
	rm -rf build

-include fuzz/fuzz.mk
