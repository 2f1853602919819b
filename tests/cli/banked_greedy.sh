#!/bin/sh
# ExecuTorch's banked greedy (PR #21821, exir/banked_memory_planning.py;
# `--et-upstream 21821` with a memory map): the cases of its
# test_banked_memory_planning.py that memplan's map can state, ported.
# Each test's specs (bytes, lifetime [start, end], a pin, an in-place base)
# become a graph whose node i makes the tensors starting at i and reads
# those ending at i.  Which tests are not ported, and why:
# docs/deviations.md.
set -u
. tests/cli/common.inc
U="--et-exact --et-upstream 21821 --algo greedy"
# specs NAME [xnnpack]: stdin "tensor size start end [attrs]" lines -> $T/NAME.mpg
specs() {
    awk -v xnn="${2:-}" 'BEGIN { print "memplan-graph 1"; print "graph main" }
        { n[NR] = $1; s[NR] = $3; e[NR] = $4; line = "tensor " $1 " " $2
          for (i = 5; i <= NF; i++) line = line " " $i
          print line; if ($4 > last) last = $4 }
        END { for (i = 0; i <= last; i++) {
                  ins = ""; outs = ""
                  for (k = 1; k <= NR; k++) {
                      if (e[k] == i && s[k] < i) ins = ins (ins ? "," : "") n[k]
                      if (s[k] == i) outs = outs (outs ? "," : "") n[k]
                  }
                  l = "node call"; if (ins) l = l " in=" ins; if (outs) l = l " out=" outs; print l
              }
              if (xnn) print "node delegate backend=XnnpackBackend"
              print "node output"; print "end" }' >"$T/$1.mpg"
}
plan() { n=$1; shift; "$M" plan $U "$@" --verify -o "$T/$n.mpp" "$T/$n.mpg" 2>"$T/err"; }
field() { sed -n "s/^alloc $2 .*$3=\([0-9,]*\).*/\1/p" "$T/$1.mpp" | head -1; }
bufs() { sed -n 's/^buffers //p' "$T/$1.mpp" | head -1; }
buf() { bufs "$1" | cut -d' ' -f$(($2 + 1)); }
banks_of() { n=$1; shift; for t in "$@"; do field "$n" "$t" mem_id; done | sort | tr '\n' ' '; }
want() { [ "$2" = "$3" ] && ok || bad "$1: got '$2', want '$3'"; }
K=1024

# TestPlacement
printf 'a 256 0 4\n' | specs zero
plan zero --banks fast=1K,slow=8K && ok || bad "zero: $(cat "$T/err")"
want "reserves_buffer_index_zero_for_constants" "$(bufs zero | wc -w) $(buf zero 0)" "3 0"
printf 'a 256 0 4\nb 256 1 6\n' | specs fast
plan fast --banks fast=4K,slow=64K && ok || bad "fast: $(cat "$T/err")"
want "places_everything_in_the_fastest_bank_when_it_fits" "$(banks_of fast a b)$(buf fast 2)" "1 1 0"
printf 'a 1024 0 10\nb 1024 0 10\nc 1024 0 10\n' | specs spill
plan spill --banks fast=2K,slow=64K && ok || bad "spill: $(cat "$T/err")"
want "spills_to_the_next_bank_when_the_fast_bank_is_full" "$(banks_of spill a b c)$(buf spill 1) $(buf spill 2)" "1 1 2 2048 1024"
for i in 0 1 2 3 4 5; do echo "t$i 1024 0 10"; done | specs three
plan three --banks tcm=2K,sram=2K,dram=64K && ok || bad "three: $(cat "$T/err")"
want "cascades_across_three_banks" "$(banks_of three t0 t1 t2 t3 t4 t5)$(buf three 1) $(buf three 2)" "1 1 2 2 3 3 2048 2048"
i=0; while [ $i -lt 16 ]; do echo "t$i 512 $i $((i + 20))"; i=$((i + 1)); done | specs cap
plan cap --banks fast=2K,slow=8K && ok || bad "cap: $(cat "$T/err")"
[ "$(buf cap 1)" -le 2048 ] && [ "$(buf cap 2)" -le 8192 ] && ok || bad "never_exceeds_any_bank_capacity: $(bufs cap)"
printf 'a 1024 0 4\nb 1024 5 9\n' | specs reuse
plan reuse --banks fast=2K,slow=8K && ok || bad "reuse: $(cat "$T/err")"
want "preserves_lifetime_reuse_within_a_bank" "$(field reuse a offset),$(field reuse a mem_id) $(buf reuse 1) $(buf reuse 2)" \
    "$(field reuse b offset),$(field reuse b mem_id) 1024 0"
printf 'a 16384 0 4\n' | specs nowhere
expect_rc 3 "$M" plan $U --banks fast=1K,slow=2K "$T/nowhere.mpg"
grep -q "16384.*fast.*slow" "$T/err" && ok || bad "fails_when_no_bank_can_hold_a_spec: $(cat "$T/err")"
i=0; while [ $i -lt 40 ]; do echo "t$i $((256 * (i % 5 + 1))) $i $((i + 8))"; i=$((i + 1)); done | specs det
plan det --banks fast=4K,slow=64K && cp "$T/det.mpp" "$T/det1.mpp" && plan det --banks fast=4K,slow=64K &&
    cmp -s "$T/det.mpp" "$T/det1.mpp" && ok || bad "plan_is_deterministic"

# TestFastBankIsFilled
i=0; while [ $i -lt 200 ]; do echo "t$i 4096 $i $((i + 1))"; i=$((i + 1)); done | specs short
plan short --banks fast=8K,slow=64M && ok || bad "short: $(cat "$T/err")"
[ "$(grep -c '^alloc .* mem_id=1 ' "$T/short.mpp")" -gt 100 ] && ok || bad "short_lifetimes_let_many_specs_share_the_fast_bank"
printf 'a 1024 0 10\nb 1024 0 10\nc 1024 0 10\n' | specs onebank
expect_rc 3 "$M" plan $U --banks fast=2K "$T/onebank.mpg"
grep -q "fast" "$T/err" && ok || bad "reports_the_bank_when_a_spec_fits_nowhere: $(cat "$T/err")"
printf 'a 256 0 4\n' | specs pad xnnpack # ExecuTorch pads 64 bytes with an XNNPACK delegate
plan pad --banks fast=4K,slow=64K && ok || bad "pad: $(cat "$T/err")"
want "extra_padding_is_charged_only_to_banks_that_hold_something" "$(buf pad 1) $(buf pad 2)" "320 0"
printf 'a 16 0 4\n' | specs padcap xnnpack
plan padcap --banks fast=32,slow=64K && ok || bad "padcap: $(cat "$T/err")"
want "padding_counts_against_bank_capacity" "$(buf padcap 1) $(buf padcap 2)" "0 80"

# TestPreAssignedMemIds
printf 'p 256 0 10 mem_id=2\nf 256 0 10\n' | specs pin
plan pin --banks fast=4K,slow=64K && ok || bad "pin: $(cat "$T/err")"
want "pinned_spec_stays_in_its_bank" "$(banks_of pin p)$(banks_of pin f)" "2 1 "
printf 'p 1024 0 10 mem_id=1\na 1024 0 10\nb 1024 0 10\nc 1024 0 10\n' | specs around
plan around --banks fast=2K,slow=64K && ok || bad "around: $(cat "$T/err")"
want "free_specs_cascade_around_a_pin" "$(banks_of around p)$(banks_of around a b c)" "1 1 2 2 "
printf 'a 1024 0 10\nb 1024 0 10\nc 1024 0 10\nd 1024 0 10\np 256 0 10 mem_id=1\n' | specs squeeze
plan squeeze --banks fast=2K,slow=64K && ok || bad "squeeze: $(cat "$T/err")"
want "capacity_is_reserved_so_a_pin_is_never_squeezed_out" "$(banks_of squeeze p)$(banks_of squeeze a b c d)" "1 1 2 2 2 "
printf 'p 1024 0 4 mem_id=1\nf 1024 5 9\n' | specs share
plan share --banks fast=4K,slow=64K && ok || bad "share: $(cat "$T/err")"
want "pinned_and_unpinned_buffers_share_storage" "$(field share f offset)/$(field share f mem_id) $(buf share 1) $(buf share 2)" \
    "$(field share p offset)/$(field share p mem_id) 1024 0"
printf 'p 64 0 4 mem_id=1\nf 512 5 9\n' | specs own
plan own --banks fast=4K,slow=64K && ok || bad "own: $(cat "$T/err")"
want "unpinned_buffer_larger_than_a_pin_takes_its_own_object" "$(banks_of own f)$(buf own 1)" "1 576"
printf 'a 1024 0 4 mem_id=1\nb 512 5 9 mem_id=1\nc 256 10 14\nd 2048 0 14\n' | specs flat
plan flat --banks sram=1M && ok || bad "flat: $(cat "$T/err")"
"$M" plan --et-exact --algo greedy -o "$T/flat_greedy.mpp" "$T/flat.mpg" 2>/dev/null
want "pinned_graph_matches_greedy_when_one_bank_is_declared" "$(bufs flat)" "$(bufs flat_greedy)"
printf 'a 1024 0 4 mem_id=1\nb 1024 5 9 mem_id=1\n' | specs ride
plan ride --banks fast=1024,slow=64K && ok || bad "ride: $(cat "$T/err")"
want "a_pin_that_rides_free_is_not_charged_capacity" "$(field ride b offset) $(buf ride 1)" "$(field ride a offset) 1024"
printf 'p 4096 0 10 mem_id=1\n' | specs bigpin
expect_rc 3 "$M" plan $U --banks fast=1K,slow=64K "$T/bigpin.mpg"
grep -q "4096.*fast" "$T/err" && ok || bad "pin_larger_than_its_bank_is_an_error: $(cat "$T/err")"
printf 'a 1024 0 10 mem_id=1\nb 1024 0 10 mem_id=1\nc 1024 0 10 mem_id=1\n' | specs pins
expect_rc 3 "$M" plan $U --banks fast=2K,slow=64K "$T/pins.mpg"
grep -q "pinned to bank fast.*no fallback bank" "$T/err" && ok || bad "pins_that_collectively_overflow: $(cat "$T/err")"

# TestInPlaceSpecs
printf 'b 1024 0 4\na 1024 4 8 inplace=b\n' | specs ip
plan ip --banks fast=4K,slow=64K && ok || bad "ip: $(cat "$T/err")"
want "inplace_spec_shares_its_base_placement" "$(field ip a offset)/$(field ip a mem_id)" "$(field ip b offset)/$(field ip b mem_id)"
printf 'x 1024 0 10\ny 1024 0 10\nb 1024 0 10\na 1024 0 10 inplace=b\n' | specs ipslow
plan ipslow --banks fast=2K,slow=64K && ok || bad "ipslow: $(cat "$T/err")"
want "inplace_spec_follows_its_base_into_the_slow_bank" "$(field ipslow a offset)/$(field ipslow a mem_id)" \
    "$(field ipslow b offset)/$(field ipslow b mem_id)"
printf 'x 1024 0 20\ny 1024 0 20\nb 512 0 20\na 512 0 20 inplace=b\n' | specs ipspill
plan ipspill --banks fast=2K,slow=64K && ok || bad "ipspill: $(cat "$T/err")"
want "inplace_spec_follows_a_base_that_spilled" "$(field ipspill b mem_id) $(field ipspill a offset)/$(field ipspill a mem_id)" \
    "2 $(field ipspill b offset)/2"
printf 'b 1024 0 10\na 1024 0 10 inplace=b\n' | specs ipcount
plan ipcount --banks fast=1K,slow=64K && ok || bad "ipcount: $(cat "$T/err")"
want "inplace_spec_does_not_double_count_against_capacity" "$(buf ipcount 1) $(buf ipcount 2)" "1024 0"

# TestUnsupportedConfigurations.test_non_cpu_specs_are_rejected
printf 'a 256 0 4 device=cuda\n' | specs cuda
expect_rc 3 "$M" plan $U --banks fast=4K "$T/cuda.mpg"
grep -q "CPU tensors only" "$T/err" && ok || bad "non_cpu_specs_are_rejected: $(cat "$T/err")"
# a single bank as large as the program is greedy itself (TestSingleBankEquivalence)
for f in corpus/examples/chain.mpg corpus/examples/model.mpg; do
    "$M" plan $U --banks all=1T "$f" | grep -v '^options' >"$T/b.mpp" &&
        "$M" plan --et-exact --algo greedy "$f" | grep -v '^options' >"$T/g.mpp" && cmp -s "$T/b.mpp" "$T/g.mpp" && ok ||
        bad "single bank is not greedy on $f"
done
echo "banked_greedy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
