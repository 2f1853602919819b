"""TensorFlow Lite models (.tflite) for TFLite Micro: the model as a
memplan graph whose lifetimes are the ones TFLite Micro computes, the
offline plan a model may carry, and the model again with memplan's plan
as its offline plan (issue 49; docs/artifacts.md).

Lifetimes are those of TFLite Micro's AllocationInfoBuilder
(micro_allocation_info.cc): one scope per operator, a subgraph's inputs
created when it starts and its outputs used to its end, the subgraphs an
IF, WHILE or CALL_ONCE runs marked inside that operator's scopes, a tensor
of a subgraph run twice spanning both runs.  The graph is that order made
flat: a node per scope, the entry subgraph's operators with every
subgraph they run spliced in where it runs (its tensors named s<K>.t<I>).
Planned, as TFLite Micro plans them: tensors with no data of their own,
not variable, not empty.  Variable tensors are `mutable` (TFLite Micro
keeps them outside the planned arena: plan with --no-alloc-mutable to
compare); constants `const`."""
import struct

from . import flatbuf, output
from .errors import MemplanError
from .flatbuf import ArtifactError

# TensorType -> bytes per element, as TfLiteTypeSizeOf (memory_helpers.cc)
ELEMENT_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8, 13: 4, 15: 4,
                 16: 2, 17: 1, 18: 2, 21: 1, 22: 1}
IF, WHILE, CALL_ONCE = 118, 119, 129
OFFLINE = b"OfflineMemoryAllocation"
ARENA_ALIGNMENT = 16  # MicroArenaBufferAlignment()


def _op_names():
    from tflite.BuiltinOperator import BuiltinOperator

    return {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)}


class Model:
    """A .tflite read (ModelT) and flattened into a memplan graph."""

    def __init__(self, path, data, model):
        self.path, self.data, self.model = path, data, model
        self.subgraphs = model.subgraphs or []
        if not self.subgraphs:
            raise ArtifactError(path, "no subgraph")
        self.base = []  # global tensor index of each subgraph's first tensor (the offline plan's order)
        n = 0
        for sg in self.subgraphs:
            self.base.append(n)
            n += len(sg.tensors or [])
        self.tensor_count = n
        self.names = _op_names()
        self.steps = []  # (op name, [global tensors]) per scope, in order
        self._depth = 0
        self._mark(0)

    def _name(self, sg, t):
        return "t%d" % t if sg == 0 else "s%d.t%d" % (sg, t)

    def _tensor_ids(self, sg, indices, what):
        n = len(self.subgraphs[sg].tensors or [])
        out = []
        for t in (indices if indices is not None else []):
            t = int(t)
            if t == -1:  # an omitted optional input
                continue
            if t < 0 or t >= n:
                raise ArtifactError(self.path, "subgraph %d: %s names tensor %d of %d" % (sg, what, t, n))
            out.append((sg, t))
        return out

    def _code(self, op):
        codes = self.model.operatorCodes or []
        if not 0 <= op.opcodeIndex < len(codes):
            raise ArtifactError(self.path, "an operator names code %d of %d" % (op.opcodeIndex, len(codes)))
        c = codes[op.opcodeIndex]
        code = max(c.builtinCode, c.deprecatedBuiltinCode)  # the schema's rule for the two fields
        name = (c.customCode.decode("utf-8", "replace") if code == 32 and c.customCode else
                self.names.get(code, "BUILTIN_%d" % code))
        return code, name

    def _subgraphs_of(self, code, op):
        o = op.builtinOptions
        if code == IF and o is not None:
            return [o.thenSubgraphIndex, o.elseSubgraphIndex]
        if code == WHILE and o is not None:
            return [o.condSubgraphIndex, o.bodySubgraphIndex]
        if code == CALL_ONCE and o is not None:
            return [o.initSubgraphIndex]
        return []

    def _mark(self, sg):
        """MarkAllocationLifetimes of subgraph sg, as steps."""
        self._depth += 1
        if self._depth > 16:
            raise ArtifactError(self.path, "subgraphs run each other more than 16 deep (a cycle?)")
        g = self.subgraphs[sg]
        self.steps.append(("subgraph%d.inputs" % sg, self._tensor_ids(sg, g.inputs, "an input")))
        for i, op in enumerate(g.operators or []):
            code, name = self._code(op)
            outs = self._tensor_ids(sg, op.outputs, "operator %d's output" % i)
            ins = self._tensor_ids(sg, op.inputs, "operator %d's input" % i)
            runs = self._subgraphs_of(code, op)
            self.steps.append((name, outs if runs else outs + ins))
            for k in runs:
                if not 0 <= k < len(self.subgraphs):
                    raise ArtifactError(self.path, "subgraph %d, operator %d runs subgraph %d of %d"
                                        % (sg, i, k, len(self.subgraphs)))
                self._mark(k)
            if runs:  # inputs last used, outputs used again, after the subgraphs it ran
                self.steps.append((name + ".end", ins + outs))
        self.steps.append(("subgraph%d.outputs" % sg, self._tensor_ids(sg, g.outputs, "an output")))
        self._depth -= 1

    def tensor_info(self, sg, t):
        """(bytes, 'const'|'mutable'|'planned')."""
        tensor = self.subgraphs[sg].tensors[t]
        size = ELEMENT_BYTES.get(tensor.type)
        buffers = self.model.buffers or []
        b = buffers[tensor.buffer] if 0 <= tensor.buffer < len(buffers) else None
        has_data = b is not None and ((b.data is not None and len(b.data) > 0) or b.offset > 1)
        if has_data:
            kind = "const"
        elif tensor.isVariable:
            kind = "mutable"
        else:
            kind = "planned"
        if size is None:
            if kind == "planned":
                raise ArtifactError(self.path, "subgraph %d, tensor %d: type %d has no size TFLite Micro plans"
                                    % (sg, t, tensor.type))
            size = 1
        for d in (tensor.shape if tensor.shape is not None else []):
            size *= max(int(d), 0)
        if size >= 1 << 62:
            raise ArtifactError(self.path, "subgraph %d, tensor %d: %d bytes, past 2^62" % (sg, t, size))
        return size, kind

    def offline_offsets(self):
        """The offline plan the model carries: (metadata index, buffer index,
        [offset or -1 per tensor]), or None."""
        for i, m in enumerate(self.model.metadata or []):
            if m.name != OFFLINE:
                continue
            buffers = self.model.buffers or []
            if not 0 <= m.buffer < len(buffers) or buffers[m.buffer].data is None:
                raise ArtifactError(self.path, "its OfflineMemoryAllocation names buffer %d, which holds no data"
                                    % m.buffer)
            raw = bytes(bytearray(buffers[m.buffer].data))
            if len(raw) < 12 or len(raw) % 4:
                raise ArtifactError(self.path, "its OfflineMemoryAllocation buffer holds %d bytes, not a header "
                                    "and int32 offsets" % len(raw))
            words = struct.unpack("<%di" % (len(raw) // 4), raw)
            if words[2] != self.tensor_count or len(words) < 3 + words[2]:
                raise ArtifactError(self.path, "its OfflineMemoryAllocation gives %d offsets for %d tensors "
                                    "(TFLite Micro refuses it)" % (words[2], self.tensor_count))
            return i, m.buffer, list(words[3:3 + words[2]])
        return None

    def build(self, pins=False):
        try:
            return self._build(pins)
        except ArtifactError:
            raise
        except (MemplanError, ValueError, OverflowError) as e:  # the library's checks, as for a graph file
            raise ArtifactError(self.path, "does not make a memplan program: %s" % e)

    def _build(self, pins):
        """The memplan Program of the flattened model; with pins, the
        offline plan's offsets as pins (at=), for planning the rest around
        them as TFLite Micro does."""
        from .graph import Builder

        offline = self.offline_offsets()
        fixed = offline[2] if offline else [-1] * self.tensor_count
        named, seen = [], set()
        for _, ids in self.steps:
            named += [x for x in dict.fromkeys(ids) if x not in seen]  # a tensor named twice in a step: once
            seen.update(ids)
        b = Builder()
        g = b.graph("main")
        self.planned = {}
        first = []
        for sg, t in sorted(named):
            size, kind = self.tensor_info(sg, t)
            at = fixed[self.base[sg] + t]
            if kind == "mutable" and at >= 0:
                kind = "planned"  # an offline offset puts a variable in the arena (micro_allocation_info.cc)
            if kind == "planned" and size > 0:
                self.planned[self._name(sg, t)] = self.base[sg] + t
            g.tensor(self._name(sg, t), size, const=kind == "const", mutable=kind == "mutable",
                     at=at if pins and at >= 0 and kind == "planned" and size > 0 else None)
            if kind != "planned":
                first.append((sg, t))
        entry_inputs = [x for x in self.steps[0][1] if x not in first]
        self.placeholders = len(first) + len(entry_inputs)  # the graph's node of step k is placeholders + k - 1
        defined = set()
        for x in first + entry_inputs:
            g.node("placeholder", outputs=[self._name(*x)])
            defined.add(x)
        for i, (name, ids) in enumerate(self.steps[1:-1]):
            ins = [self._name(*x) for x in ids if x in defined]
            # a tensor an operator names twice (MUL(w, w)) is defined once
            outs = [self._name(*x) for x in dict.fromkeys(ids) if x not in defined]
            defined.update(ids)
            g.node("call", inputs=ins, outputs=outs, op=name)
        never = [self._name(*x) for x in dict.fromkeys(self.steps[-1][1]) if x not in defined]
        if never:
            g.node("call", outputs=never, op="memplan.unwritten")
        g.node("output", inputs=[self._name(*x) for x in self.steps[-1][1]])
        try:
            program = b.build(self.path)
        except Exception as e:
            raise ArtifactError(self.path, "does not make a memplan program: %s" % e)
        self.offline = offline
        if not pins:
            self.program = program
        return program

    def plan_options(self):
        return {"alignment": ARENA_ALIGNMENT, "alloc_mutable": False}

    def file_plan(self):
        """The plan TFLite Micro runs: its greedy planner's, or the offline
        plan the model carries; where that leaves tensors to run time
        (-1), the greedy planner places them around the fixed ones."""
        from .planning import plan as make_plan

        if not self.offline:
            return make_plan(self.program, "tflm", **self.plan_options()).text()
        fixed = self.offline[2]
        if any(fixed[g] < 0 for g in self.planned.values()):
            try:
                return make_plan(self.build(pins=True), "tflm", **self.plan_options()).text()
            except Exception as e:
                raise ArtifactError(self.path, "its offline plan cannot be completed as TFLite Micro would: %s"
                                    % getattr(e, "message", e))
        return self._offline_text(make_plan(self.program, "naive", **self.plan_options()).text(), fixed)

    def _offline_text(self, text, fixed):
        """A plan of the program with the offline plan's offsets in it (one
        arena, as large as its highest byte)."""
        out, top = [], 0
        for line in text.splitlines():
            f = line.split()
            if f[:1] == ["alloc"]:
                kv = dict(x.split("=", 1) for x in f[2:])
                off = fixed[self.planned[f[1]]] if f[1] in self.planned else 0  # an empty tensor: anywhere
                top = max(top, off + int(kv["size"]))
                f = [x if not x.startswith(("offset=", "obj=")) else x.split("=")[0] + "=" + (
                    str(off) if x.startswith("offset=") else "0") for x in f]
            out.append(" ".join(f))
        top = flatbuf.align_up(top, ARENA_ALIGNMENT)
        out = [("buffers 0 %d" % top if x.startswith("buffers ") else x) for x in out]
        return "\n".join(x.replace("algo=naive", "algo=offline") for x in out) + "\n"

    def plan(self):
        """The plan TFLite Micro runs (file_plan) as a memplan Plan."""
        from .planning import parse_plan

        return parse_plan(self.file_plan(), self.program, self.path)

    def verify(self):
        from .planning import verify

        return verify(self.program, self.plan())

    def replan(self, out_path, algo="opt", alignment=ARENA_ALIGNMENT):
        """(bytes before, bytes after); the model at out_path."""
        return replan(self.path, out_path, algo, alignment)

    def note(self):
        return "; %d subgraph%s, %d tensors, %s" % (
            len(self.subgraphs), "" if len(self.subgraphs) == 1 else "s", self.tensor_count,
            "an offline plan (pins: at=)" if self.offline else "no offline plan")


def read(path):
    data = flatbuf.read_verified(path, "tflite")
    from tflite.Model import Model as FbModel, ModelT

    return data, ModelT.InitFromObj(FbModel.GetRootAs(data, 0))


def open_file(path):
    """A Model (program, plan(), verify(), replan()); ArtifactError (a
    MemplanError, code 2) for a file that is not one."""
    return load(path)


def load(path):
    data, model = read(path)
    m = Model(path, data, model)
    m.build()
    return m


def replan(path, out_path, algo="opt", alignment=ARENA_ALIGNMENT, reorder=False, effort=8):
    """The model with memplan's plan as its offline plan, written to
    out_path; (bytes TFLite Micro's own plan needs, bytes of memplan's).
    reorder: its operators in an order of lower peak first (memplan
    reorder), kept only where memplan's plan of it is smaller."""
    from .planning import plan as make_plan

    m = load(path)
    if m.offline:
        raise ArtifactError(path, "not re-planned: it carries an offline plan already (memplan verify checks it)")
    opts = dict(m.plan_options(), alignment=alignment)
    before = make_plan(m.program, "tflm", **opts)
    after = make_plan(m.program, algo, **opts)
    if reorder:
        after = _reordered(m, after, algo, effort, opts)
    offsets = [-1] * m.tensor_count
    for line in after.text().splitlines():
        f = line.split()
        if f[:1] == ["alloc"] and f[1] in m.planned:
            kv = dict(x.split("=", 1) for x in f[2:])
            if int(kv["offset"]) >= 1 << 31:
                raise ArtifactError(path, "not re-planned: an offset past 2^31 (the offline plan holds int32)")
            offsets[m.planned[f[1]]] = int(kv["offset"])
    _write(out_path, m, offsets)
    return _total(before), _total(after)


def _reordered(m, given, algo, effort, opts):
    """The plan of the model's operators reordered (and the operators moved
    in m.model) when it is smaller than `given`, else `given`.  One
    subgraph only: a subgraph run by IF or WHILE keeps its operators."""
    from .planning import node_order, plan as make_plan, reorder as reorder_program

    if len(m.subgraphs) != 1:
        raise ArtifactError(m.path, "--reorder: a model of %d subgraphs (control flow) keeps its operator order"
                            % len(m.subgraphs))
    done = reorder_program(m.program, effort, **opts)
    plan = make_plan(done.program, algo, **opts)
    if _total(plan) >= _total(given):
        return given
    ops = m.subgraphs[0].operators or []
    order = [k - m.placeholders for k in node_order(m.program, done.program) if 0 <= k - m.placeholders < len(ops)]
    if sorted(order) != list(range(len(ops))):
        raise ArtifactError(m.path, "--reorder: the reordered graph's nodes do not map back to the operators")
    m.subgraphs[0].operators = [ops[k] for k in order]
    return plan


def _total(plan):
    """The bytes of a plan's buffers (the entry graph's: one arena)."""
    return sum(plan.buffers)


def _write(out_path, m, offsets):
    """The model with an OfflineMemoryAllocation metadata entry and its
    buffer appended; everything else packed again as it was."""
    import flatbuffers
    from tflite.Buffer import BufferT
    from tflite.Metadata import MetadataT

    words = [1, len(m.subgraphs), m.tensor_count] + offsets
    buf = BufferT()
    buf.data = list(struct.pack("<%di" % len(words), *words))
    buf.offset = buf.size = 0
    m.model.buffers = (m.model.buffers or []) + [buf]
    meta = MetadataT()
    meta.name, meta.buffer = OFFLINE.decode(), len(m.model.buffers) - 1
    m.model.metadata = (m.model.metadata or []) + [meta]
    _align_buffers()
    b = flatbuffers.Builder(len(m.data) + 4 * len(words) + 1024)
    b.Finish(m.model.Pack(b), file_identifier=b"TFL3")
    output.write_atomic(out_path, bytes(b.Output()), (m.path,))


def _align_buffers():
    """Buffer.data keeps the 16-byte alignment its schema asks for
    (force_align: 16)."""
    from tflite import Buffer

    flatbuf.pack_aligned(Buffer.BufferT, Buffer.Start, Buffer.End, "data", Buffer.AddData,
                         ((Buffer.AddOffset, "offset"), (Buffer.AddSize, "size")))
