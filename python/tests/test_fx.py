"""torch.fx -> .mpg: real models and a small one with every feature; each
export parses, plans, verifies, and its lower bound is the largest sum of
live tensor bytes, computed here from the graph file alone."""
import os
import subprocess
import sys

import pytest
import torch
import torchvision
from torch import nn

import memplan
import memplan.fx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def live_peak(text):
    """Max over nodes of the bytes of the planned storages live there: views
    stand for their base, in-place tensors for the base of their chain,
    constants are not planned; a storage lives from the first to the last
    node that names it (placeholders from node 0)."""
    tensors, nodes = {}, []
    for line in text.splitlines():
        f = line.split("#")[0].split()
        if f[:1] == ["tensor"]:
            tensors[f[1]] = (int(f[2]), dict(a.split("=", 1) if "=" in a else (a, "") for a in f[3:]))
        elif f[:1] == ["node"]:
            kv = dict(a.split("=", 1) for a in f[2:] if "=" in a)
            nodes.append((f[1], [n for k in ("in", "out") if kv.get(k) for n in kv[k].split(",")]))

    def root(n):
        while "view" in tensors[n][1] or "inplace" in tensors[n][1]:
            n = tensors[n][1].get("view") or tensors[n][1]["inplace"]
        return n

    first, last = {}, {}
    for i, (kind, names) in enumerate(nodes):
        for n in names:
            r = root(n)
            if "const" in tensors[r][1]:
                continue
            first.setdefault(r, 0 if kind == "placeholder" else i)
            last[r] = i
    return max(sum(tensors[r][0] for r in first if first[r] <= i <= last[r]) for i in range(len(nodes)))


def check(prog):
    text = prog.text()
    assert memplan.parse(text).text() == text
    plan = memplan.plan(prog, algo="opt", alignment=1)
    report = memplan.verify(prog, plan)
    assert report.valid, report.text
    # with storage offsets the verifier's bound counts a family by its
    # largest live member, below the root's bytes the oracle counts
    if " offset=" in text:
        assert report.lower_bound <= live_peak(text)
    else:
        assert report.lower_bound == live_peak(text)
    assert report.total_bytes == plan.total_bytes
    return text, report


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 32)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.act(self.lin(x))                 # in-place ReLU
        n = x.size(0)                             # not a tensor
        v = h.view(n, 8, 4).transpose(1, 2)       # a view chain
        s = v.sum(dim=2).add_(1.0)                # a new tensor, then in place
        return s, h.flatten(), x * 2              # a tuple


def test_a_small_module_with_inplace_views_and_a_tuple():
    text, _ = check(memplan.fx.from_module(Small(), (torch.randn(4, 16),)))
    assert "tensor lin.weight 2048 const\n" in text
    assert "tensor x 256\n" in text
    assert "tensor act 512 inplace=lin\n" in text
    assert "tensor view 512 view=act\n" in text
    assert "tensor transpose 512 view=view\n" in text
    assert "tensor add_ 64 inplace=sum_1\n" in text
    assert "tensor flatten 512 view=act\n" in text
    assert "node call op=torch.nn.modules.activation.ReLU in=lin out=act\n" in text
    assert "node output in=add_,flatten,mul\n" in text
    assert "tensor size" not in text  # x.size(0) is no tensor


class Fire(nn.Module):
    """SqueezeNet's fire module: two branches concatenated by channel."""

    def __init__(self):
        super().__init__()
        self.squeeze = nn.Conv2d(8, 4, 1)
        self.e1 = nn.Conv2d(4, 8, 1)
        self.e3 = nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x):
        s = torch.relu(self.squeeze(x))
        a = torch.relu_(self.e1(s))     # an in-place family: conv, then ReLU on it
        b = self.e3(s)
        c = torch.cat([a, b], 1)
        head = x.narrow(1, 4, 4)        # a slice 4 channels in: a view at an offset
        return c, head.sum()


def test_storage_offsets_of_slices_and_a_cat_in_place():
    x = torch.randn(1, 8, 6, 6)
    plain = check(memplan.fx.from_module(Fire(), (x,)))[0]
    assert "tensor narrow 576 view=x offset=576\n" in plain
    assert "inplace=cat" not in plain
    text, report = check(memplan.fx.from_module(Fire(), (x,), cat_in_place=True))
    # the conv under the in-place ReLU moves into the cat's first half, e3's
    # output into its second: no bytes of their own, no copy
    assert "tensor e1 1152 inplace=cat\n" in text
    assert "tensor e3 1152 inplace=cat offset=1152\n" in text
    assert "tensor relu_ 1152 inplace=e1\n" in text
    assert report.lower_bound <= check(memplan.fx.from_module(Fire(), (x,)))[1].lower_bound
    # a piece something else reads too stays a copy; the other goes in place
    class Reused(Fire):
        def forward(self, x):
            b = self.e3(torch.relu(self.squeeze(x)))
            return torch.cat([b, b * 2], 1), b
    text = check(memplan.fx.from_module(Reused(), (x,), cat_in_place=True))[0]
    assert "tensor e3 1152\n" in text and "tensor mul 1152 inplace=cat offset=1152\n" in text


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_models(name):
    model = getattr(torchvision.models, name)(weights=None)
    text, report = check(memplan.fx.from_module(model, (torch.randn(1, 3, 224, 224),)))
    assert report.lower_bound > 0
    assert "inplace=" in text and " const\n" in text


def make_small():
    """A factory for `export-fx tests.test_fx:make_small`-style use."""
    return Small()


def test_the_command_line_with_a_users_factory(tmp_path):
    out = tmp_path / "s.mpg"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), os.path.dirname(__file__)]))
    r = subprocess.run([sys.executable, "-m", "memplan", "export-fx", "test_fx:make_small", "-o", str(out),
                        "--input-shape", "4,16"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith("memplan-graph 1\n# test_fx:make_small, input 4,16 float32")
    assert "tensor act 512 inplace=lin\n" in text


def test_the_command_line(tmp_path):
    out = tmp_path / "m.mpg"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-m", "memplan", "export-fx", "torchvision:resnet18", "-o", str(out),
                        "--input-shape", "1,3,64,64"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    prog = memplan.load(str(out))
    assert memplan.verify(prog, memplan.plan(prog)).valid
    r = subprocess.run([sys.executable, "-m", "memplan", "export-fx", "torchvision:nope", "-o", str(tmp_path / "x")],
                       env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "no model 'nope'" in r.stderr
    assert not (tmp_path / "x").exists()
