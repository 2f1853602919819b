"""memplan.executorch against stand-ins of ExecuTorch's TensorSpec and graph
module (the fields its algorithms read and write)."""
import pytest

import memplan.executorch as met


class Spec:
    """TensorSpec's planning fields: allocated_memory, lifetime, mem_id,
    inplace_base, and realign (sizes rounded up to the alignment)."""

    def __init__(self, nbytes, start, end, mem_id=None, inplace_base=None):
        self.nbytes, self.lifetime, self.mem_id, self.inplace_base = nbytes, [start, end], mem_id, inplace_base
        self.allocated_memory = nbytes

    def realign(self, alignment):
        self.allocated_memory = (self.nbytes + alignment - 1) // alignment * alignment
        return self.allocated_memory


class GraphModule:
    def __init__(self, reserve=None):
        if reserve is not None:
            self.input_mem_buffer_sizes = reserve


def chain(n=12):
    """A chain with a long-lived skip: sizes vary so reuse matters."""
    specs = [Spec(100 + 37 * (i % 5), i, i + 1) for i in range(n)]
    specs.append(Spec(64, 0, n))
    return specs


def check_layout(specs, result, alignment):
    """No two specs live together share bytes; everything fits its buffer."""
    for s in specs:
        r = result.spec_dict[s]
        assert r.mem_offset % alignment == 0
        assert r.mem_offset + s.allocated_memory <= result.bufsizes[r.mem_id]
    for a in specs:
        for b in specs:
            if a is b or a.inplace_base is b or b.inplace_base is a:
                continue
            ra, rb = result.spec_dict[a], result.spec_dict[b]
            live = a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]
            bytes_ = ra.mem_offset < rb.mem_offset + b.allocated_memory and rb.mem_offset < ra.mem_offset + a.allocated_memory
            assert not (live and ra.mem_id == rb.mem_id and bytes_), (a.lifetime, b.lifetime)


def test_the_signature_and_a_valid_layout():
    for name in ("opt", "greedy", "tflm", "bestfit"):
        specs = chain()
        algo = met.algorithm(name)
        assert algo.__name__ == "memplan_" + name
        result = algo(16, set(specs), GraphModule(), None, 0)
        assert isinstance(result, met.MemoryAlgoResult)
        assert result.bufsizes[0] == 0 and len(result.bufsizes) == 2
        assert set(result.spec_dict) == set(specs)
        check_layout(specs, result, 16)


def test_opt_needs_no_more_than_greedy_and_reaches_the_peak():
    specs = chain()
    opt = met.algorithm("opt")(16, set(specs), GraphModule(), None, 0).bufsizes[1]
    greedy = met.algorithm("greedy")(16, set(chain()), GraphModule(), None, 0).bufsizes[1]
    peak = max(sum(s.allocated_memory for s in specs if s.lifetime[0] <= t <= s.lifetime[1]) for t in range(13))
    assert peak <= opt <= greedy


def test_reservation_padding_and_pools():
    specs = chain(4) + [Spec(40, 1, 2, mem_id=3)]
    result = met.algorithm("opt")(16, set(specs), GraphModule([0, 96, 0, 48]), None, 64)
    for s in specs:
        r = result.spec_dict[s]
        assert r.mem_id == (3 if s.mem_id == 3 else 1)
        assert r.mem_offset >= (48 if r.mem_id == 3 else 96)
    assert result.bufsizes[3] == 48 + 48 + 64   # reservation + the 40-byte spec aligned + padding
    assert result.bufsizes[2] == 0
    check_layout(specs, result, 16)


def test_inplace_specs_sit_on_their_base():
    base = Spec(256, 0, 2)
    inplace = Spec(256, 2, 4, inplace_base=base)
    other = Spec(128, 1, 3)
    result = met.algorithm("opt")(16, {base, inplace, other}, GraphModule(), None, 0)
    assert result.spec_dict[inplace].mem_offset == result.spec_dict[base].mem_offset
    check_layout([base, inplace, other], result, 16)


def test_no_specs_keeps_the_reservation():
    assert met.algorithm("opt")(16, set(), GraphModule(), None, 0).bufsizes == [0, 0]
    assert met.algorithm("opt")(16, set(), GraphModule([0, 80]), None, 0).bufsizes == [0, 80]


def verifier_storage_reuse(specs, result):
    """ExecuTorch's Verifier.verify_storage_reuse (exir/memory_planning.py
    at cff6f4dd32), its rule restated: two specs of one mem_id whose bytes
    overlap must not be live together and must carry one mem_obj_id (an
    in-place result is not collected: its node is an in-place node)."""
    for i, a in enumerate(specs):
        for b in specs[i + 1:]:
            if a.inplace_base is not None or b.inplace_base is not None:
                continue
            ra, rb = result.spec_dict[a], result.spec_dict[b]
            if ra.mem_id != rb.mem_id or a.allocated_memory <= 0 or b.allocated_memory <= 0:
                continue
            if ra.mem_offset + a.allocated_memory - 1 < rb.mem_offset or rb.mem_offset + b.allocated_memory - 1 < ra.mem_offset:
                continue
            live = a.lifetime[0] <= b.lifetime[1] and b.lifetime[0] <= a.lifetime[1]
            assert not live, "storage and lifetime overlap: %s %s" % (a.lifetime, b.lifetime)
            assert ra.mem_obj_id == rb.mem_obj_id, "mem_obj_id mismatch (issue 46): %d %d" % (ra.mem_obj_id, rb.mem_obj_id)


def test_specs_sharing_bytes_carry_one_mem_obj_id():
    """Two in-place families reusing the same bytes at different times:
    1.8.0 gave each its own mem_obj_id (memplan's obj), and ExecuTorch's
    Verifier raised "Unexpected mem_obj_id mismatch"."""
    a = Spec(512, 0, 1)
    a2 = Spec(512, 1, 2, inplace_base=a)
    b = Spec(512, 3, 4)
    b2 = Spec(512, 4, 5, inplace_base=b)
    small = Spec(64, 0, 5)
    specs = [a, a2, b, b2, small] + chain(20)
    for name in ("opt", "greedy", "tflm", "bestfit"):
        result = met.algorithm(name)(16, set(specs), GraphModule([0, 32]), None, 0)
        check_layout(specs, result, 16)
        verifier_storage_reuse(specs, result)
        assert result.spec_dict[a].mem_obj_id == result.spec_dict[a2].mem_obj_id
        if result.spec_dict[a].mem_offset == result.spec_dict[b].mem_offset:  # two families, one place
            assert result.spec_dict[a].mem_obj_id == result.spec_dict[b].mem_obj_id


def test_storage_groups_are_connected_ranges():
    g = met.storage_groups([("a", 1, 0, 16), ("b", 1, 16, 16), ("c", 1, 8, 16), ("d", 1, 100, 4),
                            ("e", 2, 0, 4), ("z", 1, 50, 0)])
    assert g["a"] == g["b"] == g["c"] and len({g["a"], g["d"], g["z"]}) == 3 and g["e"] == 0


def test_an_inplace_spec_on_an_unplanned_input_is_refused():
    """With alloc_graph_input off, ExecuTorch hands no spec for the input:
    `memplan plan --no-alloc-inputs` refuses such a program (exit 3), and so
    does the adapter now (1.8.0 planned it on its own)."""
    base = Spec(256, 0, 1)
    inplace = Spec(256, 1, 2, inplace_base=base)
    with pytest.raises(met.MemplanError, match="its base is not planned here"):
        met.algorithm("opt")(16, {inplace, Spec(64, 0, 2)}, GraphModule(), None, 0)


def test_smallest_valid_never_picks_an_invalid_plan():
    """A candidate smaller than the others because it overlaps live specs
    (as ExecuTorch's greedy is where D14 bites) is never chosen; a bare
    suite would take it.  Buffer lists come out as long as the longest."""
    def cheat(alignment, specs, graph_module, graph_signature, extra_padding):
        out = met.MemoryAlgoResult({}, [0, max(s.allocated_memory for s in specs), 0, 0])
        for s in specs:
            out.spec_dict[s] = met.SpecAllocResult(1, 0, 0)  # every spec at 0: small and wrong
        return out

    specs = chain(10)
    algo = met.smallest_valid(("opt", "greedy"), others=[cheat])
    result = algo(16, set(specs), GraphModule(), None, 0)
    check_layout(specs, result, 16)
    verifier_storage_reuse(specs, result)
    assert len(result.bufsizes) == 4
    opt = met.algorithm("opt")(16, set(chain(10)), GraphModule(), None, 0)
    assert sum(result.bufsizes) == sum(opt.bufsizes)
    with pytest.raises(met.MemplanError, match="no candidate's plan is valid"):
        met.smallest_valid((), others=[cheat])(16, set(chain(10)), GraphModule(), None, 0)
