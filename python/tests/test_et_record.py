"""tools/et_record.py, the recorder of ExecuTorch's own plans, in what it does
without an ExecuTorch checkout (which is not a Debian package): its names,
its refusals and its messages.  With a checkout, `make et-record-check
EXECUTORCH=DIR` re-records every ExecuTorch plan of the corpus with it."""
import keyword
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import et_record  # noqa: E402

TRICKY = ["x", "in", "def", "1a", "a.b", "a_0b", "a$b", "a_1b", "a-b", "a_2b", "a__b", "a_b", "_", "__",
          "main_9x", "$", "-", ".", "p_in1", "in1"]


def test_placeholder_targets_are_identifiers_one_to_one():
    """fx writes targets as parameter names, and ExecuTorch matches mutable
    buffers by target: the mapping must give identifiers and never merge two
    names (that would invent or hide a D13 collision)."""
    ids = [et_record.identifier(n) for n in TRICKY]
    assert len(set(ids)) == len(TRICKY)
    for i in ids:
        assert i.isidentifier() and not keyword.iskeyword(i)


def run(*args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "et_record.py"), *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_a_folder_that_is_not_a_checkout_is_refused(tmp_path):
    r = run("--executorch", str(tmp_path), "corpus/examples/chain.mpg")
    assert r.returncode == 2
    assert "not an ExecuTorch checkout (no exir/memory_planning.py)" in r.stderr
    assert r.stdout == ""


def test_a_bad_graph_is_memplans_own_message_and_nothing_is_written(tmp_path):
    bad = tmp_path / "bad.mpg"
    bad.write_text("memplan-graph 1\ngraph main\ntensor a -3\nend\n")
    out = tmp_path / "plan.mpp"
    r = run("--executorch", str(tmp_path), "-o", str(out), str(bad))
    assert r.returncode == 2
    assert r.stderr.startswith("et_record: %s:3: " % bad)
    assert not out.exists() and os.listdir(tmp_path) == ["bad.mpg"]


@pytest.mark.parametrize("alignment", ["0", str((1 << 30) + 1)])
def test_alignment_out_of_range_is_refused(tmp_path, alignment):
    r = run("--executorch", str(tmp_path), "--alignment", alignment, "corpus/examples/chain.mpg")
    assert r.returncode == 2 and "--alignment must be 1 to 2^30" in r.stderr
