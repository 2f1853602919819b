"""Planning and verifying: plan() with any planner of the table, plans read
from .mpp text, verify() with its violations, warnings and quality."""
import ctypes
import os
from collections import namedtuple

from . import _lib
from ._lib import lib
from .errors import U32, U64, MemplanError, check, in_range

Allocation = namedtuple("Allocation", "tensor mem_id obj offset size life")
Finding = namedtuple("Finding", "graph rule kind message tensors")


def _s(p):
    return p.decode("utf-8") if p else ""


def _device(d):
    buf = ctypes.create_string_buffer(24)
    return _s(lib.mp_device_str(d, buf))


class GraphPlan:
    """One graph's block: buffer sizes and devices, allocations by tensor."""

    def __init__(self, h, b):
        self.name = _s(lib.mp_plan_block_name(h, b))
        n = lib.mp_plan_buffer_count(h, b)
        self.buffers = [lib.mp_plan_buffer_size(h, b, i) for i in range(n)]
        self.devices = [_device(lib.mp_plan_buffer_device(h, b, i)) for i in range(n)]
        self.allocations = {}
        for i in range(lib.mp_plan_alloc_count(h, b)):
            name = _s(lib.mp_plan_alloc_name(h, b, i))
            f = [lib.mp_plan_alloc_get(h, b, i, k) for k in range(6)]
            self.allocations[name] = Allocation(name, f[_lib.ALLOC_MEM_ID], f[_lib.ALLOC_OBJ], f[_lib.ALLOC_OFFSET],
                                                f[_lib.ALLOC_SIZE], (f[_lib.ALLOC_FIRST] - 1, f[_lib.ALLOC_LAST] - 1))
        self.frees = {_s(lib.mp_plan_release_name(h, b, i)): lib.mp_plan_release_after(h, b, i)
                      for i in range(lib.mp_plan_release_count(h, b))}


class Plan:
    """A plan (owns the library's mp_plan handle).  graphs[0] is the entry
    graph's block; buffers and tensors are the entry graph's."""

    def __init__(self, handle, program):
        self._h = handle
        self._program = program  # kept alive: the plan's names point into it
        program._plans += 1
        self.algo = _s(lib.mp_plan_algo(handle))
        self.notes = _s(lib.mp_plan_notes(handle))
        self.graphs = [GraphPlan(handle, b) for b in range(lib.mp_plan_block_count(handle))]
        self.total_bytes = lib.mp_plan_total_bytes(handle)

    def close(self):
        """Free the plan (then its program may go)."""
        if getattr(self, "_h", None):
            h, self._h = self._h, None
            lib.mp_plan_free(h)
            self._program._plans -= 1

    __del__ = close

    @property
    def program(self):
        """The program it plans (read-only: the plan points into it)."""
        return self._program

    @property
    def handle(self):
        if not getattr(self, "_h", None):
            raise ValueError("memplan: this plan was freed (close() or __del__)")
        return self._h

    @property
    def buffers(self):
        return self.graphs[0].buffers if self.graphs else []

    @property
    def tensors(self):
        return self.graphs[0].allocations if self.graphs else {}

    def graph(self, name):
        for g in self.graphs:
            if g.name == name:
                return g
        raise KeyError(name)

    def text(self):
        """The plan as .mpp text."""
        return _lib.take_buf(lambda b: lib.mp_plan_write(self.handle, b))

    def save(self, path):
        with open(path, "w") as f:
            f.write(self.text())

    def export(self, fmt, buffer=1):
        """The plan in another tool's format (bytes): 'minimalloc-csv',
        'json' or 'tflm-offline' (docs/formats.md)."""
        err, rc = _lib.Err(), []
        buffer = in_range(buffer, "buffer", U64)
        data = _lib.take_bytes(lambda b: rc.append(lib.mp_plan_export(self.program.handle, self.handle,
                                                                       fmt.encode("utf-8"), buffer, b,
                                                                       ctypes.byref(err))))
        check(err, rc[0] == _lib.OK)
        return data

    def summary(self, json=False):
        """What `memplan plan --summary` writes: per pool, the bytes, the
        lower bound and what is live at the peak (text, or JSON text)."""
        err, rc = _lib.Err(), []
        text = _lib.take_buf(lambda b: rc.append(lib.mp_plan_summary(self.program.handle, self.handle, bool(json), b,
                                                                      ctypes.byref(err))))
        check(err, rc[0] == _lib.OK)
        return text


def planners():
    """The planner table: [(name, summary)]."""
    return [(_s(lib.mp_planner_name(i)), _s(lib.mp_planner_summary(i))) for i in range(lib.mp_planner_count())]


UPSTREAM = (21616, 21840)  # ExecuTorch PRs et_upstream applies


class Options:
    """An mp_options handle, freed with this object."""

    def __init__(self):
        err = _lib.Err()
        self._h = lib.mp_options_new(ctypes.byref(err))
        check(err, self._h)

    def set(self, name, value):
        err = _lib.Err()
        if isinstance(value, bool):
            value = int(value)
        check(err, lib.mp_options_set(self._h, name.encode("utf-8"), str(value).encode("utf-8"),
                                      ctypes.byref(err)) == _lib.OK)

    def get(self, name):
        err, rc = _lib.Err(), []
        text = _lib.take_buf(lambda b: rc.append(lib.mp_options_get(self._h, name.encode("utf-8"), b,
                                                                     ctypes.byref(err))))
        check(err, rc[0] == _lib.OK)
        return text

    def __del__(self):
        if getattr(self, "_h", None):
            lib.mp_options_free(self._h)
            self._h = None


def options(algo="opt", alignment=16, alloc_inputs=True, alloc_outputs=True, alloc_mutable=True,
            per_device=False, et_exact=False, exact=False, budget_ms=None, exact_ms=None, et_upstream=(),
            banks=None, spill_order="value"):
    if lib.mp_algo_parse(algo.encode("utf-8")) < 0:
        raise MemplanError(_lib.EFORMAT, "unknown planner %r (one of %s)" % (algo, ", ".join(n for n, _ in planners())))
    o = Options()
    o.set("algo", algo)
    o.set("alignment", in_range(alignment, "alignment", U32, 1))
    for name, value in (("alloc_inputs", alloc_inputs), ("alloc_outputs", alloc_outputs),
                        ("alloc_mutable", alloc_mutable), ("per_device", per_device), ("et_exact", et_exact),
                        ("exact", exact)):
        o.set(name, bool(value))
    if budget_ms is not None:
        o.set("budget_ms", in_range(budget_ms, "budget_ms", U32))
    if exact_ms is not None:
        o.set("exact_ms", in_range(exact_ms, "exact_ms", U32))
    for pr in et_upstream:
        if pr not in UPSTREAM:
            raise MemplanError(_lib.EFORMAT, "no fix of ExecuTorch PR #%s (%s)" % (pr, ", ".join(map(str, UPSTREAM))))
        o.set("et_upstream", pr)
    if banks is not None:  # a memory map, "sram=256K,dram=64M" (memplan plan --banks)
        o.set("banks", banks)
    if spill_order not in ("value", "program"):
        raise MemplanError(_lib.EFORMAT, "spill_order is 'value' or 'program', not %r" % (spill_order,))
    o.set("spill_order", spill_order)
    return o


def plan(program, algo="opt", **opts):
    """Plan `program` (a Program) with the planner `algo` ('opt', 'greedy',
    'naive', ...); keyword options as memplan plan's flags: alignment,
    alloc_inputs, alloc_outputs, alloc_mutable, per_device, et_exact,
    et_upstream (a list of ExecuTorch PR numbers), exact, budget_ms,
    exact_ms, banks (a memory map, "sram=256K,dram=64M") and spill_order
    ('value' or 'program').  Raises MemplanError (code 3: the graph
    cannot be planned)."""
    if isinstance(program, (str, bytes, os.PathLike)):  # a .mpg file's path
        from .graph import load
        program = load(os.fsdecode(program))
    if not hasattr(program, "handle"):
        raise TypeError("memplan.plan: program is a Program or a .mpg file's path, not %s" % type(program).__name__)
    o = options(algo, **opts)
    err = _lib.Err()
    h = lib.mp_plan_program(program.handle, o._h, ctypes.byref(err))
    check(err, h)
    return Plan(h, program)


def parse_plan(text, program, filename="<string>"):
    """A plan from .mpp text, its names resolved against `program`."""
    err = _lib.Err()
    data = text.encode("utf-8") if isinstance(text, str) else text
    h = lib.mp_plan_parse(data, len(data), filename.encode("utf-8"), program.handle, ctypes.byref(err))
    check(err, h)
    return Plan(h, program)


def load_plan(path, program):
    with open(path, "rb") as f:
        return parse_plan(f.read(), program, path)


class Report:
    """What verify() found: valid (no violation; warnings are only waste),
    the violations and warnings, the quality of the entry graph's buffers."""

    def __init__(self, r):
        get = lambda field: lib.mp_report_get(r, field)  # noqa: E731
        self.violation_count = get(_lib.REPORT_VIOLATIONS)
        self.violations = [self._finding(r, False, i) for i in range(lib.mp_report_finding_count(r, False))]
        self.warning_count = get(_lib.REPORT_WARNINGS)
        self.warnings = [self._finding(r, True, i) for i in range(lib.mp_report_finding_count(r, True))]
        self.wasted_bytes = get(_lib.REPORT_WASTED)
        self.per_rule = {_s(lib.mp_rule_name(k)): lib.mp_report_rule_count(r, k) for k in range(1, _lib.N_RULES)
                         if lib.mp_report_rule_count(r, k)}
        self.total_bytes, self.lower_bound = get(_lib.REPORT_TOTAL), get(_lib.REPORT_LOWER)
        self.ratio = lib.mp_report_ratio(r)
        self.buffers = []
        for i in range(get(_lib.REPORT_BUFFERS)):
            nbytes, lower, peak = _lib.c_u64(), _lib.c_u64(), _lib.c_i64()
            lib.mp_report_buffer(r, i, ctypes.byref(nbytes), ctypes.byref(lower), ctypes.byref(peak))
            self.buffers.append((nbytes.value, lower.value))
        self.text = _lib.take_buf(lambda b: lib.mp_report_write_text(r, b))

    @property
    def valid(self):
        return self.violation_count == 0

    @staticmethod
    def _finding(r, warning, i):
        field = lambda k: _s(lib.mp_report_finding(r, warning, i, k))  # noqa: E731
        tensors = tuple(t for t in (field(_lib.FINDING_TENSOR0), field(_lib.FINDING_TENSOR1)) if t)
        return Finding(field(_lib.FINDING_GRAPH), _s(lib.mp_rule_name(lib.mp_report_finding_rule(r, warning, i))),
                       field(_lib.FINDING_KIND), field(_lib.FINDING_MESSAGE), tensors)


def verify(program, plan_):
    """Check a plan against its program; returns a Report (never raises for
    an invalid plan: report.valid says it)."""
    err = _lib.Err()
    r = lib.mp_verify_plan(program.handle, plan_.handle, ctypes.byref(err))
    check(err, r)
    try:
        return Report(r)
    finally:
        lib.mp_report_free(r)


class Reordered:
    """What reorder() gives: `program` (the reordered Program), the peak
    live bytes `before` and `after`, and `optimal` (proved)."""

    def __init__(self, program, before, after, optimal):
        self.program, self.before, self.after, self.optimal = program, before, after, optimal


def reorder(program, effort=8, **opts):
    """The program with each graph's nodes in an order of lower peak live
    bytes (memplan reorder; keyword options as plan's: alignment,
    alloc_inputs, alloc_outputs, alloc_mutable, per_device)."""
    o = options("opt", **opts)
    err = _lib.Err()
    before, after, optimal = _lib.c_u64(), _lib.c_u64(), ctypes.c_int()
    h = lib.mp_program_reorder(program.handle, o._h, in_range(effort, "effort", U32), ctypes.byref(before),
                               ctypes.byref(after), ctypes.byref(optimal), ctypes.byref(err))
    check(err, h)
    from .graph import Program

    return Reordered(Program(h, program.filename), before.value, after.value, bool(optimal.value))


def node_order(original, reordered):
    """Where each node of `reordered` (a reorder of `original`, one graph)
    was in `original`: its index there, in reordered's order.  A node is
    known by its line of text; equal lines are matched in their order."""
    def lines(p):
        return [line for line in p.text().splitlines() if line.startswith("node ")]

    at = {}
    for k, line in enumerate(lines(original)):
        at.setdefault(line, []).append(k)
    return [at[line].pop(0) for line in lines(reordered)]


def verify_order(original, reordered):
    """None when `reordered` is a valid schedule of `original`, else the
    first rule it breaks (memplan verify --order)."""
    err = _lib.Err()
    rc = lib.mp_verify_order(original.handle, reordered.handle, ctypes.byref(err))
    if rc == _lib.OK:
        return None
    if rc == _lib.EINVALID:
        return err.msg.decode("utf-8", "replace")
    check(err, None)
