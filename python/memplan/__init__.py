"""memplan from Python: the shared library (libmemplan.so.2) through ctypes.

    import memplan
    prog = memplan.load("model.mpg")            # or memplan.Builder() ... .build()
    plan = memplan.plan(prog, algo="opt", alignment=16)
    print(plan.buffers, plan.tensors["x"].offset)
    report = memplan.verify(prog, plan)          # report.valid, .violations, .ratio

Errors raise memplan.MemplanError with memplan's own message ("FILE:LINE:
..." for a file) and its code (the command line's exit status)."""
from ._lib import lib as _library
from .errors import MemplanError
from .graph import Builder, Program, load, parse
from .planning import (Allocation, Finding, Plan, Report, load_plan, parse_plan, plan, planners, reorder, verify,
                       verify_order)


def version():
    """The version of the library actually loaded."""
    return _library.mp_version().decode("ascii")


__all__ = ["MemplanError", "Builder", "Program", "load", "parse", "Allocation", "Finding", "Plan", "Report",
           "load_plan", "parse_plan", "plan", "planners", "reorder", "verify", "verify_order", "version"]
