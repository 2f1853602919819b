"""export-fx and memplan.fx on models that are not plain classifiers
(issue 46): each case broke the export before 1.8.1."""
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

import memplan
import memplan.fx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("MEMPLAN_CLI", os.path.join(ROOT, "build", "memplan"))


def plans_and_verifies(prog):
    plan = memplan.plan(prog)
    assert memplan.verify(prog, plan).valid
    return plan


def tensor_lines(prog):
    return {l.split()[1]: l for l in prog.text().splitlines() if l.startswith("tensor ")}


class Indexing(nn.Module):
    """x[idx] and x[x > 0] copy: getitem of a tensor is a node."""

    def forward(self, x):
        idx = torch.tensor([0, 2])
        return x[idx].sum() + x[x > 0].sum() + x[:, 1:].sum()


def test_indexing_that_copies_is_a_node():
    prog = memplan.fx.from_module(Indexing(), (torch.randn(4, 3),))
    text = prog.text()
    assert text.count("op=_operator.getitem") >= 3, text
    plans_and_verifies(prog)


class Ema(nn.Module):
    """A buffer updated in place: mutable state, not a constant."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("ema", torch.zeros(8))

    def forward(self, x):
        y = self.lin(x)
        self.ema.add_(y.mean(0))
        return y * 2


def test_a_buffer_updated_in_place_is_mutable_state(tmp_path):
    m = Ema()
    prog = memplan.fx.from_module(m, torch.randn(2, 8))  # a bare tensor is one input
    line = tensor_lines(prog)["ema"]
    assert " mutable" in line and " const" not in line, line
    plans_and_verifies(prog)
    path = tmp_path / "ema.mpg"
    prog.save(str(path))
    assert subprocess.run([CLI, "plan", str(path)], capture_output=True).returncode == 0
    assert torch.equal(m.ema, torch.zeros(8)), "the export changed the user's buffer"


def test_batchnorm_in_train_mode_is_mutable_and_the_module_is_left_as_it_was():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
    m.train()
    mean = m[1].running_mean.clone()
    prog = memplan.fx.from_module(m, (torch.randn(2, 3, 8, 8),), train=True)
    lines = tensor_lines(prog)
    assert any("running_mean" in n and " mutable" in l for n, l in lines.items()), lines
    plans_and_verifies(prog)
    assert m.training and m[1].training, "from_module changed the module's mode"
    assert torch.equal(m[1].running_mean, mean), "the trace run changed the user's running statistics"
    # eval (the default): constants, and the module still in train mode
    prog = memplan.fx.from_module(m, (torch.randn(2, 3, 8, 8),))
    assert all(" mutable" not in l for l in tensor_lines(prog).values())
    assert m.training


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


def test_an_untraceable_model_says_which_and_why():
    with pytest.raises(memplan.fx.UntraceableError, match="DataDependent: torch.fx cannot trace it"):
        memplan.fx.from_module(DataDependent(), torch.randn(3))


def test_export_fx_of_an_untraceable_torchvision_model_is_one_line(tmp_path):
    out = tmp_path / "s.mpg"
    r = subprocess.run([sys.executable, "-m", "memplan", "export-fx", "torchvision:shufflenet_v2_x0_5", "-o",
                        str(out), "--input-shape", "1,3,64,64"], capture_output=True, text=True,
                       cwd=os.path.join(ROOT, "python"))
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "torchvision:shufflenet_v2_x0_5" in lines[0] and "cannot trace" in lines[0], r.stderr
    assert not out.exists()


def test_export_fx_into_a_missing_folder_names_the_path(tmp_path):
    want = tmp_path / "missing" / "x.mpg"
    r = subprocess.run([sys.executable, "-m", "memplan", "export-fx", "torchvision:alexnet", "-o", str(want),
                        "--input-shape", "1,3,64,64"], capture_output=True, text=True, cwd=os.path.join(ROOT, "python"))
    assert r.returncode != 0 and str(want) in r.stderr and ".memplan-" not in r.stderr, r.stderr


def test_plan_takes_a_path(tmp_path):
    path = os.path.join(ROOT, "corpus", "examples", "model.mpg")
    assert memplan.plan(path).total_bytes == memplan.plan(memplan.load(path)).total_bytes
    with pytest.raises(TypeError, match="Program or a .mpg file's path"):
        memplan.plan(42)


def test_a_negative_size_is_named():
    b = memplan.Builder()
    with pytest.raises(ValueError, match="tensor 'x': size must be from 0"):
        b.graph("main").tensor("x", -4)
