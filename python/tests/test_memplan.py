"""The Python package against the command line and the C headers."""
import os
import json
import subprocess

import pytest

import memplan

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.path.join(ROOT, "build", "memplan")
CHAIN = os.path.join(ROOT, "corpus", "examples", "chain.mpg")
MODEL = os.path.join(ROOT, "corpus", "examples", "model.mpg")


def cli_plan(path, *args):
    """The command line's plan, or its exit status and message."""
    r = subprocess.run([CLI, "plan", *args, path], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else (r.returncode, r.stderr)


def test_version_is_the_library_one():
    assert memplan.version() == subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.split()[-1]


@pytest.mark.parametrize("algo", [name for name, _ in memplan.planners()])
@pytest.mark.parametrize("path", [CHAIN, MODEL])
def test_every_planner_plans_as_the_command_line_does(algo, path):
    prog = memplan.load(path)
    want = cli_plan(path, "--algo", algo, "--alignment", "32")
    if isinstance(want, tuple):  # refused (naive and in-place tensors): the same code and message
        with pytest.raises(memplan.MemplanError) as e:
            memplan.plan(prog, algo=algo, alignment=32)
        assert (e.value.code, "memplan plan: %s\n" % e.value) == want
        return
    plan = memplan.plan(prog, algo=algo, alignment=32)
    assert plan.text() == want
    report = memplan.verify(prog, plan)
    assert report.valid, report.text
    assert report.total_bytes == plan.total_bytes == sum(plan.buffers)


def test_per_tensor_results_are_the_plan_lines():
    prog = memplan.load(CHAIN)
    plan = memplan.plan(prog, algo="greedy", et_exact=True)
    lines = [l.split() for l in plan.text().splitlines() if l.startswith("alloc ")]
    assert len(lines) == len(plan.tensors)
    for fields in lines:
        kv = dict(f.split("=", 1) for f in fields[2:])
        a = plan.tensors[fields[1]]
        assert (a.mem_id, a.offset, a.size) == (int(kv["mem_id"]), int(kv["offset"]), int(kv["size"]))
        assert "%d,%d" % a.life == kv["life"]


def test_options_reach_the_planner():
    prog = memplan.load(CHAIN)
    assert "x" not in memplan.plan(prog, alloc_inputs=False).tensors
    assert "y" not in memplan.plan(prog, alloc_outputs=False).tensors
    assert all(a.offset % 64 == 0 for a in memplan.plan(prog, alignment=64).tensors.values())


def test_the_builder_makes_what_the_parser_reads():
    b = memplan.Builder()
    g = b.graph("main")
    g.tensor("x", 100)
    g.tensor("w", 64, const=True)
    g.tensor("y", 100, device="cuda:1")
    g.node("placeholder", outputs=["x"])
    g.node("placeholder", outputs=["w"])
    g.node("call", ["x", "w"], ["y"], op="aten.linear.default")
    g.node("output", ["y"])
    built = b.build()
    text = built.text()
    assert "node call op=aten.linear.default in=x,w out=y\n" in text
    assert "tensor y 100 device=cuda:1\n" in text
    assert memplan.parse(text).text() == text


def test_a_tensor_at_an_offset_in_its_base():
    """ExecuTorch's storage_base_offset (PR #21840): the builder's offset
    reaches the text, each planner puts the child there, the verifier agrees."""
    b = memplan.Builder()
    g = b.graph("main")
    g.tensor("a", 40)
    g.tensor("base", 40)
    g.tensor("child", 8, inplace="base", offset=16)
    g.node("placeholder", outputs=["a"])
    g.node("call", ["a"], ["base"])
    g.node("call", ["base"], ["child"])
    g.node("output", ["base", "child"])
    built = b.build()
    assert "tensor child 8 inplace=base offset=16\n" in built.text()
    assert memplan.parse(built.text()).text() == built.text()
    for algo in ("opt", "greedy", "tflm", "bestfit"):
        plan = memplan.plan(built, algo=algo)
        t = plan.tensors
        assert t["child"].offset == t["base"].offset + 16, algo
        assert memplan.verify(built, plan).valid
    g.tensor("lone", 8, offset=8)
    with pytest.raises(memplan.MemplanError, match="needs an in-place or a view base"):
        b.build()


def test_a_delegates_scratch_is_planned_at_its_node():
    b = memplan.Builder()
    g = b.graph("main")
    for n, size in (("x", 1024), ("a", 4096), ("b", 4096)):
        g.tensor(n, size)
    g.node("placeholder", outputs=["x"])
    g.node("call", ["x"], ["a"])
    g.node("delegate", ["a"], ["b"], backend="qnn", scratch=8192)
    g.node("output", ["b"])
    built = b.build()
    assert "node delegate in=a out=b backend=qnn scratch=8192\n" in built.text()
    plan = memplan.plan(built)
    s = plan.graph("main").allocations["scratch.2"]
    assert (s.size, s.life) == (8192, (2, 2))
    assert memplan.verify(built, plan).valid


def test_pinned_tensors_stay_at_their_pins():
    b = memplan.Builder()
    g = b.graph("main")
    g.tensor("frame", 4096, at=0)
    g.tensor("a", 8192)
    g.tensor("out", 1024, at=16384)
    g.node("placeholder", outputs=["frame"])
    g.node("call", ["frame"], ["a"])
    g.node("call", ["a", "frame"], ["out"])
    g.node("output", ["out"])
    built = b.build("pins.mpg")
    assert "tensor out 1024 at=16384\n" in built.text()
    plan = memplan.plan(built)
    allocs = plan.graph("main").allocations
    assert (allocs["frame"].offset, allocs["out"].offset) == (0, 16384)
    assert memplan.verify(built, plan).valid
    with pytest.raises(memplan.MemplanError) as e:
        memplan.plan(built, algo="greedy")
    assert e.value.code == 3 and "tensor 'frame' is pinned (at=0)" in str(e.value)


def test_methods_share_state_through_the_builder():
    b = memplan.Builder()
    b.methods("prefill", "decode")
    for name, seq in (("prefill", 128), ("decode", 1)):
        g = b.graph(name)
        g.tensor("tokens", 4 * seq)
        g.tensor("kv", 65536, mutable=True, shared=True)
        g.tensor("h", 1024 * seq)
        g.node("placeholder", outputs=["tokens"])
        g.node("placeholder", outputs=["kv"])
        g.node("call", ["tokens", "kv"], ["h"])
        g.node("output", ["h"])
    built = b.build("llm.mpg")
    assert "entry prefill decode\n" in built.text() and "tensor kv 65536 mutable shared\n" in built.text()
    plan = memplan.plan(built)
    pre, dec = plan.graph("prefill").allocations["kv"], plan.graph("decode").allocations["kv"]
    assert (pre.offset, pre.size) == (dec.offset, dec.size)
    assert memplan.verify(built, plan).valid


def test_control_flow_through_the_builder():
    b = memplan.Builder()
    m = b.graph("main")
    for n in ("p", "x", "y"):
        m.tensor(n, 16)
    m.node("placeholder", outputs=["p"])
    m.node("placeholder", outputs=["x"])
    m.node("cond", ["p", "x"], ["y"], true="t", false="t")
    m.node("output", ["y"])
    t = b.graph("t")
    t.tensor("i", 16)
    t.tensor("o", 32)
    t.node("placeholder", outputs=["i"])
    t.node("call", ["i"], ["o"])
    t.node("output", ["o"])
    plan = memplan.plan(b.build(), algo="greedy")
    assert [g.name for g in plan.graphs] == ["main", "t"]
    assert plan.graph("t").allocations["o"].size == 32


def test_errors_carry_memplans_message():
    with pytest.raises(memplan.MemplanError) as e:
        memplan.parse("memplan-graph 1\ngraph g\ntensor x 4\nnode bogus out=x\nend\n", "bad.mpg")
    assert e.value.code == 2
    assert str(e.value) == "bad.mpg:4: unknown node kind 'bogus'"
    b = memplan.Builder()
    b.graph("main").node("call", ["nope"], [])
    with pytest.raises(memplan.MemplanError, match="builder: graph 'main', node 0 \\(call\\)"):
        b.build()
    with pytest.raises(memplan.MemplanError, match="unknown planner 'best'"):
        memplan.plan(memplan.load(CHAIN), algo="best")


def test_a_graph_that_cannot_be_planned_is_code_3():
    cyc = ("memplan-graph 1\ngraph g\ntensor x 16\ntensor a 16 inplace=b\ntensor b 16 inplace=a\n"
           "node placeholder out=x\nnode call in=x out=a\nnode call in=a out=b\nnode output in=b\nend\n")
    with pytest.raises(memplan.MemplanError) as e:
        memplan.plan(memplan.parse(cyc), algo="greedy")
    assert e.value.code == 3


def test_verify_names_the_broken_rules():
    prog = memplan.load(CHAIN)
    good = memplan.plan(prog, algo="greedy")
    text = good.text().replace("alloc a mem_id=1 obj=1 offset=208", "alloc a mem_id=1 obj=1 offset=0")
    report = memplan.verify(prog, memplan.parse_plan(text, prog))
    assert not report.valid
    assert "overlap" in report.per_rule
    assert any(f.rule == "overlap" and "a" in f.tensors for f in report.violations)
    with pytest.raises(memplan.MemplanError) as e:
        memplan.parse_plan("memplan-plan 1\nbogus\n", prog, "p.mpp")
    assert str(e.value).startswith("p.mpp:2: ")


def test_export_as_the_command_line_does(tmp_path):
    prog = memplan.load(MODEL)
    plan = memplan.plan(prog, algo="greedy")
    path = tmp_path / "m.mpp"
    plan.save(str(path))
    for fmt in ("minimalloc-csv", "json"):
        want = subprocess.run([CLI, "export", "--format", fmt, MODEL, str(path)], capture_output=True).stdout
        assert plan.export(fmt) == want, fmt
    with pytest.raises(memplan.MemplanError, match="unknown export format"):
        plan.export("xml")
    # the model has 4 graphs: TFLite Micro's offline plan would count every
    # subgraph's tensors (issue 46): refused on both paths, with the reason
    cli = subprocess.run([CLI, "export", "--format", "tflm-offline", MODEL, str(path)], capture_output=True)
    assert cli.returncode == 2 and b"has 4 graphs" in cli.stderr
    with pytest.raises(memplan.MemplanError, match="has 4 graphs"):
        plan.export("tflm-offline")
    for fmt, buffer in (("minimalloc-csv", 7), ("tflm-offline", 7)):  # 1.8.0: an empty result
        with pytest.raises(memplan.MemplanError, match="no buffer 7"):
            plan.export(fmt, buffer=buffer)


def test_upstream_fixes_as_the_command_line_applies_them():
    d6 = os.path.join(ROOT, "corpus", "defects", "d6_small_alignment.mpg")
    prog = memplan.load(d6)
    with pytest.raises(memplan.MemplanError) as e:
        memplan.plan(prog, algo="greedy", alignment=8, et_exact=True)
    assert e.value.code == 3
    fixed = memplan.plan(prog, algo="greedy", alignment=8, et_upstream=[21616])
    assert fixed.text() == cli_plan(d6, "--algo", "greedy", "--alignment", "8", "--et-upstream", "21616")
    assert memplan.verify(prog, fixed).valid
    with pytest.raises(memplan.MemplanError, match="no fix of ExecuTorch PR #1"):
        memplan.plan(prog, et_upstream=[1])


def test_the_summary_and_options_through_interface_2():
    """Plan.summary() is the library's mp_plan_summary (1.x had it only in
    the command); options are one handle set by name."""
    prog = memplan.load(os.path.join(ROOT, "corpus", "examples", "chain.mpg"))
    plan = memplan.plan(prog, algo="greedy", alignment=64)
    text = plan.summary()
    assert text.startswith("summary: ") and "algo greedy, alignment 64" in text
    data = json.loads(plan.summary(json=True))
    assert data["total_bytes"] == plan.total_bytes and data["algo"] == "greedy"
    o = memplan.planning.options("tflm", alignment=32, banks="sram=1K,dram=unlimited")
    assert (o.get("algo"), o.get("alignment"), o.get("banks")) == ("tflm", "32", "sram=1024,dram=unlimited")
    with pytest.raises(memplan.MemplanError, match="alignment"):
        o.set("alignment", 2 ** 30 + 1)
    # any alignment the command takes (1.8.1's binding did too; 2.0's first setter wanted a power of 2)
    assert memplan.plan(prog, algo="opt", alignment=48).tensors["x"].offset % 48 == 0
