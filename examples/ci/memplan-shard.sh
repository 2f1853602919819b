#!/bin/sh
# memplan-shard.sh K N SHARD.db [HARNESS OPTIONS...]
#
# One CI machine's share of a memplan harness run: the cases i with
# i mod N == K of `memplan harness HARNESS OPTIONS`, recorded in SHARD.db
# (docs/ci.md).  Every machine of the matrix gives the same options.  Exit
# status: memplan harness's (1 when a plan failed a check; its reproducers
# are under --failures, default results/failures).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 K N SHARD.db [HARNESS OPTIONS...]" >&2; exit 2; }
k=$1 n=$2 db=$3
shift 3
exec memplan harness --shard "$k/$n" --db "$db" --quiet "$@"
