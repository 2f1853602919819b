# memplan - plain make; see README.md and docs/architecture.md.
#
#   make                 build/libmemplan.so.MAJOR, build/libmemplan.a (the
#                        library), build/libmemplan-tools.a (harness, store,
#                        pictures) and build/memplan (the command), optimised
#   make test            build everything again under ASan+UBSan in
#                        build/test/ and run every test (SANITIZE=0: plain)
#   make bench           the benchmark table (README), into results/metrics.db
#   make install PREFIX=/usr/local [DESTDIR=...]    make uninstall (same)
#   make clean
#
# CC may be gcc or clang; both must build with no warning.

CC      ?= cc
PREFIX  ?= /usr/local
SANITIZE ?= 1
PYTHON  ?= /usr/bin/python3

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
STD     := -std=c11 -D_POSIX_C_SOURCE=200809L
CFLAGS  ?= -O2 -g
# Library objects are position-independent (one set serves the archive and
# the shared library) and hide every symbol the API does not name (MP_API).
PIC     := -fPIC -fvisibility=hidden
INC     := -Iinclude -Icore -Iref -Iopt -Ipeers -Iverify -Iapi -Iharness -Istore -Iviz -Icli
ALL_CFLAGS = $(STD) $(WARN) $(INC) $(CFLAGS) $(EXTRA_CFLAGS)
DEPFLAGS = -MMD -MP
LIB_LDLIBS := -lm
LDLIBS  := -lsqlite3 -lm -lpthread

# The version, from the one place it is written (include/memplan.h).
VERSION_PART = $(shell sed -n 's/^\#define MP_VERSION_$(1) \([0-9]*\)$$/\1/p' include/memplan.h)
MAJOR := $(call VERSION_PART,MAJOR)
VERSION := $(MAJOR).$(call VERSION_PART,MINOR).$(call VERSION_PART,PATCH)

# The layers (docs/architecture.md), bottom up.  The library: core, the
# planners, the verifier and the API's front door.  The tools: harness,
# store and pictures, for the command line.
LIB_DIRS   := core ref opt peers verify api
TOOLS_DIRS := store harness viz
LIB_SRC   := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
TOOLS_SRC := $(foreach d,$(TOOLS_DIRS),$(wildcard $(d)/*.c))
CLI_SRC   := $(wildcard cli/*.c)
# Headers: the fuzz builds below still list them as prerequisites.
HDRS    := $(wildcard include/*.h $(foreach d,$(LIB_DIRS) $(TOOLS_DIRS) cli,$(d)/*.h))

# Extra test prerequisites and steps: modules (fuzz/fuzz.mk) append to these.
TEST_DEPS :=

B := build
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/obj/%.o)
TOOLS_OBJ := $(TOOLS_SRC:%.c=$(B)/obj/%.o)
CLI_OBJ   := $(CLI_SRC:%.c=$(B)/obj/%.o)
SONAME    := libmemplan.so.$(MAJOR)

.PHONY: all test test-python clean install uninstall bench et-record-check abi-check abi-dump FORCE
all: $(B)/libmemplan.a $(B)/$(SONAME) $(B)/libmemplan-tools.a $(B)/memplan

GIT_REV := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)

# the revision file changes only when the revision does
$(B)/git-rev: FORCE
	@mkdir -p $(B)
	@echo '$(GIT_REV)' | cmp -s - $@ || echo '$(GIT_REV)' > $@

FORCE:

$(B)/obj/store/revision.o: store/revision.c $(B)/git-rev
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -DMP_GIT_REV='"$(GIT_REV)"' -c $< -o $@

$(LIB_OBJ): $(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PIC) $(DEPFLAGS) -c $< -o $@

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/libmemplan.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The shared library: the API alone is exported (MP_API), no SQLite.
$(B)/$(SONAME): $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(SONAME) $(SO_CHECK) -o $@ $^ $(LIB_LDLIBS)
	ln -sf $(SONAME) $(B)/libmemplan.so

# every symbol resolved at link time, except under a sanitizer, whose
# runtime clang links into programs only
SO_CHECK = $(if $(findstring -fsanitize,$(CFLAGS)),,-Wl,--no-undefined)

$(B)/libmemplan-tools.a: $(TOOLS_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/memplan: $(CLI_OBJ) $(B)/libmemplan-tools.a $(B)/libmemplan.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJ) $(B)/libmemplan-tools.a $(B)/libmemplan.a $(LDLIBS)

-include $(wildcard $(B)/obj/*/*.d $(B)/obj/*/*/*.d)

# ---------------------------------------------------------------- tests
T := build/test
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
TEST_CFLAGS := -O1 -g $(SAN_FLAGS)
TEST_SRC := $(wildcard tests/unit/*.c)
TEST_INC := -Itests/unit

test:
	$(MAKE) --no-print-directory $(B)/$(SONAME) $(B)/memplan-fbverify $(FB_PY_STAMP)
	$(MAKE) --no-print-directory B=$(T) CFLAGS="$(TEST_CFLAGS)" $(T)/memplan $(T)/unit \
	  $(T)/$(SONAME) $(TEST_DEPS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(T)/unit --jobs 2 --short-filename
	MEMPLAN=$(T)/memplan BUILD=$(T) CC="$(CC)" sh tests/run_cli.sh
	$(MAKE) --no-print-directory test-python

# The Python package (python/memplan) over the optimised shared library: an
# ASan library cannot be loaded into an interpreter that is not built with
# it.  -x: test_abi.py runs first, and a layout mismatch stops everything.
test-python: $(B)/$(SONAME) $(B)/memplan
	cd python && MEMPLAN_LIBRARY=$(abspath $(B)/$(SONAME)) CC="$(CC)" \
	  $(PYTHON) -m pytest -x -q -p no:cacheprovider tests

$(T)/unit: $(TEST_SRC) $(wildcard tests/unit/*.h) $(T)/libmemplan-tools.a $(T)/libmemplan.a
	$(CC) $(ALL_CFLAGS) $(TEST_INC) -o $@ $(TEST_SRC) $(T)/libmemplan-tools.a $(T)/libmemplan.a \
	  -lcriterion $(LDLIBS)

# ---------------------------------------------------------------- bench
# The benchmark table (README): every algorithm side by side, recorded in
# the metrics store.  BENCH_ARGS=--max-tensors 100000 for a shorter run.
# Then the metrics store on a long history (1,000 runs of 1,000 cases;
# BENCH_HISTORY_ARGS="--runs 100" for a shorter one), docs/metrics.md.
# Then each stage (gen, plan, verify) as a user runs it, up to 10^6 tensors
# (BENCH_STAGES_ARGS="--max-tensors 10000000": 10^7, some 4 GiB and a
# minute).
bench: $(B)/memplan $(B)/memplan-fbverify $(FB_PY_STAMP)
	@mkdir -p results
	$(B)/memplan bench --db results/metrics.db --data bench/data $(BENCH_ARGS)
	$(B)/memplan bench --history $(BENCH_HISTORY_ARGS)
	$(B)/memplan bench --map
	$(B)/memplan bench --stages --db results/metrics.db $(BENCH_STAGES_ARGS)
	MEMPLAN=$(B)/memplan sh tools/artifacts_bench.sh corpus/artifacts/pte/*.pte corpus/artifacts/tflite/*.tflite
	MEMPLAN=$(B)/memplan sh tools/reorder_bench.sh
	MEMPLAN=$(B)/memplan sh tools/exact_j.sh

# ------------------------------------------------------------------ ABI
# The shared library against the dump of its SONAME (tools/abi_check.sh;
# make test runs it too, tests/cli/abi.sh).  abi-dump writes the dump: only
# when MP_VERSION_MAJOR is raised, for the new SONAME.
abi-check: $(B)/$(SONAME)
	sh tools/abi_check.sh $(B)/$(SONAME) tools/abi include

abi-dump: $(B)/$(SONAME)
	@test ! -e tools/abi/$(SONAME).abi || { echo "tools/abi/$(SONAME).abi exists: a released SONAME's dump never changes" >&2; exit 2; }
	abidw --headers-dir include --no-corpus-path --out-file tools/abi/$(SONAME).abi $(B)/$(SONAME)

# ------------------------------------------------- ExecuTorch's planner
# Re-record the corpus's ExecuTorch plans with ExecuTorch's own planner from
# a source checkout and compare them byte for byte (tools/et_record.py).
et-record-check: $(B)/$(SONAME)
	@test -n "$(EXECUTORCH)" || { echo "usage: make et-record-check EXECUTORCH=/path/to/executorch" >&2; exit 2; }
	tools/et_record_check.sh "$(EXECUTORCH)"

# -------------------------------------------------------------- install
LIBDIR := $(DESTDIR)$(PREFIX)/lib
INCDIR := $(DESTDIR)$(PREFIX)/include
# Debian's python3 reads PREFIX/lib/python3/dist-packages; the package finds
# the library two levels up (PREFIX/lib).
PYDIR  := $(DESTDIR)$(PREFIX)/lib/python3/dist-packages
PYFILES := $(notdir $(wildcard python/memplan/*.py))
INSTALLED := bin/memplan lib/libmemplan.a lib/libmemplan.so lib/$(SONAME) \
  lib/libmemplan.so.$(VERSION) include/memplan.h lib/pkgconfig/memplan.pc

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(LIBDIR)/pkgconfig $(INCDIR)
	install -m 755 $(B)/memplan $(DESTDIR)$(PREFIX)/bin/memplan
	install -m 644 $(B)/libmemplan.a $(LIBDIR)/libmemplan.a
	install -m 755 $(B)/$(SONAME) $(LIBDIR)/libmemplan.so.$(VERSION)
	ln -sf libmemplan.so.$(VERSION) $(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(LIBDIR)/libmemplan.so
	install -m 644 include/memplan.h $(INCDIR)/memplan.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' \
	  memplan.pc.in > $(LIBDIR)/pkgconfig/memplan.pc
	install -d $(PYDIR)/memplan
	install -m 644 $(addprefix python/memplan/,$(PYFILES)) $(PYDIR)/memplan/

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	rm -f $(addprefix $(PYDIR)/memplan/,$(PYFILES))
	-rmdir $(PYDIR)/memplan 2>/dev/null

clean:
	rm -rf build

include artifacts/artifacts.mk
-include fuzz/fuzz.mk
