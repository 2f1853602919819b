"""pytest setup: the package from this tree, the library from the build tree
(MEMPLAN_LIBRARY, set by `make test`, else build/libmemplan.so.2)."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("MEMPLAN_LIBRARY", os.path.join(ROOT, "build", "libmemplan.so.2"))
