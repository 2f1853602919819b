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
pre-assigned mem_id pools, in-place bases) with memplan's planner NAME and
adds `extra_padding` to every buffer they use, as ExecuTorch's greedy does.
The memory of each control-flow node's sub-graphs is a block live while
the node runs (a cond's until its results' last use), placed with the
specs; the sub-graphs' specs move with their block and are in the
result's spec_dict (memplan._et_scope says why that is ExecuTorch's
contract).  A buffer holding only sub-graph memory keeps it (ExecuTorch's
greedy drops it: D1 in docs/deviations.md), so where a sub-graph uses a
mem_id its parent does not, the buffer list is longer than greedy's, and a
suite of both asserts: greedy's list is the broken one (smallest_valid
combines them).  Without ExecuTorch installed the result types are
stand-ins with the same fields."""
from dataclasses import dataclass, field

from . import _et_scope, graph, planning
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


def _block_tensors(blocks):
    """(block, name, bytes, mem_id, start, end) of every block in every
    pool it uses."""
    return [(b, "cf%d.%d" % (k, m), size, m, b.start, b.end)
            for k, b in enumerate(blocks) for m, size in sorted(b.sizes.items())]


def _storage_base(s):
    """The spec whose storage s lives in, and where in it: ExecuTorch's
    storage_base and storage_base_offset since PR #21840 (its inplace_base
    is then an alias that raises at a nonzero offset), inplace_base before."""
    if hasattr(s, "storage_base"):
        return s.storage_base, getattr(s, "storage_base_offset", 0) or 0
    return getattr(s, "inplace_base", None), 0


def _program(specs, names, blocks=(), keep=None):
    """A graph whose tensors have exactly the specs' lifetimes (an operand
    a cond result is kept as long as that result: `keep`), plus one tensor
    per block and pool: node i defines what starts at i and reads what
    ends there."""
    b = graph.Builder()
    g = b.graph("specs")
    keep = keep or {}
    lives = []
    for s in specs:
        base_spec, offset = _storage_base(s)
        base = names.get(id(base_spec)) if base_spec is not None else None
        if base_spec is not None and base is None:
            # its base is not planned here (an input with alloc_graph_input off):
            # `memplan plan --no-alloc-inputs` refuses the same program (exit 3)
            raise MemplanError(EPLAN, "in-place tensor %s: its base is not planned here (an unplanned graph "
                               "input?): its bytes would be the base's, which the runtime places" % names[id(s)])
        g.tensor(names[id(s)], s.allocated_memory, mem_id=s.mem_id or 0, inplace=base, offset=offset if base else 0)
        lives.append((names[id(s)], s.lifetime[0], max(s.lifetime[1], keep.get(id(s), 0))))
    for _, name, size, mem_id, start, end in _block_tensors(blocks):
        g.tensor(name, size, mem_id=mem_id)
        lives.append((name, start, end))
    starts, ends = {}, {}
    for name, start, end in lives:
        starts.setdefault(start, []).append(name)
        if end > start:
            ends.setdefault(end, []).append(name)
    for i in range(max([end for _, _, end in lives] + [0]) + 1):
        g.node("call", ends.get(i, []), starts.get(i, []))
    g.node("output")
    return b.build("<executorch specs>")


def _scope(specs, graph_module, reserve):
    """The blocks of sub-graph memory (memplan._et_scope) and the operands
    to keep; without control-flow nodes but with a reservation (a caller
    that passes only `input_mem_buffer_sizes`), one block per pool from the
    first node to the last at offset 0, as ExecuTorch's greedy keeps it."""
    blocks, keep = _et_scope.blocks(graph_module, specs, reserve) if hasattr(graph_module, "graph") else ([], {})
    if blocks or not any(reserve[1:]):
        return blocks, keep, False
    last = max([s.lifetime[1] for s in specs] + [0])
    whole = _et_scope.Block(0, last, {m: r for m, r in enumerate(reserve) if m > 0 and r > 0}, [], False)
    return [whole], keep, True


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
        specs = _order(specs)
        for s in specs:
            if hasattr(s, "realign"):
                s.realign(alignment)
        reserve = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
        blocks, keep, whole = _scope(specs, graph_module, reserve)
        if not specs and (whole or not blocks):
            return MemoryAlgoResult({}, (reserve + [0, 0])[: max(2, len(reserve))])
        names = {id(s): "t%d" % i for i, s in enumerate(specs)}
        plan = planning.plan(_program(specs, names, [] if whole else blocks, keep),
                             algo=name, alignment=alignment, **options)
        return _result(specs, names, plan, blocks, reserve if whole else [], extra_padding)

    memplan_algorithm.__name__ = "memplan_" + name
    return memplan_algorithm


def _result(specs, names, plan, blocks, shift, extra_padding):
    """The MemoryAlgoResult of a plan of _program(specs, ...): the specs
    moved up by `shift` (per mem_id; the whole-graph reservation), each
    block's sub-graph specs moved by the block's offset, a mem_obj_id per
    group of specs sharing bytes, and the buffer sizes with `extra_padding`
    on every buffer a spec of this graph uses, as ExecuTorch's greedy adds
    it.  A buffer holding only a reservation keeps it (ExecuTorch's greedy
    drops it: D1 in docs/deviations.md)."""
    result = MemoryAlgoResult({}, [])
    tensors = plan.tensors
    used, placed = set(), []
    for i, s in enumerate(specs):
        a = tensors[names[id(s)]]
        placed.append((i, a.mem_id, a.offset + (shift[a.mem_id] if a.mem_id < len(shift) else 0), s.allocated_memory))
        used.add(a.mem_id)
    groups = storage_groups(placed)
    for i, s in enumerate(specs):
        result.spec_dict[s] = SpecAllocResult(placed[i][1], groups[i], placed[i][2])
    for block, name, _, mem_id, _, _ in _block_tensors(blocks):
        for t in block.specs:
            if t.mem_id == mem_id:
                result.spec_dict[t] = SpecAllocResult(t.mem_id, t.mem_obj_id, t.mem_offset + tensors[name].offset)
    sizes = list(plan.buffers) + [0] * max(0, len(shift) - len(plan.buffers), 2 - len(plan.buffers))
    result.bufsizes = [0] + [sizes[m] + (shift[m] if m < len(shift) else 0)
                             + (extra_padding if m in used else 0) for m in range(1, len(sizes))]
    return result


def _block_offset(block, mem_id, result):
    """Where a result put a block in a pool: how far it moved the block's
    sub-graph specs there (0 when it left them, as ExecuTorch's greedy does)."""
    for t in block.specs:
        if t.mem_id == mem_id and t in result.spec_dict:
            return result.spec_dict[t].mem_offset - t.mem_offset
    return 0


def _plan_text(specs, names, lives, result, alignment, blocks):
    """An algorithm's result as a .mpp plan of the specs' program."""
    nbuf = max([len(result.bufsizes), 2] + [m + 1 for _, _, _, m, _, _ in _block_tensors(blocks)])
    lines = ["memplan-plan 1",
             "options alignment=%d alloc_inputs=1 alloc_outputs=1 alloc_mutable=1 per_device=0 algo=opt" % alignment,
             "graph specs", "buffers " + " ".join(str(b) for b in (list(result.bufsizes) + [0] * nbuf)[:nbuf]),
             "devices " + " ".join(["cpu:0"] * nbuf)]
    for s in specs:
        r = result.spec_dict[s]
        life = lives[names[id(s)]]
        lines.append("alloc %s mem_id=%d obj=%d offset=%d size=%d life=%d,%d" % (
            names[id(s)], r.mem_id, r.mem_obj_id or 0, r.mem_offset, s.allocated_memory, life[0], life[1]))
    for k, (block, name, size, mem_id, _, _) in enumerate(_block_tensors(blocks)):
        life = lives[name]
        offset = _block_offset(block, mem_id, result)
        lines.append("alloc %s mem_id=%d obj=%d offset=%d size=%d life=%d,%d" % (
            name, mem_id, len(specs) + k, offset, size, life[0], life[1]))
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
    whether it is valid or not.  What this checks is the layout of one
    graph and the sub-graph memory its control-flow nodes run in: no two
    live specs share a byte, everything lies in its buffer, and each
    node's sub-graph memory (ExecuTorch's greedy keeps it at the start of
    every buffer, memplan's planners place it) is kept from the node to
    the last use of its results when it is a cond (ExecuTorch moves a
    branch's value into the result: D14, docs/deviations.md), so a
    candidate with D14's overlap, or one that drops a buffer only a
    sub-graph uses (D1), is not chosen.  Raises MemplanError when no
    candidate is valid."""

    def memplan_smallest_valid(alignment, specs, graph_module, graph_signature=None, extra_padding=0, **_):
        specs = _order(specs)
        for s in specs:
            if hasattr(s, "realign"):
                s.realign(alignment)
        algos = [algorithm(n) for n in names] + list(others)
        results = [(getattr(a, "__name__", "algorithm"), a(alignment, set(specs), graph_module, graph_signature,
                                                           extra_padding)) for a in algos]
        reserve = list(getattr(graph_module, "input_mem_buffer_sizes", None) or [])
        blocks, keep, _ = _scope(specs, graph_module, reserve)
        if not specs and not blocks:
            return results[0][1]
        tnames = {id(s): "t%d" % i for i, s in enumerate(specs)}
        prog = _program(specs, tnames, blocks, keep)
        lives = {n: a.life for n, a in planning.plan(prog, algo="opt").tensors.items()}  # the graph's lifetimes
        longest = max(len(r.bufsizes) for _, r in results)
        best, why = None, []
        for name, r in results:
            plan = planning.parse_plan(_plan_text(specs, tnames, lives, r, alignment, blocks), prog, name)
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
