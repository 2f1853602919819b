"""memplan.pte and memplan.tflite (issue 49): the compiled programs of
corpus/artifacts read, verified with the plan they carry, re-planned."""
import json
import os
import subprocess

import pytest

from memplan import planning, pte, tflite
from memplan.errors import MemplanError

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PTE = os.path.join(ROOT, "corpus", "artifacts", "pte")
TFL = os.path.join(ROOT, "corpus", "artifacts", "tflite")


def places(plan_text):
    out = {}
    for line in plan_text.splitlines():
        f = line.split()
        if f[:1] == ["alloc"]:
            kv = dict(x.split("=") for x in f[2:])
            out[f[1]] = (int(kv["mem_id"]), int(kv["offset"]))
    return out


def test_pte_program_and_its_plan():
    f = pte.open_file(os.path.join(PTE, "arduino_KeywordSpotting.pte"))
    assert [m.name for m in f.methods] == ["forward"]
    assert f.methods[0].views == {271: 257}
    report = f.verify()
    assert report.valid and report.total_bytes == 16000 and report.lower_bound == 16000
    # ExecuTorch's greedy, reproduced, is the file's own plan
    et = planning.plan(f.program, "greedy", et_exact=True, alignment=pte.alignment(f.methods))
    assert places(et.text()) == places(f.plan_text())


def test_pte_replan_changes_only_the_plan(tmp_path):
    out = str(tmp_path / "add.pte")
    before, after = pte.open_file(os.path.join(PTE, "add.pte")).replan(out)
    assert (before, after) == (48, 48)
    again = pte.open_file(out)
    assert again.verify().valid
    new = planning.plan(again.program, "opt", alignment=16)
    assert places(again.plan_text()) == places(new.text())


def test_tflite_heads_as_tflite_micro_measures():
    conv = tflite.open_file(os.path.join(TFL, "test_conv_model.tflite"))
    assert conv.verify().total_bytes == 7744  # memory_arena_threshold_test.cc
    vela = tflite.open_file(os.path.join(TFL, "person_detect_vela.tflite"))
    assert vela.offline is not None and not vela.verify().valid


def test_tflite_replan_is_an_offline_plan(tmp_path):
    out = str(tmp_path / "kw.tflite")
    m = tflite.open_file(os.path.join(TFL, "keyword_scrambled.tflite"))
    assert m.replan(out) == (288, 288)
    again = tflite.open_file(out)
    assert again.offline is not None and len(again.offline[2]) == 54
    assert again.verify().valid


@pytest.mark.parametrize("blob", [b"", b"1234ET12", b"\x00" * 64, b"\xff\xff\xff\x7fTFL3" + b"\x00" * 32])
def test_hostile_files_are_refused(tmp_path, blob):
    p = tmp_path / "bad.pte"
    p.write_bytes(blob)
    opener = tflite.open_file if b"TFL3" in blob else pte.open_file
    with pytest.raises(MemplanError) as e:
        opener(str(p))
    assert e.value.code == 2 and str(p) in e.value.message


def test_the_command_line_says_the_same(tmp_path):
    # python3 -m memplan replan, as `memplan replan` runs it
    out = tmp_path / "m.pte"
    r = subprocess.run(["/usr/bin/python3", "-m", "memplan", "replan", os.path.join(PTE, "ModuleLinear-no-constant-segment.pte"),
                        "-o", str(out)], capture_output=True, text=True, cwd=os.path.join(ROOT, "python"))
    assert r.returncode == 0, r.stderr
    assert "32 bytes planned before, 32 after" in r.stdout
    assert json.dumps(places(pte.open_file(str(out)).plan_text()))
