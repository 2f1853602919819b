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


class StorageSpec(Spec):
    """TensorSpec since ExecuTorch PR #21840: storage_base and
    storage_base_offset (inplace_base an alias at offset 0)."""

    def __init__(self, nbytes, start, end, storage_base=None, storage_base_offset=0):
        super().__init__(nbytes, start, end)
        del self.inplace_base
        self.storage_base, self.storage_base_offset = storage_base, storage_base_offset


def test_storage_backed_specs_sit_at_their_offset():
    base = StorageSpec(256, 0, 3)
    child = StorageSpec(64, 1, 3, storage_base=base, storage_base_offset=128)
    other = StorageSpec(128, 2, 4)
    for algo in ("opt", "greedy"):
        result = met.algorithm(algo)(16, {base, child, other}, GraphModule(), None, 0)
        assert result.spec_dict[child].mem_offset == result.spec_dict[base].mem_offset + 128, algo
        assert result.spec_dict[child].mem_id == result.spec_dict[base].mem_id


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


# Control flow: stand-ins of the fx graph modules apply_algo hands over
# (nodes with op, target, args and meta["spec"]; sub-graphs as get_attr
# arguments, their buffer list in meta["non_const_buffer_sizes"]).
class Node:
    def __init__(self, op, target=None, args=(), spec=None):
        self.op, self.target, self.args = op, target, tuple(args)
        self.meta = {} if spec is None else {"spec": spec}


class Graph:
    def __init__(self, nodes):
        self.nodes = nodes


class Module:
    """A graph module: `nodes`, its sub-graphs as attributes, `bufsizes`
    as apply_algo leaves them on a sub-graph it planned."""

    def __init__(self, nodes, bufsizes=None, reserve=None, **subs):
        self.graph, self.meta = Graph(nodes), {}
        if bufsizes is not None:
            self.meta["non_const_buffer_sizes"] = bufsizes
        if reserve is not None:
            self.input_mem_buffer_sizes = reserve
        for name, sub in subs.items():
            setattr(self, name, sub)


def cond(*_):
    """torch.ops.higher_order.cond's stand-in (the adapter knows it by name)."""


def map_impl(*_):
    """torch.ops.higher_order.map_impl's stand-in."""


def planned(nbytes, start, end, offset, mem_id=1):
    """A sub-graph spec as apply_algo left it: planned from offset 0."""
    s = Spec(nbytes, start, end, mem_id=mem_id)
    s.mem_id, s.mem_offset, s.mem_obj_id = mem_id, offset, 0
    return s


def branch(nbytes, mem_id=1):
    """A branch graph: a placeholder (not planned) and one planned result."""
    y = planned(nbytes, 1, 2, 0, mem_id)
    nodes = [Node("placeholder", "x"), Node("call_function", "op", spec=y), Node("output", "output", [[None]])]
    return Module(nodes, [0] * mem_id + [nbytes]), [y]


def control_flow_program(shared=False):
    """x, a 1000-byte tensor live at node 1 only, a cond (node 2) whose
    result r is read by node 4 after a map (node 3) has run its body: the
    cond's branch memory must outlive the map (D14)."""
    t, t_specs = branch(64)
    f, f_specs = branch(32)
    body, body_specs = (t, []) if shared else branch(128)
    x, big, r, out = Spec(16, 0, 2), Spec(1000, 1, 1), Spec(64, 2, 4), Spec(16, 3, 5)
    nodes = [Node("placeholder", "x", spec=x), Node("call_function", "op", spec=big),
             Node("call_function", cond, [None, Node("get_attr", "t"), Node("get_attr", "f"), []], spec=[r]),
             Node("call_function", map_impl, [Node("get_attr", "body"), []], spec=[out]),
             Node("call_function", "op", spec=None), Node("output", "output")]
    gm = Module(nodes, reserve=[0, max(64, 32, 128)], t=t, f=f, body=body)
    return gm, [x, big, r, out], {"t": t_specs, "f": f_specs, "body": body_specs}


def placed(result, spec):
    r = result.spec_dict.get(spec)
    return (r.mem_offset, r.mem_offset + spec.allocated_memory) if r else (spec.mem_offset, spec.mem_offset + spec.allocated_memory)


def meets(a, b):
    return a[0] < b[1] and b[0] < a[1]


def test_subgraph_memory_is_scoped_to_its_node():
    """Issue 46: 1.8.1 put the whole graph above the sub-graphs'
    reservation (16-30% above `memplan plan` on control flow); now each
    control-flow node's sub-graph memory is a block live at that node
    (a cond's until its results' last use) placed like a tensor, and its
    sub-graph specs move with it."""
    gm, specs, subs = control_flow_program()
    result = met.algorithm("opt")(16, set(specs), gm, None, 0)
    big, r = specs[1], specs[2]
    cond_mem = [placed(result, s) for s in subs["t"] + subs["f"]]
    body_mem = [placed(result, s) for s in subs["body"]]
    assert not any(meets(a, b) for a in cond_mem for b in body_mem)   # D14: the result outlives the map
    assert not any(meets(a, placed(result, s)) for a in cond_mem + body_mem for s in (specs[0], r, specs[3]))
    assert result.bufsizes[1] < 128 + 1000   # 1.8.1: every parent spec above the reservation
    assert result.bufsizes[1] >= 1000 + 16
    assert placed(result, big)[1] <= result.bufsizes[1]


def test_a_graph_two_nodes_run_while_a_result_lives_in_it_is_refused():
    """D14 with one branch graph for the cond and the later map: both runs
    write the same bytes, no layout helps; `memplan plan` refuses it too."""
    gm, specs, _ = control_flow_program(shared=True)
    with pytest.raises(met.MemplanError, match="no plan is safe"):
        met.algorithm("opt")(16, set(specs), gm, None, 0)


def et_greedy_like(alignment, specs, graph_module, graph_signature, extra_padding):
    """ExecuTorch's greedy's layout of control flow: every spec above the
    reservation, sub-graphs left at offset 0, one buffer per used mem_id."""
    reserve = getattr(graph_module, "input_mem_buffer_sizes", [0, 0])
    out, top = met.MemoryAlgoResult({}, [0, 0]), reserve[1] if len(reserve) > 1 else 0
    for s in sorted(specs, key=lambda s: s.lifetime):
        out.spec_dict[s] = met.SpecAllocResult(1, len(out.spec_dict), top)
        top += s.allocated_memory
    if specs:
        out.bufsizes = [0, top]
    return out


def test_smallest_valid_rejects_d14_and_d1_layouts():
    """ExecuTorch's greedy keeps every sub-graph at offset 0: a cond's
    result then lives in bytes the map's body overwrites (D14), and with no
    spec of its own a parent's buffer list drops the sub-graphs' memory
    (D1).  smallest_valid sees both and picks memplan's plan."""
    gm, specs, _ = control_flow_program()
    result = met.smallest_valid(("opt",), others=[et_greedy_like])(16, set(specs), gm, None, 0)
    assert specs[0] in result.spec_dict
    assert len(result.spec_dict) > len(specs)         # memplan's: it moved sub-graph specs
    t, t_specs = branch(64, mem_id=2)
    empty = Module([Node("call_function", cond, [None, Node("get_attr", "t"), Node("get_attr", "t"), []], spec=[]),
                    Node("output", "output")], reserve=[0, 0, 64], t=t)
    result = met.smallest_valid(("opt",), others=[et_greedy_like])(16, set(), empty, None, 0)
    assert result.bufsizes == [0, 0, 64]
    assert met.algorithm("opt")(16, set(), empty, None, 0).bufsizes == [0, 0, 64]


def test_a_cond_result_that_is_its_operand_keeps_the_operand():
    """A branch that returns its placeholder: after the cond the result is
    the operand (ExecuTorch moves the value), so the operand's bytes must
    outlive its own last use (node 1) until the result's (node 3)."""
    a, r, b = Spec(64, 0, 1), Spec(64, 1, 3), Spec(64, 2, 3)
    ph = Node("placeholder", "i", spec=Spec(64, 0, 1))
    t = Module([ph, Node("output", "output", [[ph]])], [0, 0])
    operand = Node("call_function", "op", spec=a)
    nodes = [Node("placeholder", "a", spec=a),
             Node("call_function", cond, [None, Node("get_attr", "t"), Node("get_attr", "t"), [operand]], spec=[r]),
             Node("call_function", "op", spec=b), Node("output", "output")]
    result = met.algorithm("opt")(16, {a, r, b}, Module(nodes, reserve=[0, 0], t=t), None, 0)
    assert not meets(placed(result, a), placed(result, b))
