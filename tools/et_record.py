#!/usr/bin/env python3
"""Run ExecuTorch's own memory planner on a memplan graph and write its plan.

    /usr/bin/python3 tools/et_record.py --executorch CHECKOUT [options] GRAPH.mpg [-o PLAN.mpp]

CHECKOUT is a pytorch/executorch source tree (a `git clone`).  The planning
code that runs is that tree's `exir/memory_planning.py`, unmodified:
`apply_algo` over `MemoryPlanningAlgorithmSuite([greedy])` (or `[naive]`), as
`MemoryPlanningPass` calls it.  The options are `memplan plan`'s ExecuTorch
ones (`--algo`, `--alignment`, `--no-alloc-inputs`, `--no-alloc-outputs`,
`--no-alloc-mutable`, `--per-device`; `--algo memplan:NAME` runs memplan's
ExecuTorch adapter with planner NAME in its place, and `--verify` runs
ExecuTorch's own `Verifier` on the result), and the plan is written in memplan's
`.mpp` form, so that `memplan plan --et-exact` with the same options can be
compared byte for byte.  corpus/et/ was recorded with it (its README).

How a graph file becomes an fx graph (the reading memplan's --et-exact
implements, docs/deviations.md):
- each graph is a GraphModule; each `node` line one fx node, in order, so
  that fx node indices are memplan's node indices;
- each tensor has one TensorSpec (uint8, shape [SIZE]); a node's
  meta["spec"] is the list of its outputs' specs (a view's is its root's);
  its args name its inputs through nodes kept outside the graph, one per
  tensor, so that naming a tensor extends only that tensor's lifetime;
- placeholders have the tensor's name as target (as an identifier, one to
  one: `identifier()`), and every `mutable`
  placeholder's target is a buffer the program mutates in the graph
  signature (ExecuTorch looks sub-graph placeholders up there by name, so a
  sub-graph placeholder named like an entry mutable buffer is one: D13; a
  sub-graph's own `mutable` placeholder gets a target of its own, lest
  its name make a same-named entry placeholder mutable);
- `inplace=B` sets `inplace_base` (as MemoryPlanningPass does; since PR
  #21840 `storage_base`, with `offset=N` as `storage_base_offset`), `mem_id=N`
  pre-assigns the pool, `dynamic` is DYNAMIC_UNBOUND, `device=` the spec's
  device; control-flow nodes call torch.ops.higher_order.cond/map_impl/scan
  and exir's while_loop with their sub-graphs as get_attr arguments,
  `delegate` calls executorch_call_delegate with a lowered module that has
  the node's backend id.

ExecuTorch's package __init__ imports its whole exporter, which needs a
recent torch; only the modules memory planning imports are loaded.  Where the
installed torch is older than the checkout expects (Debian's torch 1.13 has
no torch.export, torch.SymInt or torch.ops.higher_order), the few names
those modules import from torch are supplied by small stand-ins listed in
STANDINS below, and `--explain` prints which ones were used.  None of them
takes part in planning: they are enum values, marker objects and an empty
signature class.  With a torch that has them, nothing is stood in.
"""
import argparse
import enum
import importlib
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


class Failure(Exception):
    """A message for the user and an exit status (memplan's table)."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- loading --

STANDINS = []  # what was stood in, for --explain


def _package(name, path):
    """Register a package without running its __init__ (ExecuTorch's imports
    the whole exporter); its submodules load from `path`."""
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
    return module


def _marker(name):
    """A distinct callable the planner compares node targets with."""

    def marker(*args, **kwargs):
        raise RuntimeError(name + " is a marker; it is never run")

    marker.__name__ = marker.__qualname__ = name.rsplit(".", 1)[-1]
    return marker


def _check(cond, message=None):
    if not cond:
        raise RuntimeError(message() if message else "check failed")


def _stand_in_torch(torch):
    """Names memory planning imports from torch 2.x, where torch lacks them."""
    try:
        importlib.import_module("torch.export.exported_program")
    except ImportError:
        ep = types.ModuleType("torch.export.exported_program")

        class InputKind(enum.Enum):
            USER_INPUT = 1
            PARAMETER = 2
            BUFFER = 3
            CONSTANT_TENSOR = 4
            CUSTOM_OBJ = 5
            TOKEN = 6

        class ConstantArgument:
            pass

        class ExportGraphSignature:
            pass

        ep.InputKind, ep.ConstantArgument, ep.ExportGraphSignature = InputKind, ConstantArgument, ExportGraphSignature
        sys.modules["torch.export"] = types.ModuleType("torch.export")
        sys.modules["torch.export"].exported_program = ep
        sys.modules["torch.export.exported_program"] = ep
        STANDINS.append("torch.export.exported_program (InputKind, ConstantArgument, ExportGraphSignature)")
    missing = [n for n in ("uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2") if not hasattr(torch, n)]
    for n in missing:  # keys of exir.tensor's dtype table; no tensor here has them
        setattr(torch, n, _marker("torch." + n))
    if missing:
        STANDINS.append("torch dtypes " + ", ".join(missing) + " (table keys)")
    if not hasattr(torch, "_check"):
        torch._check = _check
        STANDINS.append("torch._check (raises RuntimeError as torch's does)")
    import torch.fx.experimental.symbolic_shapes as shapes

    for n in ("guard_or_false", "guard_or_true"):
        if not hasattr(shapes, n):  # on a static shape, a guard is the bool itself
            setattr(shapes, n, bool)
            STANDINS.append("torch.fx.experimental.symbolic_shapes." + n + " (bool: static shapes)")
    if not hasattr(torch.ops.higher_order, "cond"):
        torch.ops.higher_order = types.SimpleNamespace(
            cond=_marker("higher_order.cond"), map_impl=_marker("higher_order.map_impl"),
            scan=_marker("higher_order.scan"))
        STANDINS.append("torch.ops.higher_order.cond/map_impl/scan (markers)")


def _static_shape(shape):
    """exir.sym_util.eval_shape for the static shapes of a graph file."""
    if not all(isinstance(s, int) for s in shape):
        raise RuntimeError("symbolic shape without torch's symbolic shapes")
    return list(shape)


def _stand_in_module(name, **names):
    """A module that exists in the checkout but cannot import on this torch."""
    try:
        return importlib.import_module(name)
    except (ImportError, AttributeError) as e:
        module = types.ModuleType(name)
        for key, value in names.items():
            setattr(module, key, value)
        sys.modules[name] = module
        STANDINS.append("%s (%s: %s)" % (name, ", ".join(names), e))
        return module


def load_executorch(checkout):
    """exir.memory_planning from the checkout, and what it is compared with."""
    if not os.path.isfile(os.path.join(checkout, "exir", "memory_planning.py")):
        raise Failure("%s: not an ExecuTorch checkout (no exir/memory_planning.py)" % checkout, 2)
    import torch

    _package("executorch", checkout)
    _package("executorch.exir", os.path.join(checkout, "exir"))
    _package("executorch.exir.operator", os.path.join(checkout, "exir", "operator"))
    _stand_in_torch(torch)
    _stand_in_module("executorch.exir.sym_util", eval_shape=_static_shape)
    _stand_in_module("executorch.exir.control_flow", while_loop=_marker("while_loop"))
    _stand_in_module("executorch.exir.delegate", executorch_call_delegate=_marker("executorch_call_delegate"))
    return importlib.import_module("executorch.exir.memory_planning")


# ---------------------------------------------------------- graph reading --

class Tensor:
    def __init__(self, name, size, attrs):
        self.name, self.size, self.attrs = name, int(size), attrs


class Graph:
    def __init__(self, name):
        self.name, self.tensors, self.nodes = name, {}, []


def read_graphs(path):
    """The graphs of a graph file, checked by memplan's own parser first (a
    bad file is its FILE:LINE message and exit 2); its canonical text is then
    simple: tensors, then nodes, of each graph."""
    import memplan

    try:
        text = memplan.load(path).text()
    except memplan.MemplanError as e:
        raise Failure(str(e), e.code)
    graphs, g = [], None
    for line in text.splitlines():
        tok = line.split()
        if tok[0] == "graph":
            g = Graph(tok[1])
            graphs.append(g)
        elif tok[0] == "tensor":
            attrs = dict(a.split("=", 1) if "=" in a else (a, True) for a in tok[3:])
            g.tensors[tok[1]] = Tensor(tok[1], tok[2], attrs)
        elif tok[0] == "node":
            g.nodes.append((tok[1], dict(a.split("=", 1) for a in tok[2:])))
    return graphs


def root(g, name):
    """The storage a tensor name stands for (views resolved)."""
    while "view" in g.tensors[name].attrs:
        name = g.tensors[name].attrs["view"]
    return name


# ---------------------------------------------------------- fx building --

def identifier(name):
    """A Python identifier for a memplan name, one to one (fx writes
    placeholder targets as parameter names): `t_`, then `_` as `__`, `.` `$`
    `-` as `_0` `_1` `_2`."""
    return "t_" + "".join({"_": "__", ".": "_0", "$": "_1", "-": "_2"}.get(c, c) for c in name)


class Builder:
    """Builds one GraphModule per graph, with ExecuTorch's TensorSpecs."""

    def __init__(self, torch, et, graphs):
        self.torch, self.et, self.graphs = torch, et, {g.name: g for g in graphs}
        self.order = [g.name for g in graphs]
        self.specs, self.modules, self.lowered = {}, {}, 0
        self.call = _marker("memplan_call")
        self.scratch = torch.fx.Graph()  # holds the per-tensor argument nodes

    def spec(self, g, name):
        from executorch.exir.schema import DeviceType, TensorShapeDynamism
        from executorch.exir.tensor import TensorSpec

        t = g.tensors[name]
        s = TensorSpec(self.torch.uint8, [t.size], const="const" in t.attrs)
        if "dynamic" in t.attrs:
            s.shape_dynamism = TensorShapeDynamism.DYNAMIC_UNBOUND
        if "mem_id" in t.attrs:
            s.mem_id = int(t.attrs["mem_id"])
        dev = t.attrs.get("device", "cpu:0")
        kind, _, index = dev.partition(":")
        s.device = DeviceType.CUDA if kind == "cuda" else DeviceType.CPU
        s.device_index = int(index or 0)
        return s

    def make_specs(self, g):
        specs = {n: self.spec(g, n) for n, t in g.tensors.items() if "view" not in t.attrs}
        for n, t in g.tensors.items():
            if "inplace" in t.attrs and n in specs:
                base, offset = specs[root(g, t.attrs["inplace"])], int(t.attrs.get("offset", 0))
                if hasattr(specs[n], "storage_base"):  # PR #21840 and later: storage_base[_offset]
                    specs[n].storage_base, specs[n].storage_base_offset = base, offset
                elif offset:
                    raise SystemExit("et_record: %s: tensor %s has offset=%d, but this ExecuTorch has no storage "
                                     "offsets (PR #21840 added them)" % (g.name, n, offset))
                else:
                    specs[n].inplace_base = base
        self.specs[g.name] = specs

    def arg(self, g, name):
        """A node outside the graph that stands for one tensor as an argument."""
        node = self.scratch.create_node("call_function", self.call, name="arg_" + g.name)
        node.meta["spec"] = self.specs[g.name][root(g, name)]
        return node

    def attr(self, target):
        return self.scratch.create_node("get_attr", target, name="attr")

    def out_specs(self, g, names):
        return [self.specs[g.name][root(g, n)] for n in names]

    def node(self, fx, g, kind, a):
        """The fx node of one `node` line."""
        ins = [n for n in a.get("in", "").split(",") if n]
        outs = [n for n in a.get("out", "").split(",") if n]
        args = [self.arg(g, n) for n in ins]
        hop = self.torch.ops.higher_order
        if kind == "placeholder":
            node = fx.create_node("placeholder", self.target(g, outs[0]), name=outs[0])
        elif kind == "output":
            node = fx.output(tuple(args))
            outs = ins
        elif kind == "cond":
            pred = args[0] if args else None
            node = fx.call_function(hop.cond, (pred, self.attr(a["true"]), self.attr(a["false"]), args[1:]))
        elif kind == "while":
            from executorch.exir.control_flow import while_loop

            node = fx.call_function(while_loop, (self.attr(a["cond"]), self.attr(a["body"]), tuple(args)))
        elif kind in ("map", "scan"):
            node = fx.call_function(hop.map_impl if kind == "map" else hop.scan, (self.attr(a["body"]), args))
        elif kind == "delegate":
            from executorch.exir.delegate import executorch_call_delegate

            self.lowered += 1
            name = "lowered_module_%d" % self.lowered
            self.modules[g.name + ":lowered"].append((name, a["backend"]))
            node = fx.call_function(executorch_call_delegate, (self.attr(name), *args))
        else:
            node = fx.call_function(self.call, tuple(args))
        node.meta["spec"] = self.out_specs(g, outs)
        if kind in ("cond", "while", "map", "scan") and hasattr(self.et, "_hop_output_last_use"):
            # PR #21494 reads a control-flow node's outputs' last use from the
            # nodes that use it (getitem nodes in an export): here each output's
            # stand-in, whose spec is the output's, is one of its users
            for n in outs:
                node.users[self.arg(g, n)] = None
        return node

    def module(self, name):
        """The GraphModule of one graph (built once; sub-graphs attached)."""
        if name in self.modules:
            return self.modules[name]
        g = self.graphs[name]
        self.make_specs(g)
        self.modules[name + ":lowered"] = []
        fx = self.torch.fx.Graph()
        for kind, a in g.nodes:
            self.node(fx, g, kind, a)
        gm = self.torch.fx.GraphModule(self.torch.nn.Module(), fx)
        self.modules[name] = gm
        for kind, a in g.nodes:
            for key in ("true", "false", "cond", "body"):
                if key in a:
                    setattr(gm, a[key], self.module(a[key]))
        for lname, backend in self.modules[name + ":lowered"]:
            lowered = self.torch.nn.Module()
            lowered.backend_id = backend
            setattr(gm, lname, lowered)
        return gm

    def entry_mutable(self):
        g = self.graphs[self.order[0]]
        return {a["out"] for kind, a in g.nodes if kind == "placeholder" and "mutable" in g.tensors[a["out"]].attrs}

    def target(self, g, name):
        """A placeholder's target: its name, as torch.export writes it (so a
        sub-graph placeholder named like an entry mutable buffer collides:
        D13), except a sub-graph's own mutable placeholder, which ExecuTorch
        can only see as mutable under a target of its own."""
        if g.name == self.order[0] or "mutable" not in g.tensors[name].attrs or name in self.entry_mutable():
            return identifier(name)
        return identifier(g.name) + "_9" + identifier(name)

    def signature(self):
        """Every mutable placeholder's target is a buffer the program mutates."""
        mutable = sorted({self.target(g, n) for g in self.graphs.values() for kind, a in g.nodes
                          if kind == "placeholder" for n in [a["out"]] if "mutable" in g.tensors[n].attrs})
        return types.SimpleNamespace(
            inputs_to_buffers={n: "buffer." + n for n in mutable},
            buffers_to_mutate={"mutated." + n: "buffer." + n for n in mutable},
            input_specs=[], output_specs=[])


# ------------------------------------------------------------- planning --

def algorithm(et, name, opts_banks=None):
    """ExecuTorch's greedy or naive, or memplan's adapter (memplan:NAME:
    python/memplan/executorch.py, planner NAME) in their place."""
    if name == "memplan:safe":  # the smallest valid of memplan's opt and greedy and ExecuTorch's greedy
        import memplan.executorch

        return memplan.executorch.smallest_valid(("opt", "greedy"), others=[et.greedy])
    if name.startswith("memplan:"):
        import memplan.executorch

        return memplan.executorch.algorithm(name.split(":", 1)[1])
    if name == "greedy" and opts_banks:  # PR #21821: greedy over a memory map
        return banked_greedy(et, opts_banks)
    return et.greedy if name == "greedy" else et.naive


def banked_greedy(et, spec):
    """BankedGreedy (exir/banked_memory_planning.py, PR #21821) over the map
    SPEC ("NAME=SIZE,...", memplan's --banks: bank k is mem_id k, in that
    order of preference)."""
    _package("executorch.exir.passes", os.path.join(os.path.dirname(et.__file__), "passes"))
    _stand_in_module("executorch.exir.passes.memory_planning_pass", MemoryPlanningPass=object)
    banked = importlib.import_module("executorch.exir.banked_memory_planning")
    banks = []
    for k, (name, size) in enumerate(bank_list(spec)):
        banks.append(banked.Bank(name=name, size=size, mem_id=k + 1))
    return banked.BankedGreedy(banked.TargetMemoryMap(banks))


def bank_list(spec):
    """[(name, bytes)] of a --banks value ("sram=64K,psram:8M")."""
    out = []
    for entry in spec.split(","):
        name, _, size = entry.replace(":", "=").partition("=")
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(size[-1:], 1)
        out.append((name, int(size.rstrip("KMGT")) * mult))
    return out


def verify(et, entry, builder, opts):
    """ExecuTorch's own Verifier on the planned entry graph (as
    MemoryPlanningPass runs it under DEBUG logging): storage reuse, and the
    graph's inputs and outputs; a refusal is exit 1 with its message."""
    import inspect

    kwargs = dict(alloc_graph_input=not opts.no_alloc_inputs, alloc_graph_output=not opts.no_alloc_outputs,
                  graph_signature=builder.signature())
    if "alloc_mutable_buffers" in inspect.signature(et.Verifier.__init__).parameters:  # since 2025
        kwargs["alloc_mutable_buffers"] = not opts.no_alloc_mutable
    v = et.Verifier(entry, **kwargs)
    try:
        pairs = v.verify_storage_reuse()
        v.verify_graph_input_output()
    except Exception as e:
        raise Failure("%s: ExecuTorch's Verifier rejects the plan: %s: %s" % (opts.graph, type(e).__name__,
                                                                              str(e).splitlines()[0][:300]), 1)
    print("et_record: %s: ExecuTorch's Verifier accepts the plan (%d pairs share storage)" % (opts.graph, pairs),
          file=sys.stderr)


def plan(et, builder, opts):
    """ExecuTorch's apply_algo on the entry graph, as MemoryPlanningPass runs it."""
    algo = et.MemoryPlanningAlgorithmSuite(algo_list=[algorithm(et, opts.algo, opts.banks)])
    entry = builder.module(builder.order[0])
    kwargs = {}
    if opts.per_device:
        kwargs["enable_non_cpu_memory_planning"] = True
    try:
        et.apply_algo(algo, entry, opts.alignment, builder.signature(),
                      alloc_graph_input=not opts.no_alloc_inputs, alloc_graph_output=not opts.no_alloc_outputs,
                      alloc_mutable_buffers=not opts.no_alloc_mutable, **kwargs)
    except Exception as e:  # ExecuTorch refuses the graph: memplan's exit 3
        raise Failure("%s: ExecuTorch cannot plan it: %s: %s" % (opts.graph, type(e).__name__, e), 3)
    if opts.verify:
        verify(et, entry, builder, opts)
    return entry


def reachable(builder):
    seen, todo = set(), [builder.order[0]]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for kind, a in builder.graphs[name].nodes:
            todo += [a[k] for k in ("true", "false", "cond", "body") if k in a]
    return [n for n in builder.order if n in seen]


def device_names(gm, et):
    sizes = gm.meta.get("non_const_buffer_sizes", [0, 0])
    names = ["cpu:0"] * len(sizes)
    for d in gm.meta.get("non_const_buffer_device") or []:
        kind = "cuda" if d.device_type.name == "CUDA" else d.device_type.name.lower()
        names[d.buffer_idx] = "%s:%d" % (kind, d.device_index)
    return names


def frees(gm, specs):
    """The free calls insert_calls_to_free added, after original node N."""
    out, index = [], -1
    names = {id(s): n for n, s in specs.items()}
    from executorch.exir import memory

    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is memory.free:
            spec = node.args[0]
            out.append("free %s after=%d" % (names.get(id(spec), "?"), index))
        else:
            index += 1
    return out


def buffer_sizes(gm, specs, entry):
    """A graph's buffers as memplan's plan keeps them: the bytes its
    allocations reach in each pool.  ExecuTorch's greedy plans a sub-graph
    from offset 0 and its non_const_buffer_sizes are exactly that; memplan's
    adapter places a sub-graph's memory inside its parent's and moves its
    specs there (memplan._et_scope), past the sizes apply_algo recorded."""
    sizes = list(gm.meta["non_const_buffer_sizes"])
    for s in ([] if entry else specs.values()):
        if s.mem_offset is not None and s.mem_id is not None and s.mem_id < len(sizes):
            sizes[s.mem_id] = max(sizes[s.mem_id], s.mem_offset + s.allocated_memory)
    return sizes


def write_plan(et, builder, opts):
    algo = opts.algo.split(":", 1)[-1].replace("safe", "opt")  # a name memplan's plan files know
    lines = ["memplan-plan 1",
             "options alignment=%d alloc_inputs=%d alloc_outputs=%d alloc_mutable=%d per_device=%d algo=%s" % (
                 opts.alignment, not opts.no_alloc_inputs, not opts.no_alloc_outputs, not opts.no_alloc_mutable,
                 opts.per_device, algo) + ("" if not opts.banks else " banks=" + ",".join(
                     "%s:%d" % b for b in bank_list(opts.banks)))]
    for i, name in enumerate(reachable(builder)):
        gm, specs = builder.modules[name], builder.specs[name]
        lines += ["graph " + name, "buffers " + " ".join(str(s) for s in buffer_sizes(gm, specs, i == 0)),
                  "devices " + " ".join(device_names(gm, et))]
        for tname, s in specs.items():
            if s.mem_offset is None or s.mem_id is None:
                continue
            lines.append("alloc %s mem_id=%d obj=%d offset=%d size=%d life=%d,%d" % (
                tname, s.mem_id, s.mem_obj_id or 0, s.mem_offset, s.allocated_memory, s.lifetime[0],
                s.lifetime[1]))
        lines += frees(gm, specs) + ["end"]
    return "\n".join(lines) + "\n"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--executorch", required=True, metavar="CHECKOUT")
    p.add_argument("--et-exact", action="store_true", help="accepted and ignored (memplan plan's arguments)")
    p.add_argument("--algo", default="greedy",
                   help="greedy, naive, memplan:NAME (memplan's adapter, planner NAME, in ExecuTorch's place) or "
                        "memplan:safe (the smallest valid of memplan's opt and greedy and ExecuTorch's greedy)")
    p.add_argument("--verify", action="store_true", help="then run ExecuTorch's Verifier on the plan (exit 1: rejected)")
    p.add_argument("--alignment", type=int, default=16)
    p.add_argument("--banks", help="a memory map (NAME=SIZE,...): ExecuTorch's banked greedy (PR #21821's checkout)")
    p.add_argument("--et-upstream", action="append", default=[], help="accepted and ignored (the checkout is the PR)")
    p.add_argument("--no-alloc-inputs", action="store_true")
    p.add_argument("--no-alloc-outputs", action="store_true")
    p.add_argument("--no-alloc-mutable", action="store_true")
    p.add_argument("--per-device", action="store_true")
    p.add_argument("--explain", action="store_true", help="say on stderr what the installed torch lacked")
    p.add_argument("-o", dest="output", default="-")
    p.add_argument("graph")
    return p.parse_args(argv)


def main(argv):
    opts = parse_args(argv)
    try:
        if opts.algo not in ("greedy", "naive") and not opts.algo.startswith("memplan:"):
            raise Failure("--algo is greedy, naive or memplan:NAME, not %r" % opts.algo, 2)
        if not 1 <= opts.alignment <= 1 << 30:
            raise Failure("--alignment must be 1 to 2^30", 2)
        graphs = read_graphs(opts.graph)
        import torch

        et = load_executorch(os.path.abspath(opts.executorch))
        if opts.explain:
            for s in STANDINS:
                print("stood in: " + s, file=sys.stderr)
        builder = Builder(torch, et, graphs)
        plan(et, builder, opts)
        text = write_plan(et, builder, opts)
    except Failure as e:
        print("et_record: " + str(e), file=sys.stderr)
        return e.status
    if opts.output == "-":
        sys.stdout.write(text)
        return 0
    return write_atomically(opts.output, text)


def write_atomically(path, text):
    """A new file beside PATH renamed over it: all of the plan or none."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        os.unlink(tmp)
        print("et_record: %s: %s" % (path, e.strerror), file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
