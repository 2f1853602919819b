#!/usr/bin/env python3
"""bench_pivot.py - the benchmark tables of docs/benchmarks.md from `memplan bench`'s
output (results/bench.md): one row per case, for each planner its ratio to
the lower bound and its planning time, so the planners stand side by side.

usage: tools/bench_pivot.py results/bench.md [--min-tensors N]
Generated graphs below --min-tensors (default 10000) are left out; the
instance and corpus sections are kept whole."""
import re
import sys

ALGOS = ["greedy", "naive", "opt", "tflm", "bestfit", "opt-exact"]


def cell(fields):
    bytes_, ratio, ms = fields[3], fields[5], fields[6]
    if bytes_ == "-":
        return "> %s s" % (int(ms.split()[-1]) // 1000)
    if bytes_ == "refused":
        return "refused"
    if bytes_ == "CRASHED":
        return "CRASHED"
    return "%s · %s ms" % (ratio, ms)


def main():
    path = sys.argv[1]
    min_tensors = int(sys.argv[sys.argv.index("--min-tensors") + 1]) if "--min-tensors" in sys.argv else 10000
    section, rows, order = None, {}, []
    out = []

    def flush():
        if not order:
            return
        used = [a for a in ALGOS if any(a in rows[c] for c in order)]
        out.append("\n#### %s\n" % section)
        out.append("| case | tensors | " + " | ".join(used) + " |")
        out.append("|---|---:|" + "---:|" * len(used))
        for c in order:
            out.append("| %s | %s | " % (c, rows[c]["tensors"]) + " | ".join(rows[c].get(a, "") for a in used) + " |")
        rows.clear()
        order.clear()

    for line in open(path):
        m = re.match(r"^### (.*)", line)
        if m:
            flush()
            section = m.group(1)
            if section == "Targets":
                out.append("\n#### Targets\n")
            continue
        if section == "Targets" and line.startswith("- "):
            out.append(line.rstrip("\n"))
            continue
        if not line.startswith("| ") or line.startswith("| case "):
            continue
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        name, algo = f[0], f[2]
        g = re.match(r"^[a-z-]+-(\d+)$", name)
        if section.startswith("Generated") and g and int(g.group(1)) < min_tensors:
            continue
        if name not in rows:
            rows[name] = {"tensors": f[1]}
            order.append(name)
        if f[1] != "0":
            rows[name]["tensors"] = f[1]
        rows[name][algo] = cell(f)
    flush()
    print("\n".join(out).lstrip("\n"))


main()
