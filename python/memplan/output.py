"""The Python commands' output files (export-fx, import-pte, import-tflite,
replan), written as the memplan command writes its own."""
import os

from ._lib import EFORMAT, EIO
from .errors import MemplanError


def _refused(path, why, code=EIO):
    return MemplanError(code, "%s: %s" % (path, why))


def write_atomic(path, data, inputs=()):
    """All of data (text or bytes) at path or nothing, as the command's
    output files are written (core/file.c): a temporary beside the file,
    then a rename; a symbolic link's target is written (the link stays); a
    device or FIFO (/dev/null) is written in place; an output that is one
    of the inputs is refused (MemplanError EFORMAT, "PATH: why"), a write
    that fails is EIO."""
    import stat
    import tempfile

    data = data if isinstance(data, (bytes, bytearray)) else data.encode("utf-8")
    target = os.path.realpath(path)
    for i in inputs:
        if os.path.exists(target) and os.path.exists(i) and os.path.samefile(target, i):
            raise _refused(path, "is one of the inputs: not written over", EFORMAT)
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
            raise _refused(path, "cannot write: %s" % e.strerror)
    d = os.path.dirname(target)
    if not os.path.isdir(d):
        raise _refused(path, "no folder %s to write it in" % d)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".memplan-", dir=d)
    except OSError as e:
        raise _refused(path, "cannot write: %s" % e.strerror)
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
        raise _refused(path, "cannot write: %s" % e.strerror)
    except BaseException:
        os.unlink(tmp)
        raise
