#!/usr/bin/env python3
"""Write corpus/et_tests/*.mpg: the scenarios of ExecuTorch's own
exir/tests/test_memory_planning.py (pytorch/executorch at cff6f4dd32) that a
graph file can say, as ExecuTorch's pipeline builds them (torch.export, then
SpecPropPass and ToOutVarPass: every op is an alloc node and an out-variant
call that writes the alloc's tensor).  tests/cli/et_scenarios.sh plans each
one and checks what the ExecuTorch test asserts.  Run from the repository
root: python3 tools/et_scenarios.py"""
import os

OUT = "corpus/et_tests"


class G:
    """One graph: tensors in declaration order, then nodes."""

    def __init__(self, name):
        self.name, self.tensors, self.nodes = name, [], []

    def t(self, name, size, *attrs):
        self.tensors.append("tensor %s %d%s" % (name, size, "".join(" " + a for a in attrs)))
        return name

    def node(self, kind, op=None, ins=(), outs=(), extra=""):
        parts = ["node", kind]
        if op:
            parts.append("op=" + op)
        if ins:
            parts.append("in=" + ",".join(ins))
        if outs:
            parts.append("out=" + ",".join(outs))
        if extra:
            parts.append(extra)
        self.nodes.append(" ".join(parts))

    def out_var(self, op, ins, out):
        """memory.alloc, then the out-variant op writing into it."""
        self.node("call", "memory.alloc", outs=[out])
        self.node("call", op, ins=list(ins) + [out])

    def linear(self, x, w, bias, out, wsize):
        """nn.Linear in the edge dialect: permute_copy of the weight, then addmm."""
        wt = self.t(out + "_wT", wsize)
        self.out_var("aten.permute_copy.out", [w], wt)
        self.out_var("aten.addmm.out", [bias, x, wt], out)

    def text(self):
        return "\n".join(["graph " + self.name] + self.tensors + self.nodes + ["end"])


def write(name, comment, graphs):
    lines = ["memplan-graph 1"] + ["# " + c for c in comment.strip().split("\n")]
    with open(os.path.join(OUT, name + ".mpg"), "w") as f:
        f.write("\n".join(lines + [g.text() for g in graphs]) + "\n")


def toy(devices=None):
    """ToyModelForMemPlanning: o = a; 10 times o = o * a; o = o + b (float[10])."""
    devices = devices or {}
    g = G("main")
    names = ["a", "b"] + ["t%d" % i for i in range(20)]

    def attrs(k):
        return ["device=" + devices[k]] if k in devices else []

    for k, n in enumerate(names):
        g.t(n, 40, *attrs(k))
    g.node("placeholder", outs=["a"])
    g.node("placeholder", outs=["b"])
    prev = "a"
    for i in range(20):
        op, other = ("aten.mul.out", "a") if i % 2 == 0 else ("aten.add.out", "b")
        g.out_var(op, [prev, other], "t%d" % i)
        prev = "t%d" % i
    g.node("output", ins=[prev])
    return [g]


def linear_chain(g, inp, sizes, tag):
    """nn.Linear(x, 2x) layers (weights and bias constants), float32."""
    prev = inp
    for k, x in enumerate(sizes):
        w, bias, out = g.t("%s_w%d" % (tag, k), 4 * x * 2 * x, "const"), g.t("%s_b%d" % (tag, k), 8 * x, "const"), None
        g.node("placeholder", outs=[w])
        g.node("placeholder", outs=[bias])
        out = g.t("%s_o%d" % (tag, k), 8 * x)
        g.out_var("aten.linear.out", [prev, w, bias], out)
        prev = out
    return prev


def different_sizes():
    """ModelWithDifferentTensorSizes: two chains of Linear(x, 2x), x = 2..128, summed."""
    g = G("main")
    g.t("i", 8)
    g.node("placeholder", outs=["i"])
    # placeholders come first: declare the weights of both chains up front
    sizes = [2, 4, 8, 16, 32, 64, 128]
    body = G("main")
    o1 = linear_chain(body, "i", sizes, "l1")
    o2 = linear_chain(body, "i", sizes, "l2")
    g.tensors += body.tensors
    phs = [n for n in body.nodes if n.startswith("node placeholder")]
    g.nodes += phs + [n for n in body.nodes if not n.startswith("node placeholder")]
    g.t("sum", 4 * 256)
    g.out_var("aten.add.out", [o1, o2], "sum")
    g.node("output", ins=["sum"])
    return [g]


def return_two():
    """ModuleReturnTwo: two Linear(8, 8) of the same input, both returned."""
    g = G("main")
    g.t("x", 32)
    for k in (1, 2):
        g.t("w%d" % k, 256, "const")
        g.t("b%d" % k, 32, "const")
    g.node("placeholder", outs=["x"])
    for k in (1, 2):
        g.node("placeholder", outs=["w%d" % k])
        g.node("placeholder", outs=["b%d" % k])
    for k in (1, 2):
        g.t("o%d" % k, 32)
        g.linear("x", "w%d" % k, "b%d" % k, "o%d" % k, 256)
    g.node("output", ins=["o1", "o2"])
    return [g]


def list_arg():
    """ModuleListArg: tensor_split into two slice_copy results, cat of the list."""
    g = G("main")
    g.t("a", 32)
    g.t("s0", 16)
    g.t("s1", 16)
    g.t("s", 32)
    g.node("placeholder", outs=["a"])
    g.out_var("aten.slice_copy.Tensor_out", ["a"], "s0")
    g.out_var("aten.slice_copy.Tensor_out", ["a"], "s1")
    g.out_var("aten.cat.out", ["s0", "s1"], "s")
    g.node("output", ins=["s"])
    return [g]


def multiple_pools():
    """MultiplePoolsToyModel with CustomPoolMemoryPlanningPass: placeholders and
    mul results in pool 1, add results in pool 3 (float[1], alignment 1)."""
    g = G("main")
    g.t("a", 4, "mem_id=1")
    for n, pool in (("b", 3), ("c", 1), ("d", 3), ("e", 1)):
        g.t(n, 4, "mem_id=%d" % pool)
    g.node("placeholder", outs=["a"])
    g.out_var("aten.add.out", ["a", "a"], "b")
    g.out_var("aten.mul.out", ["a", "b"], "c")
    g.out_var("aten.add.out", ["c", "b"], "d")
    g.out_var("aten.mul.out", ["c", "d"], "e")
    g.node("output", ins=["e"])
    return [g]


def mutable_state():
    """test_mutable_buffers_infinite_lifespan: state.index_put_(x); y = x + state; z = x * y."""
    g = G("main")
    g.t("state", 4, "mutable")
    g.t("x", 4)
    g.t("idx", 8, "const")
    g.t("put", 4, "inplace=state")
    g.t("y", 4)
    g.t("z", 4)
    g.node("placeholder", outs=["state"])
    g.node("placeholder", outs=["x"])
    g.node("placeholder", outs=["idx"])
    g.out_var("aten.index_put.out", ["state", "idx", "x"], "put")
    g.out_var("aten.add.out", ["x", "put"], "y")
    g.out_var("aten.mul.out", ["x", "y"], "z")
    g.node("output", ins=["put", "z"])
    return [g]


def constants():
    """test_constants_not_memory_planned: sigmoid(linear(x) + constant + 1); five
    placeholders: x, the buffer, the weight, the bias, the lifted scalar."""
    g = G("main")
    g.t("x", 100)
    g.t("constant", 100, "const")
    g.t("weight", 100, "const")
    g.t("bias", 20, "const")
    g.t("one", 4, "const")
    for n in ("x", "constant", "weight", "bias", "one"):
        g.node("placeholder", outs=[n])
    for n in ("lin", "add1", "add2", "sig"):
        g.t(n, 100)
    g.out_var("aten.linear.out", ["x", "weight", "bias"], "lin")
    g.out_var("aten.add.out", ["lin", "constant"], "add1")
    g.out_var("aten.add.out", ["add1", "one"], "add2")
    g.out_var("aten.sigmoid.out", ["add2"], "sig")
    g.node("output", ins=["sig"])
    return [g]


def placeholder_lifetime():
    """test_placeholder_lifetime: a = a + b; b = a + b; y = linear(x); a is used
    through a permute_copy inserted after it.  The inputs must not share bytes."""
    g = G("main")
    g.t("a", 48)
    g.t("b", 48)
    g.t("x", 100)
    g.t("w", 100, "const")
    g.t("bias", 20, "const")
    for n in ("a", "b", "x", "w", "bias"):
        g.node("placeholder", outs=[n])
    for n, s in (("pa", 48), ("a2", 48), ("b2", 48), ("y", 100)):
        g.t(n, s)
    g.out_var("aten.permute_copy.out", ["a"], "pa")
    g.out_var("aten.add.out", ["pa", "b"], "a2")
    g.out_var("aten.add.out", ["a2", "b"], "b2")
    g.out_var("aten.linear.out", ["x", "w", "bias"], "y")
    g.node("output", ins=["a2", "b2", "y"])
    return [g]


def map_model():
    """MapModel: map(add_fn, x, y) + y over x float[5, 3], y float[3]; the map
    body adds one row to y."""
    g = G("main")
    g.t("x", 60)
    g.t("y", 12)
    g.t("m", 60)
    g.t("r", 60)
    g.node("placeholder", outs=["x"])
    g.node("placeholder", outs=["y"])
    g.node("map", "torch.ops.higher_order.map_impl", ins=["x", "y"], outs=["m"], extra="body=add_fn")
    g.out_var("aten.add.out", ["m", "y"], "r")
    g.node("output", ins=["r"])
    body = G("add_fn")
    body.t("row", 12)
    body.t("yy", 12)
    body.t("s", 12)
    body.node("placeholder", outs=["row"])
    body.node("placeholder", outs=["yy"])
    body.out_var("aten.add.out", ["row", "yy"], "s")
    body.node("output", ins=["s"])
    return [g, body]


def linear_with_view():
    """LinearsWithDifferentSizeAndViewOps on float[3, 8]: Linear(x, 2x) for
    x = 8..64 twice; the first result viewed as [-1, 64, 2], plus 1, viewed
    back as [-1, 128] and added to the second (views as memory.view)."""
    g = G("main")
    g.t("i", 96)
    sizes = [8, 16, 32, 64]
    for tag in ("l1", "l2"):
        for k, x in enumerate(sizes):
            g.t("%s_w%d" % (tag, k), 4 * x * 2 * x, "const")
            g.t("%s_b%d" % (tag, k), 8 * x, "const")
    g.node("placeholder", outs=["i"])
    for tag in ("l1", "l2"):
        for k in range(len(sizes)):
            g.node("placeholder", outs=["%s_w%d" % (tag, k)])
            g.node("placeholder", outs=["%s_b%d" % (tag, k)])

    def chain(tag):
        prev = "i"
        for k, x in enumerate(sizes):
            out = g.t("%s_o%d" % (tag, k), 3 * 8 * x)
            g.linear(prev, "%s_w%d" % (tag, k), "%s_b%d" % (tag, k), out, 4 * x * 2 * x)
            prev = out
        return prev

    o1 = chain("l1")
    g.t("v1", 1536, "view=" + o1)
    g.node("call", "memory.view", ins=[o1], outs=["v1"])
    g.t("p1", 1536)
    g.out_var("aten.add.out", ["v1"], "p1")
    g.t("v2", 1536, "view=p1")
    g.node("call", "memory.view", ins=["p1"], outs=["v2"])
    o2 = chain("l2")
    g.t("r", 1536)
    g.out_var("aten.add.out", ["v2", o2], "r")
    g.node("output", ins=["r"])
    return [g]


def inplace_mul():
    """TestInPlaceElemWise: c = a + b; d = c * b with mul made in-place on c
    (reinplace_pass with ops_to_inplace={mul}), alignment 1."""
    g = G("main")
    for n in ("a", "b", "c"):
        g.t(n, 40)
    g.t("d", 40, "inplace=c")
    g.node("placeholder", outs=["a"])
    g.node("placeholder", outs=["b"])
    g.out_var("aten.add.out", ["a", "b"], "c")
    g.node("call", "aten.mul_.Tensor", ins=["c", "b"], outs=["d"])
    g.node("output", ins=["d"])
    return [g]


def multi_map():
    """MultiMapModel: x = map(add_fn, x, y) three times."""
    g = G("main")
    g.t("x", 60)
    g.t("y", 12)
    for k in range(3):
        g.t("m%d" % k, 60)
    g.node("placeholder", outs=["x"])
    g.node("placeholder", outs=["y"])
    prev = "x"
    for k in range(3):
        g.node("map", "torch.ops.higher_order.map_impl", ins=[prev, "y"], outs=["m%d" % k], extra="body=add_fn")
        prev = "m%d" % k
    g.node("output", ins=[prev])
    return [g, map_model()[1]]


SCENARIOS = {
    "linear_with_view": ("test_linear_with_view: LinearsWithDifferentSizeAndViewOps", linear_with_view()),
    "inplace_mul": ("test_basic_inplace_sharing, test_verifier_allows_inplace_overlap: mul in place on c",
                    inplace_mul()),
    "multi_map": ("TestMap.test_multi_map: MultiMapModel", multi_map()),
    "basic": ("test_basic: ToyModelForMemPlanning; naive reuses nothing, greedy reuses", toy()),
    "different_sizes": ("test_different_tensor_sizes, test_graph_input_output: ModelWithDifferentTensorSizes",
                        different_sizes()),
    "return_two": ("test_return_two: ModuleReturnTwo", return_two()),
    "list_arg": ("test_list_arg: ModuleListArg (each slice lives until the cat)", list_arg()),
    "multiple_pools": ("test_multiple_pools: MultiplePoolsToyModel, pools 1 and 3, alignment 1",
                       multiple_pools()),
    "mutable_state": ("test_mutable_buffers_infinite_lifespan: a mutable buffer lives to the end",
                      mutable_state()),
    "constants": ("test_constants_not_memory_planned", constants()),
    "placeholder_lifetime": ("test_placeholder_lifetime: inputs never share bytes", placeholder_lifetime()),
    "map": ("TestMap.test_map: MapModel", map_model()),
    "device_all_cuda": ("test_all_cuda_no_wasted_slots, test_disabled_falls_back_to_cpu: ToyModel, every spec cuda",
                        toy({k: "cuda" for k in range(22)})),
    "device_mixed": ("test_mixed_cpu_cuda_separate_buffers: ToyModel, the second half of the specs cuda",
                     toy({k: "cuda" for k in range(11, 22)})),
    "device_last_cuda": ("test_mem_offset_correct_after_remap: ToyModel, the last spec the only cuda one",
                         toy({21: "cuda"})),
    "device_alternating": ("test_no_cross_device_memory_sharing: ToyModel, every even spec cuda",
                           toy({k: "cuda" for k in range(0, 22, 2)})),
    "device_indices": ("test_different_device_indices_separate_buffers: ToyModel, specs 0 and 1 on cuda:0, cuda:1",
                       toy({0: "cuda:0", 1: "cuda:1"})),
    "device_index3": ("test_device_index_propagated: ToyModel, spec 0 on cuda:3", toy({0: "cuda:3"})),
}


def pool_with_device():
    gs = toy({21: "cuda"})
    gs[0].tensors[0] += " mem_id=3"
    return gs


SCENARIOS["device_custom_pool"] = ("test_custom_pool_with_device_planning_raises: ToyModel, spec 0 in pool 3, "
                                   "the last spec cuda", pool_with_device())

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, (comment, graphs) in SCENARIOS.items():
        write(name, "ExecuTorch exir/tests/test_memory_planning.py (cff6f4dd32), " + comment, graphs)
