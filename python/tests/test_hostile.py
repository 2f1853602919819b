"""The binding against what a user can do to it (issue 45): values out of
C's range raise ValueError naming the field instead of being cut by
ctypes (B10), and no order of del, close() or attribute assignment brings
a freed or NULL handle to the library (B19).  Each case crashed or gave a
wrong answer in 1.8.0."""
import gc

import pytest

import memplan

CHAIN = """memplan-graph 1
graph main
tensor x 64
tensor y 32
node placeholder out=x
node call in=x out=y
node output in=y
end
"""


def chain(**tensor):
    b = memplan.Builder()
    g = b.graph("main")
    g.tensor("x", tensor.pop("size", 64), **tensor)
    g.tensor("y", 32)
    g.node("placeholder", outputs=["x"])
    g.node("call", ["x"], ["y"])
    g.node("output", ["y"])
    return b


@pytest.mark.parametrize("field, kwargs", [
    ("size", {"size": 2 ** 64 + 64}),
    ("size", {"size": -4}),
    ("at", {"at": 2 ** 64 + 32}),
    ("mem_id", {"mem_id": 2 ** 32 + 1}),
    ("device index", {"device": "cuda:4294967297"}),
    ("size", {"size": 1.5}),
])
def test_builder_values_out_of_range_name_their_field(field, kwargs):
    with pytest.raises(ValueError, match=field):
        chain(**kwargs)


@pytest.mark.parametrize("field, kwargs", [
    ("alignment", {"alignment": 2 ** 32 + 16}),
    ("alignment", {"alignment": 0}),
    ("budget_ms", {"budget_ms": -1}),
    ("exact_ms", {"exact_ms": 2 ** 32}),
])
def test_options_out_of_range_name_their_field(field, kwargs):
    prog = memplan.parse(CHAIN)
    with pytest.raises(ValueError, match=field):
        memplan.plan(prog, **kwargs)


def test_a_scratch_out_of_range_names_its_node():
    b = memplan.Builder()
    g = b.graph("main")
    with pytest.raises(ValueError, match="scratch"):
        g.node("delegate", [], [], backend="npu", scratch=2 ** 64)


def test_export_buffer_out_of_range():
    prog = memplan.parse(CHAIN)
    with pytest.raises(ValueError, match="buffer"):
        memplan.plan(prog).export("minimalloc-csv", buffer=2 ** 64 + 1)


def test_a_plan_keeps_its_program_whatever_the_user_drops():
    prog = memplan.parse(CHAIN)
    plan = memplan.plan(prog)
    text = plan.text()
    del prog
    gc.collect()
    assert memplan.verify(plan.program, plan).valid
    with pytest.raises(AttributeError):
        plan.program = None  # read-only: the plan points into it
    assert plan.text() == text


def test_closing_a_program_with_a_live_plan_waits_for_the_plan():
    prog = memplan.parse(CHAIN)
    plan = memplan.plan(prog)
    prog.__del__()  # or close(): the plan still points into it
    prog.__del__()
    assert memplan.verify(prog, plan).valid
    plan.close()
    prog.close()
    with pytest.raises(ValueError, match="freed"):
        prog.text()
    with pytest.raises(ValueError, match="freed"):
        memplan.plan(prog)


def test_a_freed_plan_never_reaches_the_library():
    prog = memplan.parse(CHAIN)
    plan = memplan.plan(prog)
    plan.__del__()
    plan.__del__()
    for use in (plan.text, lambda: plan.export("json"), lambda: memplan.verify(prog, plan)):
        with pytest.raises(ValueError, match="freed"):
            use()


def test_the_builder_takes_any_number_of_methods():
    b = memplan.Builder()
    names = ["m%d" % i for i in range(40)]
    for n in names:
        g = b.graph(n)
        g.tensor("x", 8)
        g.node("placeholder", outputs=["x"])
        g.node("output", ["x"])
    b.methods(*names)
    prog = b.build()
    assert len(memplan.plan(prog).graphs) == 40
