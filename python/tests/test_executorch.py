"""memplan.executorch against stand-ins of ExecuTorch's TensorSpec and graph
module (the fields its algorithms read and write)."""
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
