"""memplan.reorder, memplan.verify_order and memplan.fx.reorder (issue 50):
orders of lower peak that keep the program's meaning, and a GraphModule
whose outputs are the original's."""
import os

import memplan

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
R = os.path.join(ROOT, "corpus", "reorder")


def test_reorder_halves_two_branches_and_proves_it():
    p = memplan.load(os.path.join(R, "branches.mpg"))
    r = memplan.reorder(p)
    assert (r.before, r.after, r.optimal) == (2064, 1056, True)
    assert memplan.verify_order(p, r.program) is None
    assert memplan.plan(r.program).total_bytes == 1056


def test_verify_order_names_the_broken_rule():
    p = memplan.load(os.path.join(R, "inplace.mpg"))
    bad = memplan.load(os.path.join(R, "inplace.invalid.mpg"))
    why = memplan.verify_order(p, bad)
    assert "node 4 (WRITE) now runs before node 2 (READ)" in why
    assert memplan.verify_order(p, memplan.reorder(p).program) is None


import torch  # noqa: E402  (Debian's python3-torch: the README installs it)
import torchvision  # noqa: E402

from memplan import fx  # noqa: E402

nn = torch.nn


class TwoBranches(nn.Module):
    """Two branches, each a 64-channel temporary: run side by side by the
    trace's order, one after the other by the reorder's."""

    def __init__(self):
        super().__init__()
        self.a1, self.a2 = nn.Conv2d(8, 64, 3, padding=1), nn.Conv2d(64, 8, 1)
        self.b1, self.b2 = nn.Conv2d(8, 64, 3, padding=1), nn.Conv2d(64, 8, 1)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        a = self.act(self.a1(x))
        b = self.act(self.b1(x))
        return torch.cat([self.a2(a), self.b2(b)], 1).sum(dim=1, keepdim=True) + x[:, :1]


def test_fx_reorder_moves_the_nodes_and_keeps_the_outputs():
    torch.manual_seed(50)
    gm = torch.fx.symbolic_trace(TwoBranches().eval())
    x = torch.randn(1, 8, 32, 32)
    new, info = fx.reorder(gm, x)
    assert info.after < info.before
    before = [n.name for n in gm.graph.nodes]
    after = [n.name for n in new.graph.nodes]
    assert sorted(before) == sorted(after) and before != after
    assert after.index("a2") < after.index("b1")  # branch a done before branch b starts
    for _ in range(3):
        y = torch.randn(1, 8, 32, 32)
        assert torch.equal(gm(y), new(y))
    assert [n.name for n in gm.graph.nodes] == before  # the given module is left as it was


def test_fx_reorder_of_a_torchvision_model_keeps_its_outputs():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(torchvision.models.squeezenet1_0(weights=None).eval())
    x = torch.randn(1, 3, 96, 96)
    new, info = fx.reorder(gm, x, effort=2)
    assert info.after <= info.before
    with torch.no_grad():
        assert torch.allclose(gm(x), new(x))
