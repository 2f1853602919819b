#!/bin/sh
# memplan-gate.sh BASELINE.sql OUT_DIR SHARD.db...
#
# The shards of one harness run made one run (OUT_DIR/merged.db), its HTML
# report (OUT_DIR/memplan-report.html, written even when the gate fails:
# upload it as an artifact) and the gate against the committed baseline
# (docs/ci.md).  Exit status: 0 the gate passed, 1 it found regressions,
# 2 the shards or the baseline do not fit together.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BASELINE.sql OUT_DIR SHARD.db..." >&2; exit 2; }
baseline=$1 out=$2
shift 2
mkdir -p "$out"
rm -f "$out/merged.db" "$out/merged.db-wal" "$out/merged.db-shm"
memplan merge "$out/merged.db" "$@"
memplan report --db "$out/merged.db" --html -o "$out/memplan-report.html"
memplan report --db "$out/merged.db" >"$out/memplan-report.txt"
memplan gate --db "$out/merged.db" --baseline "$baseline"
