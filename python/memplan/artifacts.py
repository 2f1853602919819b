"""Compiled programs (.pte, .tflite) for the commands: import one as a
graph and the plan it carries, or write it again with memplan's plan.
pte.py and tflite.py know each format; this is the one door to both."""
from .flatbuf import ArtifactError


def import_file(kind, path):
    """(graph text, the file's plan as .mpp text, a note for the header comment)."""
    if kind == "pte":
        from . import pte

        data, header, prog, methods, mp_prog = pte.load(path)
        views = sum(len(m.views) for m in methods)
        note = "; %d method%s, %d view%s found" % (len(methods), "" if len(methods) == 1 else "s", views,
                                                   "" if views == 1 else "s")
        return mp_prog.text(), pte.file_plan(methods, mp_prog), note
    from . import tflite

    model = tflite.load(path)
    return model.program.text(), model.file_plan(), model.note()


def replan_file(kind, path, out_path, algo, alignment, banks, reorder=False):
    """(bytes before, bytes after) of a re-planned file written to out_path."""
    if kind == "pte":
        if reorder:
            raise ArtifactError(path, "--reorder: a .pte's instructions keep their order (they pass values "
                                "other than tensors, which the import does not follow)")
        from . import pte

        return pte.replan(path, out_path, algo, alignment, banks)
    if banks:
        raise ArtifactError(path, "--banks: TFLite Micro plans one arena")
    from . import tflite

    return tflite.replan(path, out_path, algo, alignment, reorder)
