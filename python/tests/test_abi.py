"""Runs first (make test stops at the first failure): the ctypes mirror of
include/memplan.h has the header's layout, so no other test reads memory
through a shifted field."""
import ctypes
import os
import subprocess

from memplan import _lib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_struct_sizes_match_the_c_header(tmp_path):
    """The ctypes mirror has the header's layout (a field added in C and not
    here would shift every field after it)."""
    names = {"mp_err": _lib.Err, "mp_device": _lib.Device, "mp_buf": _lib.Buf, "mp_tensor_spec": _lib.TensorSpec,
             "mp_node_spec": _lib.NodeSpec, "mp_options": _lib.Options, "mp_alloc": _lib.Alloc,
             "mp_free": _lib.Free, "mp_graph_plan": _lib.GraphPlan, "mp_plan": _lib.Plan,
             "mp_violation": _lib.Violation, "mp_verify_report": _lib.Report, "mp_planner": _lib.Planner}
    src = tmp_path / "sizes.c"
    src.write_text('#include <stdio.h>\n#include "memplan.h"\nint main(void) {\n' + "".join(
        '    printf("%s %%zu\\n", sizeof(%s));\n' % (n, n) for n in names) + "    return 0;\n}\n")
    exe = tmp_path / "sizes"
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-std=c11", "-I", os.path.join(ROOT, "include"), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, size = line.split()
        assert ctypes.sizeof(names[name]) == int(size), name
