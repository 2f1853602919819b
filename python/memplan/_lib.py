"""libmemplan through ctypes (include/memplan.h, interface 2): where
libmemplan.so.2 is found and each function's signature.  Programs, plans,
options and reports are opaque handles read through accessors; the only
structures mirrored are the four the interface promises never to change
(mp_err, mp_buf, mp_device) or that carry their own size (the builder's
specs).  python/tests/test_abi.py checks them against the C compiler."""
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
    _fields_ = [("struct_size", c_u32), ("name", c_char_p), ("size", c_u64), ("device", Device), ("flags", c_u32),
                ("mem_id", c_u32), ("inplace", c_char_p), ("view", c_char_p), ("at", c_u64),
                ("offset", c_u64)]  # since 2.1

    def __init__(self, *args):
        super().__init__(ctypes.sizeof(TensorSpec), *args)


class NodeSpec(ctypes.Structure):
    _fields_ = [("struct_size", c_u32), ("kind", c_u32), ("inputs", ctypes.POINTER(c_char_p)), ("n_in", c_u32),
                ("outputs", ctypes.POINTER(c_char_p)), ("n_out", c_u32), ("sub", c_char_p * 2),
                ("backend", c_char_p), ("op", c_char_p), ("scratch", c_u64)]

    def __init__(self, *args):
        super().__init__(ctypes.sizeof(NodeSpec), *args)


# the accessors' field numbers (enum mp_alloc_field, mp_report_field,
# mp_finding_field in memplan.h)
ALLOC_MEM_ID, ALLOC_OBJ, ALLOC_OFFSET, ALLOC_SIZE, ALLOC_FIRST, ALLOC_LAST = range(6)
REPORT_VIOLATIONS, REPORT_WARNINGS, REPORT_WASTED, REPORT_TOTAL, REPORT_LOWER, REPORT_BUFFERS = range(6)
FINDING_GRAPH, FINDING_KIND, FINDING_MESSAGE, FINDING_TENSOR0, FINDING_TENSOR1 = range(5)
N_RULES = 9


def _candidates():
    """Where libmemplan.so.2 may be, best first."""
    env = os.environ.get("MEMPLAN_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libmemplan.so.2")  # the build tree
    yield os.path.join(here, "..", "..", "..", "libmemplan.so.2")     # PREFIX/lib/python3/dist-packages
    found = ctypes.util.find_library("memplan")
    if found:
        yield found
    yield "libmemplan.so.2"


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
    raise ImportError("memplan: libmemplan.so.2 not found (build it with `make`, or set MEMPLAN_LIBRARY); "
                      "tried: " + "; ".join(tried))


lib = _load()

_E, _B, _P = ctypes.POINTER(Err), ctypes.POINTER(Buf), c_void_p  # handles are opaque pointers
_SIGS = {
    "mp_version": (c_char_p, []),
    "mp_err_clear": (None, [_E]),
    "mp_buf_init": (None, [_B]),
    "mp_buf_free": (None, [_B]),
    "mp_graph_parse": (_P, [c_char_p, c_size_t, c_char_p, _E]),
    "mp_program_free": (None, [_P]),
    "mp_graph_write": (None, [_P, _B]),
    "mp_builder_new": (_P, [_E]),
    "mp_builder_free": (None, [_P]),
    "mp_builder_graph": (ctypes.c_int, [_P, c_char_p, _E]),
    "mp_builder_tensor": (ctypes.c_int, [_P, ctypes.POINTER(TensorSpec), _E]),
    "mp_builder_node": (ctypes.c_int, [_P, ctypes.POINTER(NodeSpec), _E]),
    "mp_builder_finish": (_P, [_P, _E]),
    "mp_builder_methods": (ctypes.c_int, [_P, ctypes.POINTER(c_char_p), c_u32, _E]),
    "mp_options_new": (_P, [_E]),
    "mp_options_free": (None, [_P]),
    "mp_options_set": (ctypes.c_int, [_P, c_char_p, c_char_p, _E]),
    "mp_options_get": (ctypes.c_int, [_P, c_char_p, _B, _E]),
    "mp_plan_program": (_P, [_P, _P, _E]),
    "mp_plan_free": (None, [_P]),
    "mp_plan_write": (None, [_P, _B]),
    "mp_plan_parse": (_P, [c_char_p, c_size_t, c_char_p, _P, _E]),
    "mp_plan_export": (ctypes.c_int, [_P, _P, c_char_p, c_u64, _B, _E]),
    "mp_plan_summary": (ctypes.c_int, [_P, _P, c_bool, _B, _E]),
    "mp_plan_total_bytes": (c_u64, [_P]),
    "mp_plan_algo": (c_char_p, [_P]),
    "mp_plan_notes": (c_char_p, [_P]),
    "mp_plan_block_count": (c_u32, [_P]),
    "mp_plan_block_name": (c_char_p, [_P, c_u32]),
    "mp_plan_buffer_count": (c_u32, [_P, c_u32]),
    "mp_plan_buffer_size": (c_u64, [_P, c_u32, c_u32]),
    "mp_plan_buffer_device": (Device, [_P, c_u32, c_u32]),
    "mp_plan_alloc_count": (c_u32, [_P, c_u32]),
    "mp_plan_alloc_name": (c_char_p, [_P, c_u32, c_u32]),
    "mp_plan_alloc_get": (c_u64, [_P, c_u32, c_u32, ctypes.c_int]),
    "mp_plan_release_count": (c_u32, [_P, c_u32]),
    "mp_plan_release_name": (c_char_p, [_P, c_u32, c_u32]),
    "mp_plan_release_after": (c_i64, [_P, c_u32, c_u32]),
    "mp_planner_count": (c_u32, []),
    "mp_planner_name": (c_char_p, [c_u32]),
    "mp_planner_summary": (c_char_p, [c_u32]),
    "mp_algo_parse": (ctypes.c_int, [c_char_p]),
    "mp_rule_name": (c_char_p, [c_u32]),
    "mp_verify_plan": (_P, [_P, _P, _E]),
    "mp_report_free": (None, [_P]),
    "mp_report_get": (c_u64, [_P, ctypes.c_int]),
    "mp_report_ratio": (ctypes.c_double, [_P]),
    "mp_report_rule_count": (c_u64, [_P, c_u32]),
    "mp_report_buffer": (ctypes.c_int, [_P, c_u32, ctypes.POINTER(c_u64), ctypes.POINTER(c_u64),
                                        ctypes.POINTER(c_i64)]),
    "mp_report_finding_count": (c_u32, [_P, c_bool]),
    "mp_report_finding": (c_char_p, [_P, c_bool, c_u32, ctypes.c_int]),
    "mp_report_finding_rule": (c_u32, [_P, c_bool, c_u32]),
    "mp_report_write_text": (None, [_P, _B]),
    "mp_device_str": (c_char_p, [Device, ctypes.c_char_p]),
    "mp_program_reorder": (_P, [_P, _P, c_u32, ctypes.POINTER(c_u64), ctypes.POINTER(c_u64),
                                ctypes.POINTER(ctypes.c_int), _E]),
    "mp_verify_order": (ctypes.c_int, [_P, _P, _E]),
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
