"""memplan's planners as an ExecuTorch memory-planning algorithm.

    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    from executorch.exir.passes import MemoryPlanningPass
    import memplan.executorch
    suite = MemoryPlanningAlgorithmSuite(algo_list=[memplan.executorch.algorithm("opt")])
    MemoryPlanningPass(memory_planning_algo=suite, ...)

algorithm(NAME) returns a callable with the signature of ExecuTorch's own
`greedy` (exir/memory_planning.py at cff6f4dd32):
    algo(alignment, specs, graph_module, graph_signature, extra_padding=0)
        -> MemoryAlgoResult(spec_dict={spec: SpecAllocResult(mem_id, mem_obj_id, mem_offset)},
                            bufsizes=[0, size of buffer 1, ...])
It plans the specs (their lifetimes, sizes after spec.realign(alignment),
pre-assigned mem_id pools, in-place bases) with memplan's planner NAME, puts
them after the graph module's `input_mem_buffer_sizes` (the reservation of
its sub-graphs) and adds `extra_padding` to every buffer it uses, as
ExecuTorch's greedy does.  A buffer holding only a reservation keeps it
(ExecuTorch's greedy drops it: D1 in docs/deviations.md).  Without
ExecuTorch installed the result types are stand-ins with the same fields."""
from dataclasses import dataclass, field

from . import graph, planning
from ._lib import EPLAN
from .errors import MemplanError

try:  # the real result types when ExecuTorch is there
    from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult
except Exception:  # ImportError, or an ExecuTorch that fails to import
    @dataclass
    class SpecAllocResult:
        mem_id: int
        mem_obj_id: int
        mem_offset: int

    @dataclass
    class MemoryAlgoResult:
        spec_dict: dict = field(default_factory=dict)
        bufsizes: list = field(default_factory=list)


def _order(specs):
    """A deterministic order: by lifetime, then size (a set's order is not)."""
    return sorted(specs, key=lambda s: (s.lifetime[0], s.lifetime[1], s.allocated_memory))


def _program(specs, names):
    """A graph whose tensors have exactly the specs' lifetimes: node i
    defines the specs that start at i and reads those that end there."""
    b = graph.Builder()
    g = b.graph("specs")
    last = max([s.lifetime[1] for s in specs] + [0])
    starts, ends = {}, {}
    for s in specs:
        base = names.get(id(s.inplace_base)) if getattr(s, "inplace_base", None) is not None else None
        if getattr(s, "inplace_base", None) is not None and base is None:
            # its base is not planned here (an input with alloc_graph_input off):
            # `memplan plan --no-alloc-inputs` refuses the same program (exit 3)
            raise MemplanError(EPLAN, "in-place tensor %s: its base is not planned here (an unplanned graph "
                               "input?): its bytes would be the base's, which the runtime places" % names[id(s)])
        g.tensor(names[id(s)], s.allocated_memory, mem_id=s.mem_id or 0, inplace=base)
        starts.setdefault(s.lifetime[0], []).append(names[id(s)])
        if s.lifetime[1] > s.lifetime[0]:
            ends.setdefault(s.lifetime[1], []).append(names[id(s)])
    for i in range(last + 1):
        g.node("call", ends.get(i, []), starts.get(i, []))
    g.node("output")
    return b.build("<executorch specs>")


def storage_groups(placed):
    """mem_obj_id as ExecuTorch's Verifier means it (verify_storage_reuse):
    within a mem_id, specs whose bytes overlap carry one id, so each id is
    a connected group of overlapping byte ranges (memplan's own `obj` is
    one per in-place family: two families reusing bytes at different
    times had two ids, and the Verifier raised "Unexpected mem_obj_id
    mismatch").  placed: [(key, mem_id, offset, size)]; returns {key: id},
    ids numbered from 0 per mem_id in order of offset.  An empty range
    overlaps nothing (the Verifier's has_overlap) and is a group of its own."""
    out = {}
    by_pool = {}
    for key, mem_id, offset, size in placed:
        by_pool.setdefault(mem_id, []).append((offset, size, key))
    for mem_id in sorted(by_pool):
        group, end = -1, None
        for offset, size, key in sorted(by_pool[mem_id], key=lambda x: (x[0], x[1])):
            if size <= 0:
                group += 1
                out[key] = group
                continue
            if end is None or offset > end:  # [offset, offset + size - 1] meets nothing before it
                group += 1
                end = offset + size - 1
            else:
                end = max(end, offset + size - 1)
            out[key] = group
    return out


def algorithm(name="opt", **options):
    """An ExecuTorch memory-planning algorithm planning with memplan's
    planner `name`; options as memplan.plan's (exact=, budget_ms=, ...)."""

    def memplan_algorithm(alignment, specs, graph_module, graph_signature=None, extra_padding=0, **_):
        result = MemoryAlgoResult({}, [])
        specs = _order(specs)
        for s in specs:
            if hasattr(s, "realign"):
                s.realign(alignment)
        reserve = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
        if not specs:
            result.bufsizes = (reserve + [0, 0])[: max(2, len(reserve))]
            return result
        names = {id(s): "t%d" % i for i, s in enumerate(specs)}
        prog = _program(specs, names)
        plan = planning.plan(prog, algo=name, alignment=alignment, **options)
        tensors = plan.tensors
        used = set()
        placed = []
        for i, s in enumerate(specs):
            a = tensors[names[id(s)]]
            extra = reserve[a.mem_id] if a.mem_id < len(reserve) else 0
            placed.append((i, a.mem_id, a.offset + extra, s.allocated_memory))
            used.add(a.mem_id)
        groups = storage_groups(placed)
        for i, s in enumerate(specs):
            _, mem_id, offset, _ = placed[i]
            result.spec_dict[s] = SpecAllocResult(mem_id, groups[i], offset)
        sizes = list(plan.buffers) + [0] * max(0, len(reserve) - len(plan.buffers))
        result.bufsizes = [0] + [sizes[m] + (reserve[m] if m < len(reserve) else 0)
                                 + (extra_padding if m in used else 0) for m in range(1, len(sizes))]
        return result

    memplan_algorithm.__name__ = "memplan_" + name
    return memplan_algorithm
