"""torch.fx graphs as memplan programs.

from_graph_module(gm, example_inputs) runs the graph once on the example
inputs (an fx Interpreter) and records, for every value a node produces,
its tensors, their bytes (numel x element size) and which earlier tensor's
storage each one shares.  That decides the program:
- user inputs are placeholders; parameters and buffers (of get_attr nodes
  and of the modules call_module nodes run) are `const` placeholders;
- a node's tensor results are its out= (a tuple gives several tensors;
  getitem of a tuple picks one and adds no node, getitem of a tensor,
  x[idx] or x[x > 0], is indexing: a node, a copy or a view as the storage
  says); results that are not tensors (ints, sizes) are not tensors of the
  program;
- a buffer the run changes (BatchNorm's running statistics in train mode,
  an `ema` buffer updated with add_) is `mutable` state, not `const`;
- a result that shares an input's storage is `inplace=` that input when the
  operation is in-place (relu_, add_, inplace=True modules and functions),
  else `view=` it (view, reshape when it is a view, flatten, transpose,
  permute, expand, slicing, ...): whatever the op's name, the storage says;
- a view or an in-place result inside its base's storage (a slice, a
  narrow, a split piece: contiguous, past the base's start) carries
  `offset=` its bytes' place in the base;
- with cat_in_place=True, a torch.cat whose output holds its pieces one
  after another (every dimension before the cat's is 1) gets the pieces
  that calls made for it alone written in place into its output
  (`inplace=` the output, `offset=` their place): one allocation instead
  of the pieces and their copy;
- every node names its operator: op= the target's qualified name.
Needs torch (Debian's python3-torch); memplan itself does not."""
import operator
import re

import torch
import torch.fx

from .graph import Builder

_OP_CHARS = re.compile(r"[^A-Za-z0-9_.$:/@+()\[\]<>-]")
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.$-]")


def _name(s):
    return _NAME_CHARS.sub("_", s)


def op_name(gm, node):
    """The qualified name of what a node runs."""
    if node.op == "call_module":
        m = gm.get_submodule(node.target)
        q = "%s.%s" % (type(m).__module__, type(m).__qualname__)
    elif node.op == "call_method":
        q = "torch.Tensor." + node.target
    elif node.op == "call_function":
        q = torch.fx.node._get_qualified_name(node.target)
    else:
        q = node.op
    return _OP_CHARS.sub("_", q)


def _is_inplace(gm, node):
    if node.kwargs.get("inplace") is True:
        return True
    if node.op == "call_module":
        return getattr(gm.get_submodule(node.target), "inplace", False) is True
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    return isinstance(name, str) and name.endswith("_") and not name.endswith("__")


def _storage(t):
    return t.storage().data_ptr() if t.numel() else None


def _tensors(value):
    """The tensors of a result, flattened (tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


class _Recorder(torch.fx.Interpreter):
    """Runs the graph and keeps every node's result."""

    def __init__(self, gm):
        super().__init__(gm)
        self.results = {}

    def run_node(self, n):
        r = super().run_node(n)
        self.results[n] = r
        return r


def _offset_in(t, base):
    """Where t's bytes start in base's, when both are contiguous and t lies
    inside base (a slice, a narrow, a split piece); else 0 (no offset)."""
    if not (t.is_contiguous() and base.is_contiguous()) or t.dtype != base.dtype:
        return 0
    at = (t.storage_offset() - base.storage_offset()) * t.element_size()
    fits = 0 < at and at + t.numel() * t.element_size() <= base.numel() * base.element_size()
    return at if fits else 0


_CATS = (torch.cat, getattr(torch, "concat", torch.cat))
# offsets the exporter gives a cat's pieces keep any alignment up to this
_CAT_ALIGN = 64


class _Export:
    def __init__(self, gm, results, graph_name, mutated=frozenset(), cat_in_place=False):
        self.gm, self.results, self.mutated = gm, results, mutated
        self.cat_in_place = cat_in_place
        self.b = Builder()
        self.g = self.b.graph(graph_name)
        self.names = {}  # id(tensor) -> its tensor name
        self.tensor = {}  # its tensor name -> the tensor
        self.made_by = {}  # tensor name -> the fx node that made it (a call's one new tensor)
        self.owner = {}  # storage -> the first tensor name that holds it
        self.used = set()
        self.fx_of = {}  # the graph's node index -> the fx node it stands for (calls only)

    def fresh(self, base):
        name, k = _name(base), 1
        while name in self.used:
            name, k = "%s_%d" % (_name(base), k), k + 1
        self.used.add(name)
        return name

    def declare(self, t, base, const=False, inplace=None, view=None, mutable=False):
        name = self.fresh(base)
        on = inplace or view
        offset = _offset_in(t, self.tensor[on]) if on else 0
        self.g.tensor(name, t.numel() * t.element_size(), const=const, inplace=inplace, view=view, mutable=mutable,
                      offset=offset)
        self.names[id(t)] = name
        self.tensor[name] = t
        s = _storage(t)
        if s is not None and s not in self.owner:
            self.owner[s] = name
        return name

    def placeholders(self):
        """User inputs, then every parameter and buffer the graph reads."""
        for n in self.gm.graph.nodes:
            if n.op == "placeholder":
                for k, t in enumerate(_tensors(self.results[n])):
                    self.g.node("placeholder", outputs=[self.declare(t, n.name if not k else "%s_%d" % (n.name, k))])
        for n in self.gm.graph.nodes:
            if n.op == "get_attr":
                for t in _tensors(self.results[n]):
                    self.const(t, n.target)
            elif n.op == "call_module":
                m = self.gm.get_submodule(n.target)
                for pname, p in list(m.named_parameters(recurse=False)) + list(m.named_buffers(recurse=False)):
                    if p is not None:
                        self.const(p, "%s.%s" % (n.target, pname))

    def const(self, t, name):
        """A parameter or buffer: const, or mutable state when the run
        changed it."""
        if id(t) not in self.names:
            changed = id(t) in self.mutated
            self.g.node("placeholder", outputs=[self.declare(t, name, const=not changed, mutable=changed)])

    def inputs_of(self, n):
        ins = []
        torch.fx.node.map_arg((n.args, n.kwargs), lambda x: ins.extend(_tensors(self.results.get(x))) or x)
        if n.op == "call_module":
            m = self.gm.get_submodule(n.target)
            ins += [p for p in list(m.parameters(recurse=False)) + list(m.buffers(recurse=False)) if p is not None]
        return [t for t in ins if id(t) in self.names]

    def compute(self, n):
        ins = self.inputs_of(n)
        in_names = list(dict.fromkeys(self.names[id(t)] for t in ins))
        outs = []
        inplace = _is_inplace(self.gm, n)
        for k, t in enumerate(_tensors(self.results[n])):
            label = n.name if k == 0 else "%s_%d" % (n.name, k)
            if inplace and ins and (t is ins[0] or _storage(t) == _storage(ins[0])):
                # relu_(x), ReLU(inplace=True): x's bytes, a new value
                outs.append(self.declare(t, label, inplace=self.names[id(ins[0])]))
                continue
            if id(t) in self.names:  # an input handed back (contiguous(), getitem of a tuple)
                outs.append(self.names[id(t)])
                continue
            # a view of the input whose storage it shares (the latest value
            # of those bytes), else of the storage's first tensor
            same = [x for x in ins if _storage(x) is not None and _storage(x) == _storage(t)]
            base = self.names[id(same[0])] if same else self.owner.get(_storage(t))
            outs.append(self.declare(t, label) if base is None else self.declare(t, label, view=base))
        fresh = [o for o in outs if o not in in_names]
        source = self.results.get(n.args[0]) if n.args and isinstance(n.args[0], torch.fx.Node) else None
        if n.op == "call_function" and n.target is operator.getitem and not isinstance(source, torch.Tensor):
            return  # picks a tensor of a tuple that is already there (or a view of one)
        if len(fresh) == 1 and len(outs) == 1 and fresh[0] == outs[0]:
            self.made_by[fresh[0]] = n
        if self.cat_in_place and fresh and n.op == "call_function" and n.target in _CATS:
            self.cat_pieces_in_place(n, fresh[0])
        if fresh or in_names:
            self.fx_of[len(self.g.nodes)] = n
            self.g.node("call", in_names, fresh, op=op_name(self.gm, n))

    def cat_pieces_in_place(self, n, out):
        """torch.cat's output holds its pieces one after another when every
        dimension before the cat's is 1 (a batch of one, cat by channel).  A
        piece that calls made for this cat alone (a conv, then a ReLU in
        place on it: an in-place family whose every value only the family
        and the cat read) is then written in place into its part of the
        output: the family's root becomes inplace= the output at offset= its
        place, and the family needs no bytes of its own."""
        pieces = n.args[0] if n.args else n.kwargs.get("tensors")
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        t = self.tensor[out]
        if not isinstance(pieces, (list, tuple)) or not isinstance(dim, int) or not t.is_contiguous():
            return
        if any(s != 1 for s in t.shape[:dim % t.dim() if t.dim() else 0]):
            return
        at = 0
        for p in pieces:
            x = self.results.get(p) if isinstance(p, torch.fx.Node) else None
            if not isinstance(x, torch.Tensor):
                return
            root = self.family_for_cat(self.names.get(id(x)), n)
            if root and x.is_contiguous() and x.dtype == t.dtype and at % _CAT_ALIGN == 0:
                self.g.place_in(root, out, at)
            at += x.numel() * x.element_size()

    def family_for_cat(self, name, cat):
        """The root of name's in-place chain when the chain can move into
        cat's output: calls made every member (the root a fresh tensor of
        the piece's size), at offset 0 each, and only the chain's own calls
        and the cat read them; else None."""
        chain, row = [], None
        while name is not None and name in self.made_by and name not in chain:
            chain.append(name)
            row = self.g.row(name)
            if row.view is not None or row.offset:
                return None  # a view, or already at an offset
            name = row.inplace
        if not chain or name is not None or row.size != self.g.row(chain[0]).size:
            return None  # not a whole chain of calls, or the root is not the piece's size
        makers = {self.made_by[m] for m in chain} | {cat}
        if any(set(self.made_by[m].users) - makers for m in chain):
            return None
        return chain[-1]

    def run(self):
        self.placeholders()
        for n in self.gm.graph.nodes:
            if n.op in ("call_function", "call_method", "call_module"):
                self.compute(n)
            elif n.op == "output":
                outs = [self.names[id(t)] for t in _tensors(self.results[n]) if id(t) in self.names]
                self.g.node("output", list(dict.fromkeys(outs)))
        return self.b


def _inputs(example_inputs):
    """A bare tensor is one input."""
    if isinstance(example_inputs, torch.Tensor):
        return (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TypeError("memplan.fx: example_inputs is a tensor or a tuple of them, not %s"
                        % type(example_inputs).__name__)
    return tuple(example_inputs)


def _buffers(gm):
    """Every buffer the graph module holds (its modules', get_attr's)."""
    return {id(b): b for b in gm.buffers()}


def from_graph_module(gm, example_inputs, graph_name="main", cat_in_place=False):
    """The memplan Program of an fx GraphModule, from one run on
    example_inputs (a tensor, or a tuple of them).  The run may change the
    module's buffers (BatchNorm in train mode): they are exported as
    mutable state and given back their values afterwards."""
    example_inputs = _inputs(example_inputs)
    return _export(gm, example_inputs, graph_name, cat_in_place)[0]


def _export(gm, example_inputs, graph_name="main", cat_in_place=False):
    """(Program, _Export) of one run of gm, its buffers given back."""
    before = {k: b.detach().clone() for k, b in _buffers(gm).items()}
    rec = _Recorder(gm)
    try:
        with torch.no_grad():
            rec.run(*example_inputs)
        bufs = _buffers(gm)
        mutated = frozenset(k for k, b in bufs.items() if k in before and not torch.equal(before[k], b))
    finally:
        with torch.no_grad():
            for k, b in _buffers(gm).items():
                if k in before:
                    b.copy_(before[k])
    ex = _Export(gm, rec.results, graph_name, mutated, cat_in_place)
    return ex.run().build("<torch.fx>"), ex


class UntraceableError(Exception):
    """torch.fx could not trace the model (data-dependent control flow,
    calls it cannot follow): the message says which model and why."""


def from_module(module, example_inputs, graph_name="main", train=False, cat_in_place=False):
    """Trace an nn.Module with torch.fx.symbolic_trace, then as above, in
    eval mode (train=True: in train mode).  The module is left as it was:
    its modes and its buffers' values are given back.  Raises
    UntraceableError when torch.fx cannot trace it."""
    modes = [(m, m.training) for m in module.modules()]
    module.train(train)
    try:
        try:
            gm = torch.fx.symbolic_trace(module)
        except Exception as e:  # torch.fx raises TraceError, TypeError, NotImplementedError, ...
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise UntraceableError("%s: torch.fx cannot trace it (%s: %s); export a traceable part, or mark the "
                                   "data-dependent code with torch.fx.wrap" % (type(module).__name__,
                                                                             type(e).__name__, first)) from e
        return from_graph_module(gm, example_inputs, graph_name, cat_in_place)
    finally:
        for m, mode in modes:
            m.training = mode


def reorder(gm, example_inputs, effort=8, **opts):
    """An fx GraphModule whose nodes run in an order of lower peak live
    bytes (memplan reorder, docs/reorder.md), for a user to apply before
    lowering (ExecuTorch's to_executorch): (the new GraphModule, the
    memplan.Reordered with the peak before and after).  gm is not changed.
    Calls keep every dependency memplan sees (data, writes in place);
    the nodes memplan does not see (getitem, shapes, attributes) go right
    before their first use.  Keyword options as memplan.reorder's."""
    import copy

    from .planning import node_order, reorder as reorder_program

    example_inputs = _inputs(example_inputs)
    prog, ex = _export(gm, example_inputs)
    done = reorder_program(prog, effort, **opts)
    new = copy.deepcopy(gm)
    by_name = {n.name: n for n in new.graph.nodes}
    calls = [by_name[ex.fx_of[k].name] for k in node_order(prog, done.program) if k in ex.fx_of]
    _move(new.graph, calls)
    new.recompile()
    return new, done


def _move(graph, calls):
    """graph's nodes in the order of calls, every other node right before
    its first use (each after what it reads)."""
    order, placed = [], set()

    def emit(n):
        if n in placed:
            return
        placed.add(n)
        for arg in n.all_input_nodes:
            emit(arg)
        order.append(n)

    nodes = list(graph.nodes)
    for n in nodes:
        if n.op in ("placeholder", "get_attr"):
            emit(n)
    for n in calls:
        emit(n)
    for n in nodes:
        if n.op != "output":
            emit(n)
    emit(next(n for n in nodes if n.op == "output"))
    prev = order[0]
    for n in order[1:]:
        if prev.next is not n:
            prev.append(n)
        prev = n
    graph.lint()
