"""The ctypes mirror of include/memplan.h: where libmemplan.so.1 is found,
the structures memplan hands out, and each function's signature.  Kept in
step with the header by hand; python/tests/test_abi.py checks the sizes
that a mismatch would break against the C compiler's view of them."""
import ctypes
import ctypes.util
import os

c_u32, c_u64, c_i32, c_i64 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_int64
c_char_p, c_void_p, c_bool, c_size_t = ctypes.c_char_p, ctypes.c_void_p, ctypes.c_bool, ctypes.c_size_t

# error codes (mp_err.code) and the exit statuses they map to
OK, EINVALID, EFORMAT, EPLAN, EIO, ENOMEM = range(6)


class Err(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("limit", c_bool), ("msg", ctypes.c_char * 1024)]


class Device(ctypes.Structure):
    _fields_ = [("type", c_u32), ("index", c_u32)]


class Buf(ctypes.Structure):
    _fields_ = [("data", ctypes.POINTER(ctypes.c_char)), ("len", c_size_t), ("cap", c_size_t),
                ("failed", c_bool)]


class TensorSpec(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("size", c_u64), ("device", Device), ("flags", c_u32),
                ("mem_id", c_u32), ("inplace", c_char_p), ("view", c_char_p), ("at", c_u64)]


class NodeSpec(ctypes.Structure):
    _fields_ = [("kind", c_u32), ("inputs", ctypes.POINTER(c_char_p)), ("n_in", c_u32),
                ("outputs", ctypes.POINTER(c_char_p)), ("n_out", c_u32), ("sub", c_char_p * 2),
                ("backend", c_char_p), ("op", c_char_p), ("scratch", c_u64)]


MAX_BANKS = 8


class Bank(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 32), ("capacity", c_u64)]


class Banks(ctypes.Structure):
    _fields_ = [("n", c_u32), ("bank", Bank * MAX_BANKS)]


class Options(ctypes.Structure):
    _fields_ = [("alignment", c_u32), ("alloc_inputs", c_bool), ("alloc_outputs", c_bool),
                ("alloc_mutable", c_bool), ("per_device", c_bool), ("algo", c_u32), ("et_exact", c_bool),
                ("exact", c_bool), ("budget_ms", c_u32), ("exact_ms", c_u32), ("replan_limit", c_u64),
                ("et_upstream", c_u32), ("banks", Banks), ("spill_order", c_u32)]


class Alloc(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("tensor", c_i32), ("line", c_i32), ("mem_id", c_u64), ("obj", c_u64),
                ("offset", c_u64), ("size", c_u64), ("life_start", c_i64), ("life_end", c_i64)]


class Free(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("tensor", c_i32), ("line", c_i32), ("after", c_i64)]


class GraphPlan(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("graph", c_i32), ("line", c_i32), ("buffers", ctypes.POINTER(c_u64)),
                ("devices", ctypes.POINTER(Device)), ("n_buffers", c_u32), ("n_devices", c_u32),
                ("allocs", ctypes.POINTER(Alloc)), ("n_allocs", c_u32), ("frees", ctypes.POINTER(Free)),
                ("n_frees", c_u32)]


class Plan(ctypes.Structure):
    _fields_ = [("opts", Options), ("raw_alignment", c_u64), ("raw_flags", c_u64 * 4), ("algo_name", c_char_p),
                ("graphs", ctypes.POINTER(GraphPlan)), ("n_graphs", c_u32), ("notes", c_char_p),
                ("arena", c_void_p)]


class Violation(ctypes.Structure):
    _fields_ = [("graph", c_char_p), ("rule", c_u32), ("kind", c_char_p), ("msg", c_char_p),
                ("tensors", c_char_p * 2), ("buffer", c_i64), ("ranges", (c_u64 * 2) * 2), ("n_ranges", c_u32),
                ("nodes", c_i64 * 2)]


N_RULES = 9


class Report(ctypes.Structure):
    _fields_ = [("n_violations", c_u64), ("per_rule", c_u64 * N_RULES), ("v", ctypes.POINTER(Violation)),
                ("n_v", c_u32), ("total_bytes", c_u64), ("lower_bound", c_u64), ("ratio", ctypes.c_double),
                ("buf_bytes", ctypes.POINTER(c_u64)), ("buf_lower", ctypes.POINTER(c_u64)), ("n_buffers", c_u32),
                ("arena", c_void_p), ("n_warnings", c_u64), ("wasted_bytes", c_u64),
                ("w", ctypes.POINTER(Violation)), ("n_w", c_u32), ("buf_peak", ctypes.POINTER(c_i64))]


class Planner(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("summary", c_char_p), ("plan", c_void_p), ("caps", c_u32),
                ("color", c_char_p)]


def _candidates():
    """Where libmemplan.so.1 may be, best first."""
    env = os.environ.get("MEMPLAN_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libmemplan.so.1")  # the build tree
    yield os.path.join(here, "..", "..", "..", "libmemplan.so.1")     # PREFIX/lib/python3/dist-packages
    found = ctypes.util.find_library("memplan")
    if found:
        yield found
    yield "libmemplan.so.1"


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("memplan: libmemplan.so.1 not found (build it with `make`, or set MEMPLAN_LIBRARY); "
                      "tried: " + "; ".join(tried))


lib = _load()

_SIGS = {
    "mp_version": (c_char_p, []),
    "mp_err_clear": (None, [ctypes.POINTER(Err)]),
    "mp_buf_init": (None, [ctypes.POINTER(Buf)]),
    "mp_buf_free": (None, [ctypes.POINTER(Buf)]),
    "mp_graph_parse": (c_void_p, [c_char_p, c_size_t, c_char_p, ctypes.POINTER(Err)]),
    "mp_program_free": (None, [c_void_p]),
    "mp_graph_write": (None, [c_void_p, ctypes.POINTER(Buf)]),
    "mp_builder_new": (c_void_p, [ctypes.POINTER(Err)]),
    "mp_builder_free": (None, [c_void_p]),
    "mp_builder_graph": (ctypes.c_int, [c_void_p, c_char_p, ctypes.POINTER(Err)]),
    "mp_builder_tensor": (ctypes.c_int, [c_void_p, ctypes.POINTER(TensorSpec), ctypes.POINTER(Err)]),
    "mp_builder_node": (ctypes.c_int, [c_void_p, ctypes.POINTER(NodeSpec), ctypes.POINTER(Err)]),
    "mp_builder_finish": (c_void_p, [c_void_p, ctypes.POINTER(Err)]),
    "mp_builder_methods": (ctypes.c_int, [c_void_p, ctypes.POINTER(c_char_p), c_u32, ctypes.POINTER(Err)]),
    "mp_options_default": (None, [ctypes.POINTER(Options)]),
    "mp_banks_parse": (ctypes.c_int, [c_char_p, ctypes.POINTER(Banks), ctypes.POINTER(Err)]),
    "mp_plan_free": (None, [ctypes.POINTER(Plan)]),
    "mp_plan_write": (None, [ctypes.POINTER(Plan), ctypes.POINTER(Buf)]),
    "mp_plan_parse": (ctypes.POINTER(Plan), [c_char_p, c_size_t, c_char_p, c_void_p, ctypes.POINTER(Err)]),
    "mp_plan_total_bytes": (c_u64, [ctypes.POINTER(Plan)]),
    "mp_planner_count": (c_u32, []),
    "mp_planner_get": (ctypes.POINTER(Planner), [c_u32]),
    "mp_algo_parse": (ctypes.c_int, [c_char_p]),
    "mp_plan_program": (ctypes.POINTER(Plan), [c_void_p, ctypes.POINTER(Options), ctypes.POINTER(Err)]),
    "mp_rule_name": (c_char_p, [c_u32]),
    "mp_verify": (ctypes.c_int, [c_void_p, ctypes.POINTER(Plan), ctypes.POINTER(Report), ctypes.POINTER(Err)]),
    "mp_verify_report_free": (None, [ctypes.POINTER(Report)]),
    "mp_verify_write_text": (None, [ctypes.POINTER(Report), ctypes.POINTER(Buf)]),
    "mp_device_str": (c_char_p, [Device, ctypes.c_char_p]),
    "mp_plan_export": (ctypes.c_int, [c_void_p, ctypes.POINTER(Plan), c_char_p, c_u64, ctypes.POINTER(Buf),
                                      ctypes.POINTER(Err)]),
}
for _name, (_res, _args) in _SIGS.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args


def take_bytes(fill):
    """Run fill(buf) on a fresh mp_buf and return its bytes."""
    b = Buf()
    lib.mp_buf_init(ctypes.byref(b))
    try:
        fill(ctypes.byref(b))
        if b.failed:
            raise MemoryError("memplan: out of memory writing text")
        return ctypes.string_at(b.data, b.len) if b.len else b""
    finally:
        lib.mp_buf_free(ctypes.byref(b))


def take_buf(fill):
    """Run fill(buf) on a fresh mp_buf and return its text."""
    return take_bytes(fill).decode("utf-8")
