"""The sub-graph memory of an ExecuTorch graph module as blocks with a
lifetime, for memplan's adapter (memplan.executorch).

ExecuTorch's apply_algo (exir/memory_planning.py at cff6f4dd32) plans the
sub-graphs of control-flow nodes (cond, while_loop, map_impl, scan) first,
each from offset 0 of every buffer, and hands the parent's algorithm the
largest of their buffer lists as `input_mem_buffer_sizes`.  Its contract
allows two ways to respect them: start the parent's memory after them, or
"reserve the space specified by [the submodule's non_const_buffer_sizes]
for the lifetime of the submodule node".  ExecuTorch's greedy takes the
first; memplan's adapter takes the second, which is memplan's scoped
layout: a block per control-flow node, live from the node to the last use
of its results when it is a cond (ExecuTorch moves a branch's value into
the cond's result, so the result lives in the branch's memory: D14 in
docs/deviations.md), placed by memplan's planner like a tensor; the specs
of the node's sub-graphs (nested ones included) then move by the block's
offset.  Nodes that run the same sub-graph share one block (one graph
module cannot sit at two offsets)."""
from ._lib import EPLAN
from .errors import MemplanError


class Block:
    """One block: `sizes` {mem_id: bytes}, live over [start, end] (node
    indices of the parent), `specs` the planned specs of its sub-graphs,
    `tree` the ids of every graph module inside it, however deep."""

    def __init__(self, index, end, sizes, modules, is_cond):
        self.start, self.end, self.sizes = index, end, dict(sizes)
        self.modules, self.specs, self.is_cond = list(modules), [], is_cond
        self.tree = _tree(modules)

    def merge(self, other):
        self.start, self.end = min(self.start, other.start), max(self.end, other.end)
        for m, size in other.sizes.items():
            self.sizes[m] = max(self.sizes.get(m, 0), size)
        mine = {id(x) for x in self.modules}
        self.modules += [x for x in other.modules if id(x) not in mine]
        self.tree |= other.tree


_KINDS = ("cond", "while_loop", "map_impl", "scan")


def flat(value):
    """The leaves of a node's meta["spec"] or an argument (lists, tuples)."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flat(v)]
    return [] if value is None else [value]


def submodules(graph_module, node):
    """The graph modules a node's arguments name (get_attr nodes)."""
    found = []
    for arg in node.args:
        if getattr(arg, "op", None) == "get_attr":
            sub = getattr(graph_module, arg.target, None)
            if hasattr(getattr(sub, "graph", None), "nodes"):
                found.append(sub)
    return found


def _control_flow(graph_module):
    """(index, node, kind, sub-graph modules) of each control-flow node,
    known by its target's name as ExecuTorch's get_*_nodes know it by
    identity, and only where it names sub-graphs."""
    out = []
    for i, node in enumerate(graph_module.graph.nodes):
        kind = getattr(getattr(node, "target", None), "__name__", None)
        if getattr(node, "op", None) == "call_function" and kind in _KINDS:
            subs = submodules(graph_module, node)
            if subs:
                out.append((i, node, kind, subs))
    return out


def _tree(subs):
    """The ids of the graph modules `subs` and of every sub-graph inside
    them (the modules stay alive in their parent): a module two nodes
    reach, however deep, moves with both or neither."""
    seen, todo = set(), list(subs)
    while todo:
        sub = todo.pop()
        if id(sub) not in seen:
            seen.add(id(sub))
            todo += [m for node in sub.graph.nodes if hasattr(node, "args") for m in submodules(sub, node)]
    return seen


def _last_use(specs, floor):
    return max([floor] + [s.lifetime[1] for s in specs if getattr(s, "lifetime", None) and s.lifetime[1] is not None])


def _spec(value):
    """The one spec of a node (a list of one counts as that one)."""
    meta = getattr(value, "meta", None)
    specs = flat(meta.get("spec")) if isinstance(meta, dict) else []
    return specs[0] if len(specs) == 1 else None


def _passed_through(node, subs):
    """[(operand node, result position)] for each cond result that is a
    branch's placeholder (known by its spec: a value a graph returns may be
    another node than the placeholder that holds it): after the cond the
    result is that operand."""
    operands = list(node.args[3]) if len(node.args) > 3 and isinstance(node.args[3], (list, tuple)) else []
    out = []
    for sub in subs:
        places = [_spec(n) for n in sub.graph.nodes if n.op == "placeholder"]
        outputs = [n for n in sub.graph.nodes if n.op == "output"]
        returned = flat(outputs[-1].args[0]) if outputs and outputs[-1].args else []
        for pos, value in enumerate(returned):
            spec = _spec(value)
            j = next((j for j, p in enumerate(places) if p is not None and p is spec), None)
            if j is not None and j < len(operands):
                out.append((operands[j], pos))
    return out


def planned_specs(graph_module, skip, seen=None):
    """Every planned spec of a graph module and its sub-graphs, once each
    (a spec object may sit on several nodes), leaving out ids in `skip`."""
    seen = set() if seen is None else seen
    out = []
    for node in graph_module.graph.nodes:
        for s in flat(node.meta.get("spec") if hasattr(node, "meta") else None):
            if id(s) in seen or id(s) in skip or getattr(s, "mem_offset", None) is None \
                    or getattr(s, "mem_id", None) is None:
                continue
            seen.add(id(s))
            out.append(s)
        for sub in submodules(graph_module, node) if hasattr(node, "args") else []:
            if id(sub) not in seen:
                seen.add(id(sub))
                out += planned_specs(sub, skip, seen)
    return out


def blocks(graph_module, specs, reserve):
    """The blocks of a graph module's control-flow nodes, and {id(operand
    spec): index} for operands that must live as long as a cond result
    that is them.  `specs` are the parent's own (never moved)."""
    found, keep = [], {}
    for index, node, kind, subs in _control_flow(graph_module):
        results = [s for s in flat(node.meta.get("spec")) if hasattr(s, "lifetime")]
        end = _last_use(results, index) if kind == "cond" else index
        sizes = {}
        for sub in subs:
            bufs = list(sub.meta.get("non_const_buffer_sizes") or reserve) if hasattr(sub, "meta") else list(reserve)
            for m, size in enumerate(bufs):
                if m > 0 and size > 0:
                    sizes[m] = max(sizes.get(m, 0), size)
        block = Block(index, end, sizes, subs, kind == "cond")
        if kind == "cond":
            for operand, pos in _passed_through(node, subs):
                spec = _spec(operand)
                if pos < len(results) and hasattr(spec, "lifetime"):
                    keep[id(spec)] = max(keep.get(id(spec), 0), _last_use([results[pos]], index))
        for other in [b for b in found if b.tree & block.tree]:
            if other.is_cond and other.start < index <= other.end:
                # D14 with a shared graph: no layout helps (both runs write the same bytes)
                raise MemplanError(EPLAN, "node %d runs a sub-graph that the cond at node %d ran, while that "
                                   "cond's result still lives in its memory (until node %d): no plan is safe "
                                   "(D14, docs/deviations.md)" % (index, other.start, other.end))
            found.remove(other)
            block.merge(other)
        found.append(block)
    skip = {id(s) for s in specs}
    for b in found:
        seen = set()
        for sub in b.modules:
            b.specs += planned_specs(sub, skip, seen)
    return sorted(found, key=lambda b: b.start), keep
