"""python3 -m memplan export-fx MODEL -o model.mpg [--input-shape 1,3,224,224] [--dtype float32] [--cat-in-place]

MODEL is torchvision:NAME (a torchvision classification model that
torch.fx can trace, built without downloading weights: 70 of torchvision
0.14's 80; shufflenet_v2_*, vit_* and maxvit_t have control flow torch.fx
cannot follow) or package.module:factory (a callable that returns an
nn.Module).  The model is traced with torch.fx in eval mode, run once on a
random input of that shape, and written as a memplan graph (.mpg)."""
import argparse
import importlib
import os
import sys


def _model(spec):
    import torchvision

    kind, _, name = spec.partition(":")
    if not name:
        raise SystemExit("memplan export-fx: MODEL is torchvision:NAME or package.module:factory, not %r" % spec)
    if kind == "torchvision":
        factory = getattr(torchvision.models, name, None)
        if factory is None or not callable(factory):
            raise SystemExit("memplan export-fx: torchvision has no model %r" % name)
        return factory(weights=None)
    factory = getattr(importlib.import_module(kind), name, None)
    if factory is None:
        raise SystemExit("memplan export-fx: %s has no %r" % (kind, name))
    return factory()


def _write(path, text, inputs=()):
    """Text to path ('-': stdout) as the command writes its outputs
    (output.write_atomic: whole or not at all, devices in place, never over
    an input)."""
    if path == "-":
        sys.stdout.write(text)
    else:
        from .output import write_atomic

        write_atomic(path, text, inputs)


def export_fx(argv):
    ap = argparse.ArgumentParser(prog="python3 -m memplan export-fx", description=__doc__.split("\n\n")[1])
    ap.add_argument("model", help="torchvision:NAME or package.module:factory")
    ap.add_argument("-o", "--output", default="-", help="the .mpg file (default stdout)")
    ap.add_argument("--input-shape", default="1,3,224,224", help="the example input's shape")
    ap.add_argument("--dtype", default="float32", help="its dtype (a torch dtype name)")
    ap.add_argument("--cat-in-place", action="store_true",
                    help="write a cat's pieces in place into its output where they can be (offset=)")
    args = ap.parse_args(argv)
    import torch

    from . import fx

    try:
        shape = [int(x) for x in args.input_shape.split(",")]
    except ValueError:
        raise SystemExit("memplan export-fx: bad --input-shape %r (want e.g. 1,3,224,224)" % args.input_shape)
    dtype = getattr(torch, args.dtype, None)
    if not isinstance(dtype, torch.dtype):
        raise SystemExit("memplan export-fx: unknown --dtype %r" % args.dtype)
    x = torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype)
    try:
        prog = fx.from_module(_model(args.model), (x,), cat_in_place=args.cat_in_place)
    except fx.UntraceableError as e:
        raise SystemExit("memplan export-fx: %s: %s" % (args.model, e))
    head, _, body = prog.text().partition("\n")
    _write(args.output, "%s\n# %s, input %s %s (python3 -m memplan export-fx%s)\n%s"
           % (head, args.model, args.input_shape, args.dtype, " --cat-in-place" if args.cat_in_place else "", body))


def _artifact_kind(path):
    """'pte' or 'tflite' by the file identifier at byte 4, else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    return {b"ET12": "pte", b"TFL3": "tflite"}.get(head[4:8])


def import_artifact(kind, argv):
    """import-pte / import-tflite: the graph (and, with --plan, the plan
    the file carries) of a compiled program."""
    ap = argparse.ArgumentParser(prog="memplan import-" + kind,
                                 description="a compiled %s program as a memplan graph" % kind)
    ap.add_argument("model")
    ap.add_argument("-o", "--output", default="-", help="the .mpg file (default stdout)")
    ap.add_argument("--plan", help="also write the plan the file carries (.mpp)")
    args = ap.parse_args(argv)
    from . import artifacts

    graph_text, plan_text, note = artifacts.import_file(kind, args.model)
    head, _, body = graph_text.partition("\n")
    graph_text = "%s\n# %s (memplan import-%s)%s\n%s" % (head, os.path.basename(args.model), kind, note, body)
    if args.plan:
        _write(args.plan, plan_text, (args.model,))
    _write(args.output, graph_text, (args.model,))
    return 0


def replan_artifact(argv):
    ap = argparse.ArgumentParser(prog="memplan replan", description="a .pte or .tflite with memplan's plan")
    ap.add_argument("model")
    ap.add_argument("-o", "--output", required=True, help="the re-planned file")
    ap.add_argument("--algo", default="opt")
    ap.add_argument("--alignment", type=int, default=16)
    ap.add_argument("--banks", help="a memory map (.pte only), as memplan plan --banks")
    ap.add_argument("--reorder", action="store_true",
                    help="(.tflite) its operators in an order of lower peak first, where memplan's plan of it is smaller")
    args = ap.parse_args(argv)
    from . import artifacts

    kind = _artifact_kind(args.model)
    if kind is None:
        raise SystemExit("memplan replan: %s: neither an ExecuTorch program (ET12) nor a TFLite model (TFL3)"
                         % args.model)
    before, after = artifacts.replan_file(kind, args.model, args.output, args.algo, args.alignment, args.banks,
                                          args.reorder)
    saved = before - after
    print("%s: %d bytes planned before, %d after (%s %d bytes, %.1f%%)"
          % (args.output, before, after, "saved" if saved >= 0 else "added", abs(saved),
             100.0 * saved / before if before else 0.0))
    return 0


def _stop_cleanly():
    """SIGTERM and SIGHUP end the command as SystemExit does, so that an
    output's temporary is removed on the way out (SIGINT already raises
    KeyboardInterrupt); a signal the caller ignores (nohup) stays ignored."""
    import signal

    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    _stop_cleanly()
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    from .errors import MemplanError

    try:
        if argv[0] == "export-fx":
            return export_fx(argv[1:])
        if argv[0] in ("import-pte", "import-tflite"):
            return import_artifact(argv[0][7:], argv[1:])
        if argv[0] == "replan":
            return replan_artifact(argv[1:])
    except MemplanError as e:
        print("memplan %s: %s" % (os.environ.get("MEMPLAN_COMMAND") or argv[0], e.message), file=sys.stderr)
        return e.code
    print("python3 -m memplan: unknown command %r (export-fx, import-pte, import-tflite, replan)" % argv[0],
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
