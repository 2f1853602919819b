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

    def __init__(self, gp):
        self.name = _s(gp.name)
        self.buffers = [gp.buffers[i] for i in range(gp.n_buffers)]
        self.devices = [_device(gp.devices[i]) for i in range(gp.n_devices)]
        self.allocations = {}
        for i in range(gp.n_allocs):
            a = gp.allocs[i]
            self.allocations[_s(a.name)] = Allocation(_s(a.name), a.mem_id, a.obj, a.offset, a.size,
                                                      (a.life_start, a.life_end))
        self.frees = {_s(gp.frees[i].name): gp.frees[i].after for i in range(gp.n_frees)}


class Plan:
    """A plan (owns the library's mp_plan).  graphs[0] is the entry graph's
    block; buffers and tensors are the entry graph's."""

    def __init__(self, handle, program):
        self._h = handle
        self._program = program  # kept alive: the plan's names point into it
        program._plans += 1
        p = handle.contents
        self.algo = _s(p.algo_name)
        self.notes = _s(p.notes)
        self.graphs = [GraphPlan(p.graphs[i]) for i in range(p.n_graphs)]
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


def planners():
    """The planner table: [(name, summary)]."""
    out = []
    for i in range(lib.mp_planner_count()):
        p = lib.mp_planner_get(i).contents
        out.append((_s(p.name), _s(p.summary)))
    return out


UPSTREAM = {21616: 1, 21840: 2}  # ExecuTorch PRs --et-upstream applies (MP_UPSTREAM_*)


def options(algo="opt", alignment=16, alloc_inputs=True, alloc_outputs=True, alloc_mutable=True,
            per_device=False, et_exact=False, exact=False, budget_ms=None, exact_ms=None, et_upstream=(),
            banks=None, spill_order="value"):
    o = _lib.Options()
    lib.mp_options_default(ctypes.byref(o))
    index = lib.mp_algo_parse(algo.encode("utf-8"))
    if index < 0:
        raise MemplanError(_lib.EFORMAT, "unknown planner %r (one of %s)" % (algo, ", ".join(n for n, _ in planners())))
    o.algo, o.alignment = index, in_range(alignment, "alignment", U32, 1)
    o.alloc_inputs, o.alloc_outputs, o.alloc_mutable = alloc_inputs, alloc_outputs, alloc_mutable
    o.per_device, o.et_exact, o.exact = per_device, et_exact, exact
    if budget_ms is not None:
        o.budget_ms = in_range(budget_ms, "budget_ms", U32)
    if exact_ms is not None:
        o.exact_ms = in_range(exact_ms, "exact_ms", U32)
    for pr in et_upstream:
        if pr not in UPSTREAM:
            raise MemplanError(_lib.EFORMAT, "no fix of ExecuTorch PR #%s (%s)" % (pr, ", ".join(map(str, UPSTREAM))))
        o.et_exact, o.et_upstream = True, o.et_upstream | UPSTREAM[pr]
    if banks is not None:  # a memory map, "sram=256K,dram=64M" (memplan plan --banks)
        err = _lib.Err()
        check(err, lib.mp_banks_parse(banks.encode("utf-8"), ctypes.byref(o.banks), ctypes.byref(err)) == _lib.OK)
    if spill_order not in ("value", "program"):
        raise MemplanError(_lib.EFORMAT, "spill_order is 'value' or 'program', not %r" % (spill_order,))
    o.spill_order = 0 if spill_order == "value" else 1
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
    h = lib.mp_plan_program(program.handle, ctypes.byref(o), ctypes.byref(err))
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
        self.violation_count = r.n_violations
        self.violations = [self._finding(r.v[i]) for i in range(r.n_v)]
        self.warning_count = r.n_warnings
        self.warnings = [self._finding(r.w[i]) for i in range(r.n_w)]
        self.wasted_bytes = r.wasted_bytes
        self.per_rule = {_s(lib.mp_rule_name(k)): r.per_rule[k] for k in range(1, _lib.N_RULES) if r.per_rule[k]}
        self.total_bytes, self.lower_bound, self.ratio = r.total_bytes, r.lower_bound, r.ratio
        self.buffers = [(r.buf_bytes[i], r.buf_lower[i]) for i in range(r.n_buffers)]
        self.text = _lib.take_buf(lambda b: lib.mp_verify_write_text(ctypes.byref(r), b))

    @property
    def valid(self):
        return self.violation_count == 0

    @staticmethod
    def _finding(v):
        tensors = tuple(_s(t) for t in v.tensors if t)
        return Finding(_s(v.graph), _s(lib.mp_rule_name(v.rule)), _s(v.kind), _s(v.msg), tensors)


def verify(program, plan_):
    """Check a plan against its program; returns a Report (never raises for
    an invalid plan: report.valid says it)."""
    r, err = _lib.Report(), _lib.Err()
    rc = lib.mp_verify(program.handle, plan_.handle, ctypes.byref(r), ctypes.byref(err))
    try:
        check(err, rc in (_lib.OK, _lib.EINVALID))
        return Report(r)
    finally:
        lib.mp_verify_report_free(ctypes.byref(r))
