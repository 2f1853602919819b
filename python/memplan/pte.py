"""ExecuTorch programs (.pte): a method's values and instructions as a
memplan graph, the plan the file carries as a memplan plan, and the same
file with another plan written into it (issue 49; docs/artifacts.md).

The graph of a method (an ExecutionPlan):
- every tensor EValue is a tensor named v<index>, its bytes the product of
  its sizes times its scalar type's element size;
- a constant (data_buffer_idx > 0, or data stored outside the file) is
  `const`; a tensor with allocation_info is planned, in pool memory_id; one
  with allocation_info and data is a mutable buffer; any other tensor is
  left to the runtime (`dynamic`);
- placeholders: the constants, then the method's inputs, in order;
- a node per instruction, in the order of the chains: KernelCall (op= the
  operator's name.overload) and DelegateCall (a delegate, backend= its id)
  name their tensor arguments (lists expanded), MoveCall its two values; a
  tensor is the out= of the first node that names it, an in= after that;
  JumpFalseCall and FreeCall name no tensor.  Jumps are read as straight
  code: ExecuTorch emits forward jumps only, so every path through a method
  is a subsequence of its instructions and their order covers every
  lifetime; a backward jump (a loop) is refused;
- the output node names the method's tensor outputs.
Methods are the graphs of an `entry` line, each planned on its own, as
ExecuTorch plans them (one non_const_buffer_sizes each)."""
import struct


from . import flatbuf, output
from .errors import MemplanError
from .flatbuf import ArtifactError

# ScalarType (schemas/executorch/scalar_type.fbs) -> bytes per element
ELEMENT_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1, 12: 1, 13: 1, 14: 4,
                 15: 2, 16: 1, 17: 1, 18: 1, 19: 1, 20: 1, 21: 1, 22: 2, 23: 1, 24: 1, 25: 1, 26: 1, 27: 2,
                 28: 4, 29: 8}
TENSOR, TENSOR_LIST, OPTIONAL_TENSOR_LIST = 5, 7, 10  # KernelTypes
KERNEL, DELEGATE, MOVE, JUMP_FALSE, FREE = 1, 2, 3, 4, 5  # InstructionArguments
EXTERNAL = 1  # TensorDataLocation


class Header:
    """The extended header ("eh00" at byte 8, schema/extended_header.h):
    where the flatbuffer ends and the segments begin."""

    def __init__(self, data, path):
        self.present = data[8:12] == b"eh00"
        self.length = self.program_size = self.segment_base = self.segment_size = 0
        if not self.present:
            self.program_size = len(data)
            return
        (self.length,) = struct.unpack_from("<I", data, 12)
        self.program_size, self.segment_base = struct.unpack_from("<QQ", data, 16)
        if self.length >= 32:
            (self.segment_size,) = struct.unpack_from("<Q", data, 32)
        if self.segment_base and (self.segment_base < self.program_size or self.segment_base > len(data)):
            raise ArtifactError(path, "its extended header puts the segments at byte %d, outside [%d, %d]"
                                % (self.segment_base, self.program_size, len(data)))


def read(path):
    """(bytes, Header, ProgramT) of a .pte that FlatBuffers' verifier accepts."""
    data = flatbuf.read_verified(path, "pte")
    header = Header(data, path)
    from executorch_flatbuffer.Program import Program, ProgramT

    return data, header, ProgramT.InitFromObj(Program.GetRootAs(data[:header.program_size], 0))


def _name(b):
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")


def _clean(s, more=""):
    """A name memplan's format accepts: [A-Za-z0-9_.$-] (an op's name also
    :/@+()[]<>), others as '_'."""
    out = "".join(c if c.isalnum() and c.isascii() or c in "_.$-" + more else "_" for c in s)
    return out[:255] or "_"


class Method:
    """One ExecutionPlan read as a memplan graph (see the module's doc)."""

    def __init__(self, path, plan):
        self.path, self.plan = path, plan
        self.name = _clean(_name(plan.name))
        self.values = plan.values or []
        self.tensors = {}  # value index -> (bytes, kind, mem_id, offset)
        for i, v in enumerate(self.values):
            if v.valType in (TENSOR, TENSOR_LIST, OPTIONAL_TENSOR_LIST) and v.val is None:
                # a union whose type is set and whose table is not: the verifier lets it pass
                raise ArtifactError(path, "method %s, value %d: a %s with no table" % (
                    self.name, i, "tensor" if v.valType == TENSOR else "tensor list"))
            if v.valType == TENSOR:
                self.tensors[i] = self._tensor(i, v.val)

    def _tensor(self, i, t):
        n = ELEMENT_BYTES.get(t.scalarType)
        if n is None:
            raise ArtifactError(self.path, "method %s, value %d: unknown scalar type %d" % (self.name, i, t.scalarType))
        for d in (t.sizes if t.sizes is not None else []):
            if d < 0:
                raise ArtifactError(self.path, "method %s, value %d: a negative size %d" % (self.name, i, d))
            n *= int(d)
        if n >= 1 << 62:
            raise ArtifactError(self.path, "method %s, value %d: %d bytes, past 2^62" % (self.name, i, n))
        external = t.extraTensorInfo is not None and t.extraTensorInfo.location == EXTERNAL
        a = t.allocationInfo
        if a is None:
            return (n, "const" if t.dataBufferIdx > 0 or external else "dynamic", 0, None)
        offset = (a.memoryOffsetHigh << 32) | a.memoryOffsetLow
        return (n, "mutable" if t.dataBufferIdx > 0 else "planned", a.memoryId, offset)

    def tensor_args(self, indices):
        """The tensor values among indices, lists expanded, each once, in order."""
        out = []
        for k in indices if indices is not None else []:
            k = int(k)
            if k < 0 or k >= len(self.values):
                raise ArtifactError(self.path, "method %s: argument %d names no value (%d values)"
                                    % (self.name, k, len(self.values)))
            v = self.values[k]
            items = [k] if v.valType == TENSOR else []
            if v.valType in (TENSOR_LIST, OPTIONAL_TENSOR_LIST) and v.val.items is not None:
                items = [int(x) for x in v.val.items if 0 <= int(x) < len(self.values)
                         and self.values[int(x)].valType == TENSOR]
            out += [x for x in items if x not in out]
        return out

    def instructions(self):
        """(kind, op, backend, tensor values, raw arguments) per instruction, in order."""
        ops = self.plan.operators or []
        delegates = self.plan.delegates or []
        steps = []
        for chain in self.plan.chains or []:
            for pc, ins in enumerate(chain.instructions or []):
                a, kind = ins.instrArgs, ins.instrArgsType
                if a is None:
                    if kind:
                        raise ArtifactError(self.path, "method %s, instruction %d: type %d with no arguments"
                                            % (self.name, pc, kind))
                    continue
                if kind == KERNEL:
                    o = ops[a.opIndex] if 0 <= a.opIndex < len(ops) else None
                    op = _name(o.name) + ("." + _name(o.overload) if o is not None and o.overload else "") if o else None
                    raw = [int(x) for x in (a.args if a.args is not None else [])]
                    steps.append(("call", op, None, self.tensor_args(a.args), raw))
                elif kind == DELEGATE:
                    d = delegates[a.delegateIndex] if 0 <= a.delegateIndex < len(delegates) else None
                    steps.append(("delegate", None, _name(d.id) if d else "unknown", self.tensor_args(a.args), []))
                elif kind == MOVE:
                    steps.append(("call", "executorch.move", None, self.tensor_args([a.moveFrom, a.moveTo]),
                                  [a.moveFrom, a.moveTo, a.moveTo]))
                elif kind == JUMP_FALSE and a.destinationInstruction <= pc:
                    raise ArtifactError(self.path, "method %s, instruction %d jumps back to %d: a loop, whose "
                                        "lifetimes instruction order does not give" % (self.name, pc,
                                                                                     a.destinationInstruction))
        return steps

    @staticmethod
    def _returns(args):
        """A KernelCall's return values: ExecuTorch appends them after the
        arguments (out= included), so they are the longest run at the end
        of which each value also comes earlier."""
        k = len(args)
        while k > 0 and args[k - 1] in args[:k - 1]:
            k -= 1
        return set(args[k:])

    def _views(self, steps, first, outputs):
        """{view: base}: ExecuTorch emits a view as no instruction and plans
        it at its base's place, so a view is a planned tensor that a kernel
        names first without returning it (not written there), placed where
        the file places an earlier planned tensor of at least its size that
        no instruction names after the one that wrote it, and that is no
        output of the method (written for nothing, but for its view).
        Empty tensors (a kernel's scratch of 0 bytes) are never views."""
        named = {}
        for i, step in enumerate(steps):
            for k in step[3]:
                named.setdefault(k, []).append(i)
        views, defined, placed = {}, set(first), []
        for i, (kind, op, backend, args, raw) in enumerate(steps):
            rets = self._returns(raw) if kind == "call" else set(args)
            for k in args:
                if k in defined:
                    continue
                n, what, mem_id, offset = self.tensors[k]
                base = [b for b in placed if self.tensors[b][2:] == (mem_id, offset) and self.tensors[b][0] >= n
                        and len(named.get(b, ())) == 1 and b not in outputs]
                if what == "planned" and n > 0 and k not in rets and base:
                    views[k] = views.get(base[-1], base[-1])
                defined.add(k)
                if what in ("planned", "mutable"):
                    placed.append(k)
        return views

    def build(self, gb):
        """The method's tensors and nodes into gb (a graph.GraphBuilder)."""
        steps = self.instructions()
        inputs = self.tensor_args(self.plan.inputs)
        outputs = self.tensor_args(self.plan.outputs)
        used = set(inputs) | set(outputs) | {k for s in steps for k in s[3]}
        used |= {k for k, t in self.tensors.items() if t[1] in ("planned", "mutable")}
        first = [k for k in sorted(used) if self.tensors[k][1] in ("const", "mutable") and k not in inputs]
        self.views = self._views(steps, first + inputs, set(outputs))
        for k in sorted(used):
            n, kind, mem_id, _ = self.tensors[k]
            view = "v%d" % self.views[k] if k in self.views else None
            gb.tensor("v%d" % k, n, const=kind == "const", mutable=kind == "mutable", dynamic=kind == "dynamic",
                      mem_id=mem_id, view=view)
        defined = set(self.views)
        for k in first + inputs:
            gb.node("placeholder", outputs=["v%d" % k])
            defined.add(k)
        for kind, op, backend, args, _ in steps:
            ins = ["v%d" % k for k in args if k in defined]
            outs = ["v%d" % k for k in args if k not in defined]
            defined.update(args)
            gb.node(kind, inputs=ins, outputs=outs, op=_clean(op, ":/@+()[]<>") if op else None,
                    backend=_clean(backend) if backend else None)
        never = [k for k in sorted(used) if k not in defined]  # planned, or an output, that no instruction writes
        if never:
            gb.node("call", outputs=["v%d" % k for k in never], op="memplan.unwritten")
        gb.node("output", inputs=["v%d" % k for k in outputs])
        return never


def program(path, methods):
    """The memplan Program of a .pte's methods (a list of Method)."""
    from .graph import Builder

    b = Builder()
    seen = set()
    try:
        for m in methods:
            if m.name in seen:
                raise ArtifactError(path, "two methods named %r" % m.name)
            seen.add(m.name)
            m.build(b.graph(m.name))
        if len(methods) > 1:
            b.methods(*[m.name for m in methods])
        return b.build(path)
    except ArtifactError:
        raise
    except (MemplanError, ValueError, OverflowError) as e:  # the library's checks, as for a graph file
        raise ArtifactError(path, "does not make a memplan program: %s" % e)


class PteFile:
    """A .pte read for Python: `program` (a memplan Program: one graph a
    method), `methods`, the plan the file carries (`plan()`), checked by
    the verifier (`verify()`), and `replan(out)`."""

    def __init__(self, path):
        self.path = path
        self.data, self.header, self.flatbuffer, self.methods, self.program = load(path)

    def plan_text(self):
        return file_plan(self.methods, self.program)

    def plan(self):
        from .planning import parse_plan

        return parse_plan(self.plan_text(), self.program, self.path)

    def verify(self):
        from .planning import verify

        return verify(self.program, self.plan())

    def replan(self, out_path, algo="opt", alignment=16, banks=None):
        """(bytes before, bytes after); the file at out_path (read again:
        the replan writes its new plan into a program of its own)."""
        return replan(self.path, out_path, algo, alignment, banks)


def open_file(path):
    """A PteFile; ArtifactError (a MemplanError, code 2) for a file that is not one."""
    return PteFile(path)


def load(path):
    """(bytes, Header, ProgramT, [Method], memplan Program) of a .pte."""
    data, header, prog = read(path)
    methods = [Method(path, p) for p in prog.executionPlan or []]
    if not methods:
        raise ArtifactError(path, "no method (execution_plan is empty)")
    return data, header, prog, methods, program(path, methods)


def _rewrite_block(lines, method):
    """One graph block of a plan made over the imported program: the file's
    pool and offset for each allocation, its buffer sizes."""
    sizes = [int(x) for x in (method.plan.nonConstBufferSizes if method.plan.nonConstBufferSizes is not None else [])]
    out = []
    for line in lines:
        f = line.split()
        if f and f[0] == "alloc":
            n, kind, mem_id, offset = method.tensors[int(f[1][1:])]
            f = [x for x in f if not x.startswith(("mem_id=", "obj=", "offset="))]
            f[2:2] = ["mem_id=%d" % mem_id, "obj=0", "offset=%d" % offset]
            sizes += [0] * (mem_id + 1 - len(sizes))
        elif f and f[0] in ("buffers", "devices"):
            f = None
        if f is not None:
            out.append(" ".join(f))
    sizes = (sizes or [0])
    head = [out[0], "buffers " + " ".join(str(max(x, 0)) for x in [0] + sizes[1:]),
            "devices " + " ".join(["cpu:0"] * len(sizes))]
    return head + out[1:]


def alignment(methods):
    """The alignment the file was planned with, as far as it shows: the
    largest power of two up to 64 that divides every planned offset and
    buffer size (16, ExecuTorch's default, when nothing is planned).
    Rounding sizes up to it cannot make two of the file's tensors meet."""
    values = [t[3] for m in methods for t in m.tensors.values() if t[1] in ("planned", "mutable")]
    values += [int(x) for m in methods for x in (m.plan.nonConstBufferSizes if m.plan.nonConstBufferSizes is not None
                                                  else [])]
    if not any(values):
        return 16
    a = 64
    while any(v % a for v in values):
        a //= 2
    return a


def file_plan(methods, prog):
    """The plan the file carries (allocation_info, non_const_buffer_sizes),
    as .mpp text over prog: which tensors are planned, and their lifetimes,
    from a plan the library makes of prog (at the file's alignment), their
    places from the file."""
    from .planning import plan as make_plan

    text = make_plan(prog, "naive", alignment=alignment(methods)).text()
    by_name = {m.name: m for m in methods}
    out, block = [], None
    for line in text.splitlines():
        if line.startswith("graph "):
            block = [line]
        elif block is not None:
            block.append(line)
            if line == "end":
                out += _rewrite_block(block, by_name[block[0].split()[1]])
                block = None
        else:
            out.append(line.replace("algo=naive", "algo=file"))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- replan

def _check_replannable(path, prog, methods):
    """Why a file cannot be given another plan safely, or None."""
    for m in methods:
        devices = m.plan.nonConstBufferDevice or []
        if any(d.deviceType != 0 for d in devices):
            return "method %s keeps a buffer on a device other than the CPU (non_const_buffer_device)" % m.name
        if any(t[1] == "mutable" for t in m.tensors.values()):
            return "method %s has mutable buffers with initial data: their place is state the runtime " \
                   "may share between methods" % m.name
    if prog.mutableDataSegments:
        return "it has mutable data segments (state shared between methods)"
    return None


def new_allocations(plan_text, methods):
    """{method name: ({value: (mem_id, offset)}, [buffer sizes])} from a
    plan of the imported program; a view takes its base's place."""
    out, cur = {}, None
    for line in plan_text.splitlines():
        f = line.split()
        if f[:1] == ["graph"]:
            cur = out.setdefault(f[1], ({}, []))
        elif f[:1] == ["buffers"] and cur is not None:
            cur[1][:] = [int(x) for x in f[1:]]
        elif f[:1] == ["alloc"] and cur is not None:
            kv = dict(x.split("=", 1) for x in f[2:])
            cur[0][int(f[1][1:])] = (int(kv["mem_id"]), int(kv["offset"]))
    for m in methods:
        places = out.get(m.name, ({}, []))[0]
        for view, base in m.views.items():
            if base in places:
                places[view] = places[base]
    return out


def replan(path, out_path, algo="opt", alignment=16, banks=None):
    """The .pte at path with a plan of memplan's (allocation_info and
    non_const_buffer_sizes of every method), written to out_path; the
    bytes saved.  Everything else of the program is kept (the flatbuffer
    is rebuilt with FlatBuffers' object API, the segments copied)."""
    from .planning import plan as make_plan

    f = PteFile(path)
    data, header, prog, methods, mp_prog = f.data, f.header, f.flatbuffer, f.methods, f.program
    why = _check_replannable(path, prog, methods)
    if why:
        raise ArtifactError(path, "not re-planned: " + why)
    if not f.verify().valid:
        raise ArtifactError(path, "not re-planned: the plan it carries does not verify (memplan verify %s): "
                            "its tensors share memory in a way the import does not see" % path)
    opts = {"alignment": alignment}
    if banks:
        opts["banks"] = banks
    new = make_plan(mp_prog, algo, **opts)
    places = new_allocations(new.text(), methods)
    before = after = 0
    for m in methods:
        ep_places, sizes = places.get(m.name, ({}, []))
        before += sum(int(x) for x in (m.plan.nonConstBufferSizes if m.plan.nonConstBufferSizes is not None else []))
        after += _apply(m, ep_places, sizes)
    write_atomic_pte(out_path, data, header, prog, path)
    return before, after


def _apply(method, places, sizes):
    """A method's new places into its ProgramT; its new total bytes."""
    from executorch_flatbuffer.AllocationDetails import AllocationDetailsT

    for k, (mem_id, offset) in places.items():
        t = method.values[k].val
        a = AllocationDetailsT()
        a.memoryId, a.memoryOffsetLow, a.memoryOffsetHigh = mem_id, offset & 0xFFFFFFFF, offset >> 32
        t.allocationInfo = a
    old = [int(x) for x in (method.plan.nonConstBufferSizes if method.plan.nonConstBufferSizes is not None else [0])]
    new = [0] + [int(x) for x in sizes[1:]]
    new += [0] * (len(old) - len(new))  # a pool the file names keeps its entry, empty now
    while len(new) > max(len(old), 1) and new[-1] == 0:  # and no entry for a pool neither plan uses
        new.pop()
    method.plan.nonConstBufferSizes = new
    return sum(new)


def write_atomic_pte(out_path, data, header, prog, path):
    """prog packed again behind the same extended header, the segments after it."""
    import flatbuffers

    _align_byte_vectors()
    b = flatbuffers.Builder(max(1024, header.program_size))
    b.Finish(prog.Pack(b), file_identifier=b"ET12")
    body = bytes(b.Output())
    if not header.present:
        output.write_atomic(out_path, body, (path,))
        return
    # The header goes at byte 8, inside the flatbuffer: the root offset
    # (byte 0) grows by its length; every other offset is relative and the
    # tables all move together.
    hlen = header.length
    root = struct.unpack_from("<I", body, 0)[0] + hlen
    program_size = len(body) + hlen
    segs = data[header.segment_base:header.segment_base + header.segment_size] if header.segment_base else b""
    if header.segment_base and not header.segment_size:
        segs = data[header.segment_base:]
    align = header.segment_base & -header.segment_base if header.segment_base else 1
    base = flatbuf.align_up(program_size, min(align, 1 << 16)) if segs else 0
    head = bytearray(data[8:8 + hlen])
    struct.pack_into("<QQ", head, 8, program_size, base)
    if hlen >= 32:
        struct.pack_into("<Q", head, 24, len(segs))
    out = struct.pack("<I", root) + body[4:8] + bytes(head) + body[8:]
    if segs:
        out += b"\0" * (base - len(out)) + segs
    output.write_atomic(out_path, out, (path,))


def _align_byte_vectors():
    """Constant and delegate data keep the 16-byte alignment the schema
    asks for (force_align: 16)."""
    from executorch_flatbuffer import Buffer, BackendDelegateInlineData as Inline

    flatbuf.pack_aligned(Buffer.BufferT, Buffer.Start, Buffer.End, "storage", Buffer.AddStorage)
    flatbuf.pack_aligned(Inline.BackendDelegateInlineDataT, Inline.Start, Inline.End, "data", Inline.AddData)
