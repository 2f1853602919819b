"""TFLite models made for the tests.  make_if_tflite.py OUT: control flow
(no model of tensorflow/tflite-micro has more than one subgraph): main
runs IF(cond, x) over a then-branch (ADD) and an else-branch (MUL into a
scratch-like tensor, then ADD), then ADDs x to the result.
make_if_tflite.py OUT twice: an operator that names a constant twice,
MUL(w, w) (a model of tflite-micro's history does), before any other names it.
make_if_tflite.py OUT branches: two branches whose operators alternate
(A1 B1 A2 B2), each with a 1 KiB temporary: run one branch after the
other, the arena halves (replan --reorder)."""
import sys
sys.path.insert(0, "build/fb/python")  # flatc's generated code (make)
import flatbuffers
from tflite.Model import ModelT
from tflite.SubGraph import SubGraphT
from tflite.Tensor import TensorT
from tflite.Operator import OperatorT
from tflite.OperatorCode import OperatorCodeT
from tflite.Buffer import BufferT
from tflite.IfOptions import IfOptionsT
from tflite.BuiltinOptions import BuiltinOptions

def tensor(name, shape, typ=0):
    t = TensorT(); t.name = name; t.shape = shape; t.type = typ; t.buffer = 0
    return t

def op(code, ins, outs, opts=None, opts_type=0):
    o = OperatorT(); o.opcodeIndex = code; o.inputs = ins; o.outputs = outs
    o.builtinOptions = opts; o.builtinOptionsType = opts_type
    return o

def code(c):
    x = OperatorCodeT(); x.builtinCode = c; x.deprecatedBuiltinCode = min(c, 127); x.version = 1
    return x

def branches():
    m = ModelT(); m.version = 3; m.description = "memplan: two branches, interleaved (tests/cli/artifacts_tflite.sh)"
    m.buffers = [BufferT()]
    m.operatorCodes = [code(0)]  # ADD
    g = SubGraphT(); g.name = "main"
    g.tensors = [tensor("x", [4]), tensor("a1", [256]), tensor("b1", [256]), tensor("a2", [4]), tensor("b2", [4]),
                 tensor("y", [4])]
    g.inputs, g.outputs = [0], [5]
    g.operators = [op(0, [0, 0], [1]), op(0, [0, 0], [2]), op(0, [1, 1], [3]), op(0, [2, 2], [4]), op(0, [3, 4], [5])]
    m.subgraphs = [g]
    return m


def twice():
    m = ModelT(); m.version = 3; m.description = "memplan: MUL(w, w) (tests/cli/artifacts_tflite.sh)"
    w = BufferT(); w.data = list(range(16))
    m.buffers = [BufferT(), w]
    m.operatorCodes = [code(18), code(0)]  # MUL, ADD
    g = SubGraphT(); g.name = "main"
    g.tensors = [tensor("x", [4]), tensor("w", [4]), tensor("y", [4]), tensor("z", [4])]
    g.tensors[1].buffer = 1
    g.inputs, g.outputs = [0], [3]
    g.operators = [op(0, [1, 1], [2]), op(1, [0, 2], [3])]
    m.subgraphs = [g]
    return m


m = ModelT(); m.version = 3; m.description = "memplan: an IF over two branches (tests/cli/artifacts_tflite.sh)"
m.buffers = [BufferT()]
m.operatorCodes = [code(118), code(0), code(18)]  # IF, ADD, MUL
main = SubGraphT(); main.name = "main"
main.tensors = [tensor("cond", [1], 6), tensor("x", [4]), tensor("y", [4]), tensor("z", [4])]
main.inputs, main.outputs = [0, 1], [3]
iff = IfOptionsT(); iff.thenSubgraphIndex, iff.elseSubgraphIndex = 1, 2
main.operators = [op(0, [0, 1], [2], iff, BuiltinOptions.IfOptions), op(1, [2, 1], [3])]
then = SubGraphT(); then.name = "then"; then.tensors = [tensor("a", [4]), tensor("b", [4])]
then.inputs, then.outputs, then.operators = [0], [1], [op(1, [0, 0], [1])]
els = SubGraphT(); els.name = "else"; els.tensors = [tensor("c", [4]), tensor("d", [4]), tensor("e", [8])]
els.inputs, els.outputs, els.operators = [0], [1], [op(2, [0, 0], [2]), op(1, [0, 0], [1])]
m.subgraphs = [main, then, els]
if sys.argv[2:] == ["branches"]:
    m = branches()
if sys.argv[2:] == ["twice"]:
    m = twice()
b = flatbuffers.Builder(1024)
b.Finish(m.Pack(b), file_identifier=b"TFL3")
open(sys.argv[1], "wb").write(b.Output())
