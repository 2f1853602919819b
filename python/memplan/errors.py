"""memplan's errors as Python exceptions: the library's code and message."""


class MemplanError(Exception):
    """A call into memplan failed.  `code` is the library's error code, which
    is also the command line's exit status: 2 a malformed input or bad
    options (the message starts "FILE:LINE: " where there is a file), 3 a
    graph that cannot be planned, 4 an I/O error, 5 out of memory."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def check(err, ok):
    """Raise the error in `err` (an _lib.Err) unless `ok`."""
    if not ok:
        raise MemplanError(err.code, err.msg.decode("utf-8", "replace"))
