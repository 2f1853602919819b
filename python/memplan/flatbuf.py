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

from .errors import MemplanError

EFORMAT = 2  # the library's MP_EFORMAT: unreadable input, exit 2

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


def write_atomic(path, data, inputs=()):
    """All of data at path or nothing, as the command's output files: a
    temporary beside the file, then a rename; a symbolic link's target is
    written (the link stays); a device or FIFO (/dev/null) is written in
    place; an output that is one of the inputs is refused."""
    import stat
    import tempfile

    data = data if isinstance(data, (bytes, bytearray)) else data.encode("utf-8")
    target = os.path.realpath(path)
    for i in inputs:
        if os.path.exists(target) and os.path.exists(i) and os.path.samefile(target, i):
            raise ArtifactError(path, "is one of the inputs: not written over")
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with open(target, "wb") as f:
                f.write(data)
            return
        except OSError as e:
            raise ArtifactError(path, "cannot write: %s" % e.strerror)
    d = os.path.dirname(target)
    if not os.path.isdir(d):
        raise ArtifactError(path, "no folder %s to write it in" % d)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".memplan-", dir=d)
    except OSError as e:
        raise ArtifactError(path, "cannot write: %s" % e.strerror)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if st is not None:  # the file's own mode; a new file's as open() would make it
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except OSError as e:
        os.unlink(tmp)
        raise ArtifactError(path, "cannot write: %s" % e.strerror)
    except BaseException:
        os.unlink(tmp)
        raise


def align_up(x, a):
    return (x + a - 1) // a * a


def aligned_bytes(builder, data, alignment):
    """A [ubyte] vector whose first byte is aligned (a schema's force_align,
    which flatc's Python code leaves out); its offset."""
    raw = bytes(bytearray(data))
    builder.StartVector(1, len(raw), alignment)
    builder.head = builder.head - len(raw)
    builder.Bytes[builder.head:builder.head + len(raw)] = raw
    return builder.EndVector()
