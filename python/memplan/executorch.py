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


def _plan_text(specs, names, lives, result, alignment):
    """An algorithm's result as a .mpp plan of the specs' program."""
    nbuf = max(len(result.bufsizes), 2)
    lines = ["memplan-plan 1",
             "options alignment=%d alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=opt" % alignment,
             "graph specs", "buffers " + " ".join(str(b) for b in (list(result.bufsizes) + [0] * nbuf)[:nbuf]),
             "devices " + " ".join(["cpu:0"] * nbuf)]
    for s in specs:
        r = result.spec_dict[s]
        life = lives[names[id(s)]]
        lines.append("alloc %s mem_id=%d obj=%d offset=%d size=%d life=%d,%d" % (
            names[id(s)], r.mem_id, r.mem_obj_id or 0, r.mem_offset, s.allocated_memory, life[0], life[1]))
    return "\n".join(lines + ["end"]) + "\n"


def smallest_valid(names=("opt", "greedy"), others=()):
    """One ExecuTorch memory-planning algorithm that is safe to use alone:
    it runs memplan's planners `names` and the ExecuTorch algorithms
    `others` (e.g. exir.memory_planning.greedy) on the same specs, checks
    every result with memplan's verifier against the specs' program, and
    returns the smallest result the verifier accepts (its buffer list as
    long as the longest candidate's).

        MemoryPlanningAlgorithmSuite(algo_list=[memplan.executorch.smallest_valid(others=[greedy])])

    A suite of several algorithms is not safe: it keeps the smallest result
    whether it is valid or not.  What this checks is what an algorithm is
    handed: the layout of one graph's specs (no two live specs share a
    byte, everything in its buffer, the reservation kept).  Invalidity that
    only the whole program shows (D14: a cond's results in branch memory a
    later sub-graph reuses, docs/deviations.md) is beyond any per-graph
    algorithm; plan the program with `memplan plan` for that.  Raises
    MemplanError when no candidate is valid."""

    def memplan_smallest_valid(alignment, specs, graph_module, graph_signature=None, extra_padding=0, **_):
        specs = _order(specs)
        for s in specs:
            if hasattr(s, "realign"):
                s.realign(alignment)
        algos = [algorithm(n) for n in names] + list(others)
        results = [(getattr(a, "__name__", "algorithm"), a(alignment, set(specs), graph_module, graph_signature,
                                                           extra_padding)) for a in algos]
        if not specs:
            return results[0][1]
        tnames = {id(s): "t%d" % i for i, s in enumerate(specs)}
        prog = _program(specs, tnames)
        lives = {n: a.life for n, a in planning.plan(prog, algo="opt").tensors.items()}  # the graph's lifetimes
        longest = max(len(r.bufsizes) for _, r in results)
        best, why = None, []
        for name, r in results:
            plan = planning.parse_plan(_plan_text(specs, tnames, lives, r, alignment), prog, name)
            report = planning.verify(prog, plan)
            if not report.valid:
                why.append("%s: %s" % (name, report.violations[0].message if report.violations else "invalid"))
                continue
            if best is None or sum(r.bufsizes) < sum(best.bufsizes):
                best = r
        if best is None:
            raise MemplanError(EPLAN, "no candidate's plan is valid: " + "; ".join(why))
        best.bufsizes = list(best.bufsizes) + [0] * (longest - len(best.bufsizes))
        return best

    return memplan_smallest_valid
