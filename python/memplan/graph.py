"""Graphs: a program read from .mpg text or built in Python (through the
library's builder, so it is checked by the same rules as a parsed file)."""
import collections
import ctypes

from . import _lib
from ._lib import lib
from .errors import U32, U64, MemplanError, check, in_range

KINDS = ["placeholder", "call", "delegate", "cond", "while", "map", "scan", "output"]
CONST, MUTABLE, DYNAMIC, SCRATCH, PINNED, SHARED = 1, 2, 4, 8, 16, 32  # SCRATCH: a delegate's scratch= tensor

# one tensor of a GraphBuilder, as its builder call gives it
TensorRow = collections.namedtuple("TensorRow", "name size device flags mem_id inplace view at offset")


def _b(s):
    return None if s is None else s.encode("utf-8")


def parse_device(dev):
    """'cpu', 'cuda:1' (or a (type, index) pair) as an _lib.Device."""
    if isinstance(dev, tuple):
        return _lib.Device(*dev)
    kind, _, index = (dev or "cpu").partition(":")
    if kind not in ("cpu", "cuda") or (index and not index.isdigit()):
        raise MemplanError(_lib.EFORMAT, "bad device %r (want cpu, cpu:N, cuda or cuda:N)" % dev)
    return _lib.Device(0 if kind == "cpu" else 1, in_range(int(index or 0), "device index of %r" % dev, U32))


class Program:
    """A parsed or built program (owns the library's mp_program).

    Its lifetime is the binding's to keep: a Plan holds its program, so the
    program lives as long as any plan of it; close() (or an explicit
    __del__) frees it only once no plan of it is left, and a freed program
    raises ValueError where it is used, never reaches the library."""

    def __init__(self, handle, filename):
        self._h = handle
        self._plans = 0  # live plans that point into it
        self.filename = filename

    def close(self):
        if getattr(self, "_h", None) and not getattr(self, "_plans", 0):
            h, self._h = self._h, None
            lib.mp_program_free(h)

    __del__ = close

    @property
    def handle(self):
        if not getattr(self, "_h", None):
            raise ValueError("memplan: this program was freed (close() or __del__)")
        return self._h

    def text(self):
        """The program as .mpg text."""
        return _lib.take_buf(lambda b: lib.mp_graph_write(self.handle, b))

    def save(self, path):
        with open(path, "w") as f:
            f.write(self.text())


def parse(text, filename="<string>"):
    """A program from .mpg text; errors name FILENAME:LINE."""
    err = _lib.Err()
    data = text.encode("utf-8") if isinstance(text, str) else text
    h = lib.mp_graph_parse(data, len(data), _b(filename), ctypes.byref(err))
    check(err, h)
    return Program(h, filename)


def load(path):
    """A program from a .mpg file."""
    with open(path, "rb") as f:
        return parse(f.read(), path)


class GraphBuilder:
    """One graph of a Builder: tensors and nodes, in order."""

    def __init__(self, name):
        self.name, self.tensors, self.nodes = name, [], []
        self.index = {}  # a tensor's name -> its first row

    def row(self, name):
        """The TensorRow a name was declared with."""
        return self.tensors[self.index[name]]

    def place_in(self, name, base, offset):
        """Declare tensor `name` again as written in place into `base`'s
        storage, `offset` bytes in."""
        k = self.index[name]
        self.tensors[k] = self.tensors[k]._replace(inplace=base, offset=offset)

    def tensor(self, name, size, device="cpu", const=False, mutable=False, dynamic=False, mem_id=0,
               inplace=None, view=None, at=None, shared=False, offset=0):
        """A tensor; `at` pins its storage at that byte offset of its pool
        (entry graph only; opt and the peers place the rest around it);
        `shared` marks a mutable tensor as state the methods share;
        `offset` places an in-place tensor or a view that many bytes into
        its base's storage (ExecuTorch's storage_base_offset)."""
        flags = (CONST if const else 0) | (MUTABLE if mutable else 0) | (DYNAMIC if dynamic else 0)
        flags |= SHARED if shared else 0
        flags |= PINNED if at is not None else 0
        where = "graph %r, tensor %r: " % (self.name, name)
        self.index.setdefault(name, len(self.tensors))
        self.tensors.append(TensorRow(name, in_range(size, where + "size", U64), parse_device(device), flags,
                                      in_range(mem_id, where + "mem_id", U32), inplace, view,
                                      in_range(at or 0, where + "at", U64), in_range(offset, where + "offset", U64)))
        return name

    def node(self, kind, inputs=(), outputs=(), op=None, true=None, false=None, cond=None, body=None,
             backend=None, scratch=0):
        """A node; a delegate may declare `scratch` bytes of working memory,
        planned as tensor "scratch.N" that lives during this node alone."""
        if kind not in KINDS:
            raise MemplanError(_lib.EFORMAT, "unknown node kind %r (one of %s)" % (kind, ", ".join(KINDS)))
        sub = {"cond": (true, false), "while": (cond, body), "map": (body, None), "scan": (body, None)}
        scratch = in_range(scratch, "graph %r, node %d: scratch" % (self.name, len(self.nodes)), U64)
        self.nodes.append((KINDS.index(kind), list(inputs), list(outputs), sub.get(kind, (None, None)),
                           backend, op, scratch))


class Builder:
    """A program built in Python: graphs (the first is the entry graph),
    their tensors and nodes; build() checks it as a parsed file is checked
    and raises MemplanError naming the offending call."""

    def __init__(self):
        self.graphs = []
        self.entry = []

    def methods(self, *names):
        """The program's methods (entry graphs), the first graph first."""
        self.entry = list(names)

    def graph(self, name):
        g = GraphBuilder(name)
        self.graphs.append(g)
        return g

    def build(self, filename="<builder>"):
        err = _lib.Err()
        b = lib.mp_builder_new(ctypes.byref(err))
        check(err, b)
        try:
            for g in self.graphs:
                check(err, lib.mp_builder_graph(b, _b(g.name), ctypes.byref(err)) == _lib.OK)
                for t in g.tensors:
                    self._tensor(b, t, err)
                for n in g.nodes:
                    self._node(b, n, err)
            if self.entry:
                names = (_lib.c_char_p * len(self.entry))(*[_b(n) for n in self.entry])
                check(err, lib.mp_builder_methods(b, names, len(self.entry), ctypes.byref(err)) == _lib.OK)
            h = lib.mp_builder_finish(b, ctypes.byref(err))
            check(err, h)
            return Program(h, filename)
        finally:
            lib.mp_builder_free(b)

    @staticmethod
    def _tensor(b, t, err):
        name, size, dev, flags, mem_id, inplace, view, at, offset = t
        spec = _lib.TensorSpec(_b(name), size, dev, flags, mem_id, _b(inplace), _b(view), at, offset)
        check(err, lib.mp_builder_tensor(b, ctypes.byref(spec), ctypes.byref(err)) == _lib.OK)

    @staticmethod
    def _node(b, n, err):
        kind, ins, outs, sub, backend, op, scratch = n
        cin = (_lib.c_char_p * max(1, len(ins)))(*[_b(x) for x in ins])
        cout = (_lib.c_char_p * max(1, len(outs)))(*[_b(x) for x in outs])
        spec = _lib.NodeSpec(kind, cin, len(ins), cout, len(outs), (_lib.c_char_p * 2)(_b(sub[0]), _b(sub[1])),
                             _b(backend), _b(op), scratch)
        check(err, lib.mp_builder_node(b, ctypes.byref(spec), ctypes.byref(err)) == _lib.OK)
