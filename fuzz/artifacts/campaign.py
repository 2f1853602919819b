"""Mutation campaign for the compiled-program readers (issue 49):
    /usr/bin/python3 fuzz/artifacts/campaign.py [--cases N] [--seconds S] [--seed S] [--out DIR] SEED_FILE...
Each case flips, inserts, deletes or overwrites bytes of a seed file (a
real .pte or .tflite), then imports it and, when that works, re-plans it,
in this process (python/memplan on sys.path).  A file may be refused
(ArtifactError, exit 2 on the command line) or read; anything else, a
Python exception of another kind, is a finding: its bytes go to
DIR/finding-N.<ext> with the traceback beside them, to become a case in
corpus/artifacts/regressions.  Prints one line of counts at the end."""
import argparse
import os
import random
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from memplan import artifacts  # noqa: E402
from memplan.errors import MemplanError  # noqa: E402


def mutate(rng, data):
    d = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 8, 16))):
        k = rng.randrange(len(d)) if d else 0
        op = rng.randrange(6)
        if op == 0 and d:
            d[k] = rng.randrange(256)
        elif op == 1 and d:
            d[k] ^= 1 << rng.randrange(8)
        elif op == 2:
            d[k:k] = bytes(rng.randrange(256) for _ in range(rng.choice((1, 4, 8))))
        elif op == 3 and d:
            del d[k:k + rng.choice((1, 4, 16))]
        elif op == 4 and len(d) >= 4:  # an interesting 32-bit value over an offset or a count
            v = rng.choice((0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, len(d), len(d) - 4, 4))
            k -= k % 4
            d[k:k + 4] = v.to_bytes(4, "little")
        elif op == 5 and d:
            j = rng.randrange(len(d))
            d[k:k + 8] = d[j:j + 8]
    return bytes(d)


def run_case(path, kind, out_dir):
    try:
        artifacts.import_file(kind, path)
        artifacts.replan_file(kind, path, os.path.join(out_dir, "re." + kind), "opt", 16, None)
        return "read"
    except MemplanError:
        return "refused"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=0, help="stop after this long too (0: only --cases)")
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--out", default="results/failures/artifacts")
    ap.add_argument("seeds", nargs="+")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    seeds = [(p, open(p, "rb").read(), "pte" if p.endswith(".pte") else "tflite") for p in a.seeds]
    counts = {"read": 0, "refused": 0, "finding": 0}
    os.makedirs(a.out, exist_ok=True)
    import time

    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        case = os.path.join(tmp, "case")
        for i in range(a.cases):
            if a.seconds and time.monotonic() - t0 > a.seconds:
                break
            path, data, kind = rng.choice(seeds)
            blob = mutate(rng, data)
            with open(case, "wb") as f:
                f.write(blob)
            try:
                counts[run_case(case, kind, tmp)] += 1
            except Exception:
                counts["finding"] += 1
                name = os.path.join(a.out, "finding-%d.%s" % (i, kind))
                with open(name, "wb") as f:
                    f.write(blob)
                with open(name + ".txt", "w") as f:
                    f.write("from %s\n%s" % (path, traceback.format_exc()))
    done = counts["read"] + counts["refused"] + counts["finding"]
    print("artifacts campaign: %d cases (seed %d) in %.0f s: %d read, %d refused, %d findings"
          % (done, a.seed, time.monotonic() - t0, counts["read"], counts["refused"], counts["finding"]))
    return 1 if counts["finding"] else 0


if __name__ == "__main__":
    sys.exit(main())
