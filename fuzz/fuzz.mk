# fuzz/fuzz.mk - fuzzing (docs/fuzzing.md); included by the Makefile.
#
#   make fuzz TARGET=parse SECONDS=60        libFuzzer campaign, recorded
#   make fuzz-afl TARGET=parse SECONDS=60 JOBS=2
#                                            AFL++ campaign (main, secondaries,
#                                            one CMPLOG), summary, recorded
#   make fuzz-campaign HOURS=2               every target, libFuzzer and AFL++
#                                            side by side, merged into corpus/,
#                                            crashes grouped by signature
#   make fuzz-merge TARGET=parse             minimize the grown corpus back
#                                            into corpus/TARGET (-merge=1)
#   make fuzz-seeds                          raw seeds into the working corpora
#   FORK=N make fuzz ...                     libFuzzer fork mode: N workers,
#                                            going on after crashes
#   make fuzz TARGET=plan SAN=none           libFuzzer without sanitizers
#                                            (recorded as libfuzzer-nosan)
#   make fuzz TARGET=artifacts SECONDS=60    the .pte/.tflite readers' mutation
#                                            campaign (fuzz/artifacts/), recorded
#   make fuzz-ci [FUZZ_CI_SECONDS=30]        replay every corpus under ASan+
#     [FUZZ_CI_JOBS=2]                       UBSan, then each target briefly,
#                                            FUZZ_CI_JOBS targets at a time
#   make fuzz-coverage                       line coverage the corpus reaches
#   make fuzz-build                          every fuzz binary
#   make test                                also replays the corpus (TEST_DEPS)
#
# Targets: fuzz/fuzz_<target>.c, one LLVMFuzzerTestOneInput each, built
# three ways from the one source: libFuzzer, AFL++ (persistent mode through
# libAFLDriver, plus a CMPLOG build) and fuzz/replay.c (no fuzzer at all).

FUZZ_TARGETS := parse planners plan verify planfile csv baseline shapes store shard external pyapi
FUZZ_HDRS := $(wildcard fuzz/*.h)
# extra sources of a target (besides fuzz/fuzz_<target>.c)
FUZZ_EXTRA_verify := fuzz/brute.c

# ------------------------------------------------- replay drivers (any CC)
# Built in whatever build directory is current ($(B)), from its library and
# with its flags: in `make test` that is build/test under ASan+UBSan.
$(B)/fuzz-replay-%: fuzz/fuzz_%.c fuzz/replay.c fuzz/brute.c $(FUZZ_HDRS) $(B)/libmemplan-tools.a \
  $(B)/libmemplan.a $(HDRS)
	$(CC) $(ALL_CFLAGS) -Ifuzz -o $@ fuzz/fuzz_$*.c fuzz/replay.c $(FUZZ_EXTRA_$*) \
	  $(B)/libmemplan-tools.a $(B)/libmemplan.a $(LDLIBS)

TEST_DEPS += $(FUZZ_TARGETS:%=$(T)/fuzz-replay-%)

# --------------------------------------------------------- fuzzer builds
FZ := build/fuzz
FUZZ_CC ?= clang
AFL_CC ?= afl-clang-fast
LLVM_PROFDATA ?= llvm-profdata
LLVM_COV ?= llvm-cov
# UndefinedBehaviorSanitizer findings are crashes, like ASan's.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_BASE = $(STD) $(WARN) $(INC) -Ifuzz

# $(1) config, $(2) compiler command, $(3) compile flags, $(4) link flags,
# $(5) name of the binaries, $(6) extra objects: one library, one binary
# per target.
define FUZZ_CONFIG
$(FZ)/$(1)/obj/%.o: %.c $(HDRS) $(FUZZ_HDRS)
	@mkdir -p $$(dir $$@)
	$(2) $$(FUZZ_BASE) $(3) $$(FUZZ_OBJ_FLAGS) -c $$< -o $$@
$(FZ)/$(1)/libmemplan.a: $(LIB_SRC:%.c=$(FZ)/$(1)/obj/%.o) $(TOOLS_SRC:%.c=$(FZ)/$(1)/obj/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
$(FZ)/$(1)/$(5)-%: $(FZ)/$(1)/obj/fuzz/fuzz_%.o $(FZ)/$(1)/obj/fuzz/brute.o $(6) $(FZ)/$(1)/libmemplan.a
	$(2) $(3) $(4) -o $$@ $$< $(6) $$(if $$(FUZZ_EXTRA_$$*),$(FZ)/$(1)/obj/fuzz/brute.o) \
	  $(if $(filter cov,$(1)),-Wl$(comma)--whole-archive) $(FZ)/$(1)/libmemplan.a \
	  $(if $(filter cov,$(1)),-Wl$(comma)--no-whole-archive) $(LDLIBS)
endef
comma := ,

# libFuzzer, ASan, UBSan
$(eval $(call FUZZ_CONFIG,libfuzzer,$(FUZZ_CC),-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN),\
  -fsanitize=fuzzer,fuzz,))
# libFuzzer without sanitizers (SAN=none): the oracles' assertions only,
# at three to four times the speed; memory errors in what it finds are
# caught when the corpus is replayed under ASan and UBSan (make test,
# fuzz-ci), so its inputs are merged into corpus/ as any others.
$(eval $(call FUZZ_CONFIG,fast,$(FUZZ_CC),-O1 -g -fsanitize=fuzzer-no-link,-fsanitize=fuzzer,fuzz,))
# No comparison tracing inside the planners: their comparisons are of
# sizes and offsets they derived, which the fuzzer cannot steer byte by
# byte (the decoder and the parsers, which read the input, keep it), and
# the tracing callbacks were half of target "plan"'s time (sorting, sweeps).
$(FZ)/libfuzzer/obj/opt/%.o $(FZ)/libfuzzer/obj/ref/%.o $(FZ)/fast/obj/opt/%.o $(FZ)/fast/obj/ref/%.o: \
  FUZZ_OBJ_FLAGS := -fno-sanitize-coverage=trace-cmp
# AFL++: libAFLDriver (-fsanitize=fuzzer) runs LLVMFuzzerTestOneInput in
# persistent mode over shared memory; ASan and UBSan as for libFuzzer.
$(eval $(call FUZZ_CONFIG,afl,AFL_QUIET=1 $(AFL_CC),-O1 -g $(FUZZ_SAN),-fsanitize=fuzzer,fuzz,))
# AFL++ CMPLOG build (afl-fuzz -c): comparison operands logged, no sanitizer.
$(eval $(call FUZZ_CONFIG,cmplog,AFL_QUIET=1 AFL_LLVM_CMPLOG=1 $(AFL_CC),-O1 -g,-fsanitize=fuzzer,fuzz,))
# Source-based coverage: the plain replay driver, instrumented; the whole
# library is linked, so that what no target reaches counts as uncovered.
$(eval $(call FUZZ_CONFIG,cov,$(FUZZ_CC),-O0 -g -fprofile-instr-generate -fcoverage-mapping,,replay,\
  $(FZ)/cov/obj/fuzz/replay.o))

# the objects the binaries are linked from are kept (no intermediate files)
.SECONDARY: $(foreach c,libfuzzer fast afl cmplog cov,$(FZ)/$(c)/obj/fuzz/brute.o $(FZ)/$(c)/obj/fuzz/replay.o \
  $(FUZZ_TARGETS:%=$(FZ)/$(c)/obj/fuzz/fuzz_%.o))

.PHONY: fuzz fuzz-afl fuzz-merge fuzz-seeds fuzz-ci fuzz-coverage fuzz-build fuzz-check-target fuzz-campaign
TARGET ?= parse
SECONDS ?= 60
JOBS ?= 2
FORK ?= 0
DB ?= results/metrics.db
FUZZ_CI_SECONDS ?= 30
FUZZ_CI_JOBS ?= 2

fuzz-check-target:
	@case " $(FUZZ_TARGETS) " in *" $(TARGET) "*) ;; \
	  *) echo "TARGET must be one of: $(FUZZ_TARGETS) (make fuzz also: artifacts)" >&2; exit 2;; esac

fuzz-build: $(FUZZ_TARGETS:%=$(FZ)/libfuzzer/fuzz-%)

# SAN=none: the build without sanitizers (config "fast" above)
SAN ?= address
FUZZ_LF_DIR = $(if $(filter none,$(SAN)),fast,libfuzzer)
FUZZ_LF_ENGINE = $(if $(filter none,$(SAN)),libfuzzer-nosan,libfuzzer)

# TARGET=artifacts: the readers of .pte and .tflite files are Python behind
# FlatBuffers' verifier: a mutation campaign (fuzz/artifacts/), recorded too
ifeq ($(TARGET),artifacts)
fuzz: $(B)/memplan $(B)/memplan-fbverify $(FB_PY_STAMP)
	sh fuzz/artifacts/run.sh $(SECONDS) $(DB) $(B)/memplan
else
fuzz: fuzz-check-target $(FZ)/$(FUZZ_LF_DIR)/fuzz-$(TARGET) $(B)/memplan
	@case "$(SAN)" in address|none) ;; *) echo "SAN must be address or none" >&2; exit 2;; esac
	FORK=$(FORK) ENGINE=$(FUZZ_LF_ENGINE) sh fuzz/run-libfuzzer.sh \
	  $(TARGET) $(SECONDS) $(FZ)/$(FUZZ_LF_DIR)/fuzz-$(TARGET) $(DB) $(B)/memplan
endif

fuzz-afl: fuzz-check-target $(FZ)/afl/fuzz-$(TARGET) $(FZ)/cmplog/fuzz-$(TARGET) $(B)/memplan
	sh fuzz/run-afl.sh $(TARGET) $(SECONDS) $(JOBS) $(FZ)/afl/fuzz-$(TARGET) \
	  $(FZ)/cmplog/fuzz-$(TARGET) $(DB) $(B)/memplan

fuzz-campaign:
	@test -n "$(HOURS)" || { echo "usage: make fuzz-campaign HOURS=N" >&2; exit 2; }
	sh fuzz/campaign.sh $(HOURS)

fuzz-merge: fuzz-check-target $(FZ)/libfuzzer/fuzz-$(TARGET)
	sh fuzz/merge.sh $(TARGET) $(FZ)/libfuzzer/fuzz-$(TARGET)

# Raw seed material (fuzz/seeds.sh) into every working corpus, for the next
# campaigns to grow from and fuzz-merge to minimize into corpus/<target>.
fuzz-seeds: $(B)/memplan
	sh fuzz/seeds.sh $(B)/memplan $(FZ)/seeds
	@for t in $(FUZZ_TARGETS); do mkdir -p $(FZ)/work/$$t/corpus; \
	  cp $(FZ)/seeds/$$t/* $(FZ)/work/$$t/corpus/; done

# CI: the whole corpus under the sanitizers (gcc or clang, no fuzzer
# needed), then each target for FUZZ_CI_SECONDS with libFuzzer (clang),
# FUZZ_CI_JOBS at a time (fuzz/ci.sh).
fuzz-ci: $(FUZZ_TARGETS:%=$(FZ)/libfuzzer/fuzz-%) $(B)/memplan $(B)/memplan-fbverify $(FB_PY_STAMP)
	$(MAKE) --no-print-directory B=$(T) CFLAGS="$(TEST_CFLAGS)" $(FUZZ_TARGETS:%=$(T)/fuzz-replay-%)
	BUILD=$(T) sh tests/cli/fuzz_replay.sh
	sh fuzz/ci.sh $(FUZZ_CI_SECONDS) $(FUZZ_CI_JOBS) $(FUZZ_TARGETS)
	sh fuzz/artifacts/run.sh $(FUZZ_CI_SECONDS) "" $(B)/memplan 30

fuzz-coverage: $(FUZZ_TARGETS:%=$(FZ)/cov/replay-%)
	sh fuzz/coverage.sh $(FZ)/cov $(LLVM_PROFDATA) $(LLVM_COV) $(FUZZ_TARGETS)
