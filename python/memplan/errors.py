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


U32, U64 = 2 ** 32 - 1, 2 ** 64 - 1


def in_range(value, field, high, low=0):
    """`value` as an int in [low, high], checked before it crosses into C
    (ctypes would cut it silently: size=2**64+64 was 64 bytes); else
    ValueError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            if isinstance(value, bool) or int(value) != value:
                raise ValueError
            value = int(value)
        except (TypeError, ValueError):
            raise ValueError("%s must be a whole number, not %r" % (field, value)) from None
    if not low <= value <= high:
        raise ValueError("%s must be from %d to %d, not %d" % (field, low, high, value))
    return value
