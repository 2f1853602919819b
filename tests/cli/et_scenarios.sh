#!/bin/sh
# ExecuTorch's own memory-planning tests (exir/tests/test_memory_planning.py
# at cff6f4dd32), ported as graphs in corpus/et_tests/ (made by
# tools/et_scenarios.py) with the numbers and properties those tests
# assert.  Which tests could not be ported, and why: docs/deviations.md.
set -u
. tests/cli/common.inc
D=corpus/et_tests

# plan NAME ARGS...: the plan of $D/NAME.mpg in $T/NAME.mpp, verified valid
plan() {
    n=$1; shift
    if "$M" plan "$@" --verify -o "$T/$n.mpp" "$D/$n.mpg" 2>"$T/err"; then ok; else bad "$n $*: $(cat "$T/err")"; fi
}
# reuse FILE: pairs of tensors of the entry block that share bytes (their
# lives are disjoint in a valid plan): ExecuTorch's verify_storage_reuse
reuse() {
    awk 'BEGIN { n = 0 } /^graph /{g++} g == 1 && /^alloc /{
        for (i = 3; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
        m[n] = f["mem_id"]; lo[n] = f["offset"]; hi[n] = f["offset"] + f["size"]; n++ }
        END { c = 0; for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
              if (m[i] == m[j] && lo[i] < hi[j] && lo[j] < hi[i]) c++; print c }' "$1"
}
field() { sed -n "s/^alloc $2 .*$3=\([0-9,]*\).*/\1/p" "$1" | head -1; }
buffers() { sed -n 's/^buffers //p' "$1" | head -1; }
devices() { sed -n 's/^devices //p' "$1" | head -1; }
want() { [ "$2" = "$3" ] && ok || bad "$1: got '$2', want '$3'"; }

# test_basic, test_different_tensor_sizes, test_return_two, test_list_arg:
# naive reuses no storage, greedy reuses some; every plan is valid
for n in basic different_sizes return_two list_arg; do
    plan "$n" --et-exact --algo naive
    want "$n naive reuse" "$(reuse "$T/$n.mpp")" 0
    plan "$n" --et-exact --algo greedy
    [ "$(reuse "$T/$n.mpp")" -gt 0 ] && ok || bad "$n: greedy reuses no storage"
done
# test_linear_with_view: greedy reuses storage; views are never planned
plan linear_with_view --et-exact --algo greedy
[ "$(reuse "$T/linear_with_view.mpp")" -gt 0 ] && ok || bad "linear_with_view: greedy reuses no storage"
want "views planned" "$(grep -cE '^alloc v[12] ' "$T/linear_with_view.mpp")" 0
# test_list_arg's extra check: each slice lives until the cat starts
cat_start=$(field "$T/list_arg.mpp" s life | cut -d, -f1)
for s in s0 s1; do
    end=$(field "$T/list_arg.mpp" $s life | cut -d, -f2)
    [ "$end" -ge "$cat_start" ] && ok || bad "list_arg: $s ends at $end, before the cat at $cat_start"
done

# test_graph_input_output: inputs planned iff alloc_graph_input, outputs iff
# alloc_graph_output (ModelWithDifferentTensorSizes, both algorithms)
for algo in naive greedy; do
    for flags in "" "--no-alloc-inputs" "--no-alloc-outputs" "--no-alloc-inputs --no-alloc-outputs"; do
        # shellcheck disable=SC2086
        plan different_sizes --et-exact --algo $algo $flags
        i=$(grep -c '^alloc i ' "$T/different_sizes.mpp"); o=$(grep -c '^alloc sum ' "$T/different_sizes.mpp")
        case $flags in *inputs*) want "inputs $flags" "$i" 0 ;; *) want "inputs $flags" "$i" 1 ;; esac
        case $flags in *outputs*) want "outputs $flags" "$o" 0 ;; *) want "outputs $flags" "$o" 1 ;; esac
    done
done

# test_multiple_pools: (mem_id, offset) of a, b, c, d, e as a multiset, and
# the buffer sizes
pairs() { for t in a b c d e; do echo "$(field "$1" $t mem_id),$(field "$1" $t offset)"; done | sort | tr '\n' ' '; }
plan multiple_pools --et-exact --algo naive --alignment 1
want "multiple_pools naive" "$(pairs "$T/multiple_pools.mpp")" "1,0 1,4 1,8 3,0 3,4 "
want "multiple_pools naive buffers" "$(buffers "$T/multiple_pools.mpp")" "0 12 0 8"
plan multiple_pools --et-exact --algo greedy --alignment 1
want "multiple_pools greedy" "$(pairs "$T/multiple_pools.mpp")" "1,0 1,0 1,4 3,0 3,4 "
want "multiple_pools greedy buffers" "$(buffers "$T/multiple_pools.mpp")" "0 8 0 8"

# test_mutable_buffers_infinite_lifespan: the state lives to the last node
# and no other tensor shares its bytes
plan mutable_state --et-exact --algo greedy
want "state life" "$(field "$T/mutable_state.mpp" state life)" "0,9"
lo=$(field "$T/mutable_state.mpp" state offset)
for t in x y z; do
    o=$(field "$T/mutable_state.mpp" $t offset)
    [ "$o" != "$lo" ] && ok || bad "mutable_state: $t at the state's offset $lo"
done

# test_constants_not_memory_planned: of the five placeholders only x is
# planned, and only with alloc_graph_input
plan constants --et-exact --algo greedy --no-alloc-inputs
want "planned placeholders, no inputs" "$(grep -cE '^alloc (x|constant|weight|bias|one) ' "$T/constants.mpp")" 0
plan constants --et-exact --algo greedy
want "planned placeholders" "$(grep -cE '^alloc (x|constant|weight|bias|one) ' "$T/constants.mpp")" 1

# test_placeholder_lifetime: the two inputs never share an offset
plan placeholder_lifetime --et-exact --algo greedy
[ "$(field "$T/placeholder_lifetime.mpp" a offset)" != "$(field "$T/placeholder_lifetime.mpp" b offset)" ] &&
    ok || bad "placeholder_lifetime: a and b share an offset"

# TestMap.test_map: naive; the map body's memory never overlaps a tensor of
# the parent live at the map node (the verifier's control-flow rule)
plan map --et-exact --algo naive
grep -q '^graph add_fn' "$T/map.mpp" && ok || bad "map: no block for the body"

plan multi_map --et-exact --algo naive                     # TestMap.test_multi_map

# TestInPlaceElemWise: the in-place result shares its base's storage, and
# the verifier accepts that overlap
plan inplace_mul --et-exact --algo greedy --alignment 1
want "in-place offset" "$(field "$T/inplace_mul.mpp" d offset)" "$(field "$T/inplace_mul.mpp" c offset)"
want "in-place object" "$(field "$T/inplace_mul.mpp" d obj)" "$(field "$T/inplace_mul.mpp" c obj)"

# ExecuTorch PR #21840 (merged after cff6f4dd32: --et-upstream 21840):
# TestStorageBaseMemoryPlanning and one more TestInPlaceElemWise case.
# A storage-backed tensor lies at its base's offset plus its own, in the
# base's object, at both alignments the tests use; offsets add up a chain
U="--et-exact --et-upstream 21840 --algo greedy"
for al in 16 1; do
    # shellcheck disable=SC2086
    plan storage_base $U --alignment $al
    want "child at base + 16 (alignment $al)" "$(field "$T/storage_base.mpp" child offset)" \
        "$(($(field "$T/storage_base.mpp" base offset) + 16))"
    want "child in base's object" "$(field "$T/storage_base.mpp" child obj)" "$(field "$T/storage_base.mpp" base obj)"
    want "child in base's pool" "$(field "$T/storage_base.mpp" child mem_id)" "$(field "$T/storage_base.mpp" base mem_id)"
done
# shellcheck disable=SC2086
plan storage_chain $U --alignment 1
b=$(field "$T/storage_chain.mpp" base offset)
want "child at base + 8" "$(field "$T/storage_chain.mpp" child offset)" $((b + 8))
want "grandchild at base + 12" "$(field "$T/storage_chain.mpp" grandchild offset)" $((b + 12))
want "one object" "$(for t in base child grandchild; do field "$T/storage_chain.mpp" $t obj; done | sort -u | wc -l)" 1
# the base's storage is kept to its child's end: the tensor made beside the
# child gets another object, and no byte of the base's
# shellcheck disable=SC2086
plan storage_lifetime $U --alignment 1
[ "$(field "$T/storage_lifetime.mpp" other obj)" != "$(field "$T/storage_lifetime.mpp" base obj)" ] && ok ||
    bad "storage_lifetime: other reuses the base's object"
lo=$(field "$T/storage_lifetime.mpp" other offset) blo=$(field "$T/storage_lifetime.mpp" base offset)
[ $((lo + 12)) -le "$blo" ] || [ "$lo" -ge $((blo + 16)) ] && ok || bad "storage_lifetime: other in the base's bytes"
# the alignment holds for the sum (ExecuTorch's assertion): 8 is refused at 16
"$M" plan $U "$D/storage_chain.mpg" >/dev/null 2>"$T/err"
want "offset 8 at alignment 16" "$?" 3
grep -q "not a multiple of the alignment 16" "$T/err" && ok || bad "alignment refusal: $(cat "$T/err")"
# without the switch, ExecuTorch's snapshot has no offsets: refused by name
"$M" plan --et-exact --algo greedy "$D/storage_base.mpg" >/dev/null 2>"$T/err"
want "offsets at cff6f4dd32" "$?" 3
grep -q "has no storage offsets; --et-upstream 21840" "$T/err" && ok || bad "snapshot refusal: $(cat "$T/err")"
# and it refuses an in-place tensor larger than its base, as #21840 asserts
"$M" plan $U corpus/defects/d12_inplace_larger.mpg >/dev/null 2>"$T/err"
want "D12 under 21840" "$?" 3
# the plans ExecuTorch itself made at the PR's head (a777dffb, merged;
# tools/et_record.py) are corpus/et_tests/*.u21840-a*.mpp with their .args,
# replayed byte for byte by tests/cli/run.sh
# test_verifier_allows_chained_inplace_overlap: c, d, e one storage, valid
plan inplace_chain $U
want "chain offsets" "$(for t in c d e; do field "$T/inplace_chain.mpp" $t offset; done | sort -u | wc -l)" 1

# ExecuTorch PR #21818 (open; --et-upstream 21818): TestCond.
# test_consecutive_cond_output_lifetime: the first cond's branch outputs
# share no byte with the second's (they do at cff6f4dd32: D14); ExecuTorch's
# own plan at the PR's head is consecutive_cond.u21818.mpp (tests/cli/run.sh)
branch_y() { sed -n "/^graph $2\$/,/^end/s/^alloc y .*offset=\([0-9]*\) size=\([0-9]*\).*/\1 \2/p" "$1"; }
apart() { set -- $(branch_y "$1" add1) $(branch_y "$1" add2); [ $(($1 + $2)) -le "$3" ] || [ $(($3 + $4)) -le "$1" ]; }
plan consecutive_cond --et-exact --et-upstream 21818 --algo greedy
apart "$T/consecutive_cond.mpp" && ok || bad "21818: the conds' branch outputs share bytes"
"$M" plan --et-exact --algo greedy -o "$T/cc0.mpp" "$D/consecutive_cond.mpg"
apart "$T/cc0.mpp" && bad "cff6f4dd32 keeps them apart: the scenario shows nothing" || ok
# ExecuTorch PR #21494 (open, competing; --et-upstream 21494),
# TestCondOverlap: overlapping cond outputs kept apart (as above), and
# conds whose results are dead by the next one share memory; ExecuTorch's
# plans at the PR's head: *.u21494.mpp
plan consecutive_cond --et-exact --et-upstream 21494 --algo greedy
apart "$T/consecutive_cond.mpp" && ok || bad "21494: the conds' branch outputs share bytes"
for u in 21494 21818; do
    plan sequential_conds --et-exact --et-upstream $u --algo greedy
    want "$u: dead results share" "$(branch_y "$T/sequential_conds.mpp" add1)" "$(branch_y "$T/sequential_conds.mpp" add2)"
done

# TestDeviceAwareMemoryPlanning (enable_non_cpu_memory_planning = --per-device)
plan basic --et-exact --algo greedy --per-device            # test_cpu_only_unchanged
want "cpu only buffers" "$(buffers "$T/basic.mpp" | cut -d' ' -f1)" 0
want "cpu only devices" "$(devices "$T/basic.mpp")" "cpu:0 cpu:0"
"$M" plan --et-exact --algo greedy --per-device "$D/device_custom_pool.mpg" >/dev/null 2>"$T/err"
want "custom pool + device, ExecuTorch" "$?" 3            # test_custom_pool_with_device_planning_raises
grep -q "NotImplementedError" "$T/err" && ok || bad "custom pool refusal: $(cat "$T/err")"
plan device_custom_pool --algo greedy --per-device        # repaired: planned, valid
plan device_all_cuda --et-exact --algo greedy --per-device # test_all_cuda_no_wasted_slots
want "all cuda buffers" "$(buffers "$T/device_all_cuda.mpp" | wc -w)" 2
want "all cuda devices" "$(devices "$T/device_all_cuda.mpp")" "cpu:0 cuda:0"
plan device_all_cuda --et-exact --algo greedy             # test_disabled_falls_back_to_cpu
want "disabled devices" "$(devices "$T/device_all_cuda.mpp")" "cpu:0 cpu:0"
plan device_mixed --et-exact --algo greedy --per-device   # test_mixed_cpu_cuda_separate_buffers
want "mixed buffers" "$(buffers "$T/device_mixed.mpp" | wc -w)" 3
want "mixed cpu mem_ids" "$(for t in a b t0 t1 t2 t3 t4 t5 t6 t7 t8; do field "$T/device_mixed.mpp" $t mem_id; done | sort -u)" 1
want "mixed cuda mem_ids" "$(for i in 9 10 11 12 13 14 15 16 17 18 19; do field "$T/device_mixed.mpp" t$i mem_id; done | sort -u)" 2
plan device_last_cuda --et-exact --algo greedy --per-device # test_mem_offset_correct_after_remap
want "remapped offset" "$(field "$T/device_last_cuda.mpp" t19 offset)" 0
id=$(field "$T/device_last_cuda.mpp" t19 mem_id)
size=$(buffers "$T/device_last_cuda.mpp" | cut -d' ' -f$((id + 1)))
[ "$size" -ge 48 ] && ok || bad "the cuda buffer holds $size bytes, under the tensor's 48"
plan device_alternating --et-exact --algo greedy --per-device # test_no_cross_device_memory_sharing
cpu=$(for k in 1 3 5 7 9 11 13 15 17 19 21; do n=$([ $k = 1 ] && echo b || echo t$((k - 2))); field "$T/device_alternating.mpp" $n mem_id; done | sort -u)
cuda=$(for k in 0 2 4 6 8 10 12 14 16 18 20; do n=$([ $k = 0 ] && echo a || echo t$((k - 2))); field "$T/device_alternating.mpp" $n mem_id; done | sort -u)
[ -z "$(printf '%s\n%s\n' "$cpu" "$cuda" | sort | uniq -d)" ] && ok || bad "cpu ($cpu) and cuda ($cuda) share a buffer"
plan device_indices --et-exact --algo greedy --per-device # test_different_device_indices_separate_buffers
want "indices buffers" "$(buffers "$T/device_indices.mpp" | wc -w)" 4
ids="$(field "$T/device_indices.mpp" a mem_id) $(field "$T/device_indices.mpp" b mem_id) $(field "$T/device_indices.mpp" t0 mem_id)"
want "three distinct buffers" "$(echo $ids | tr ' ' '\n' | sort -u | wc -l)" 3
want "indices devices" "$(devices "$T/device_indices.mpp")" "cpu:0 cpu:0 cuda:0 cuda:1"
plan device_index3 --et-exact --algo greedy --per-device # test_device_index_propagated
want "device index" "$(devices "$T/device_index3.mpp")" "cpu:0 cpu:0 cuda:3"

echo "et_scenarios: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
