"""FlatBuffers files (.pte, .tflite): where the generated readers and the
verifier are, and the checks every artifact goes through before it is read.

The readers are what flatc generates from the upstream schemas in
schemas/ (`make` writes them to build/fb/python; `make install` beside the
package as memplan/_fb).  They trust every offset in a buffer, so a file is
first checked by memplan-fbverify, FlatBuffers' own C++ Verifier over the
same schemas (artifacts/fbverify.cc): a file it refuses is never read."""
import os
import shutil
import subprocess
import sys

from ._lib import EFORMAT
from .errors import MemplanError

_HERE = os.path.dirname(os.path.abspath(__file__))
_TREE_BUILD = os.path.join(_HERE, "..", "..", "build")


class ArtifactError(MemplanError):
    """A file that cannot be read or re-planned: FILE: why (exit 2)."""

    def __init__(self, path, why, code=EFORMAT):
        MemplanError.__init__(self, code, "%s: %s" % (path, why))


def _first(*candidates):
    for c in candidates:
        if c and os.path.exists(c):
            return os.path.abspath(c)
    return None


def generated_path():
    """The folder that holds the generated packages executorch_flatbuffer and tflite."""
    d = _first(os.environ.get("MEMPLAN_FB_PYTHON"), os.path.join(_HERE, "_fb"),
               os.path.join(_TREE_BUILD, "fb", "python"))
    if not d:
        raise MemplanError(EFORMAT, "memplan: the FlatBuffers readers are not built: run make "
                           "(flatbuffers-compiler), or set MEMPLAN_FB_PYTHON")
    if d not in sys.path:
        sys.path.insert(0, d)
    return d


def verifier_path():
    v = _first(os.environ.get("MEMPLAN_FBVERIFY"), os.path.join(_TREE_BUILD, "memplan-fbverify"),
               shutil.which("memplan-fbverify"))
    if not v:
        raise MemplanError(EFORMAT, "memplan: memplan-fbverify is not built: run make "
                           "(libflatbuffers-dev, g++), or set MEMPLAN_FBVERIFY")
    return v


def read_verified(path, kind):
    """The bytes of path once FlatBuffers' verifier has accepted them as
    kind ('pte' or 'tflite'); ArtifactError otherwise."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ArtifactError(path, "cannot read: %s" % e.strerror)
    try:
        r = subprocess.run([verifier_path(), kind, path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=600)
    except subprocess.TimeoutExpired:
        raise ArtifactError(path, "FlatBuffers' verifier did not finish in 600 s")
    if r.returncode != 0:
        msg = r.stderr.decode("utf-8", "replace").strip().splitlines()
        why = msg[-1].split(": ", 1)[-1] if msg else "refused by memplan-fbverify (status %d)" % r.returncode
        raise ArtifactError(path, why)
    generated_path()
    return data


def align_up(x, a):
    return (x + a - 1) // a * a


def pack_aligned(cls, start, end, field, add, scalars=()):
    """flatc's object API packs table cls (a generated XT class) with its
    [ubyte] `field` 16-byte aligned, as the schemas' force_align: 16 asks
    and flatc's Python code leaves out: start(builder), add(builder, the
    vector), each (add_scalar, attribute) of scalars, end(builder)."""

    def pack(self, builder):
        data = getattr(self, field)
        vec = None
        if data is not None:
            raw = bytes(bytearray(data))
            builder.StartVector(1, len(raw), 16)
            builder.head = builder.head - len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            vec = builder.EndVector()
        start(builder)
        if vec is not None:
            add(builder, vec)
        for add_scalar, attr in scalars:
            add_scalar(builder, getattr(self, attr))
        return end(builder)

    cls.Pack = pack
