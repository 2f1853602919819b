"""Runs first (make test stops at the first failure): the five structures
the binding mirrors have the header's layout, so no other test reads
memory through a shifted field; everything else is an opaque handle."""
import ctypes
import os
import subprocess

from memplan import _lib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_struct_sizes_match_the_c_header(tmp_path):
    """The ctypes mirror has the header's layout (a field added in C and not
    here would shift every field after it)."""
    names = {"mp_err": _lib.Err, "mp_device": _lib.Device, "mp_buf": _lib.Buf, "mp_tensor_spec": _lib.TensorSpec,
             "mp_node_spec": _lib.NodeSpec}
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


def test_the_binding_mirrors_no_handle():
    """Interface 2: programs, plans, options and reports are opaque; the
    binding reaches them only through accessors (1.x mirrored 13 structs)."""
    mirrored = {n for n, v in vars(_lib).items() if isinstance(v, type) and issubclass(v, ctypes.Structure)}
    assert mirrored == {"Err", "Device", "Buf", "TensorSpec", "NodeSpec"}
