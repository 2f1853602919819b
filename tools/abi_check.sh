#!/bin/sh
# abi_check.sh LIBRARY DUMP_DIR HEADERS_DIR: does LIBRARY keep the promise
# of its SONAME?  DUMP_DIR holds one abidw dump per SONAME, taken at the
# release that introduced it (tools/abi/libmemplan.so.2.abi).  Compared with
# abidiff (Debian's abigail-tools), over the types HEADERS_DIR defines (the
# opaque handles' insides are not part of the interface):
# - functions or variables added: fine (the interface grows);
# - one removed, or one whose types changed (a public struct grew, a
#   parameter changed): the SONAME must change, exit 1; except a member
#   appended to a struct that carries its size (DUMP_DIR/sized-structs.suppr);
# - no dump for this SONAME: a new major version without its dump, exit 1
#   (make abi-dump writes it).
# Exit 2 when the check itself cannot run.
set -u
[ $# -eq 3 ] || { echo "usage: $0 LIBRARY DUMP_DIR HEADERS_DIR" >&2; exit 2; }
lib=$1 dir=$2 headers=$3
command -v abidiff >/dev/null || { echo "abi_check: abidiff not found (apt-get install abigail-tools)" >&2; exit 2; }
soname=$(readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || { echo "abi_check: $lib has no SONAME" >&2; exit 2; }
base=$dir/$soname.abi
if [ ! -f "$base" ]; then
    echo "abi_check: no ABI dump for $soname ($base): a new major version commits its dump (make abi-dump)" >&2
    exit 1
fi
# the sized structs (DUMP_DIR/sized-structs.suppr) may grow at their end
supp=
[ -f "$dir/sized-structs.suppr" ] && supp="--suppressions $dir/sized-structs.suppr"
# shellcheck disable=SC2086
out=$(abidiff $supp --headers-dir2 "$headers" "$base" "$lib" 2>&1)
rc=$?
# abidiff's status is a bit field: 1 error, 2 usage, 4 change, 8 incompatible change
[ $((rc & 3)) -eq 0 ] || { printf 'abi_check: abidiff failed (%d):\n%s\n' "$rc" "$out" >&2; exit 2; }
# libabigail's suppression hides every change of a matched type, not only
# members appended: without it, no member of any type may move, change or
# go (what stays reported besides appended members and the new size)
if [ -n "$supp" ]; then
    moved=$(abidiff --headers-dir2 "$headers" "$base" "$lib" 2>&1 |
        grep -E "data members? (change|deletion)|offset changed|members? (was|were) removed")
    if [ -n "$moved" ]; then
        printf '%s\n' "$moved"
        echo "abi_check: $lib breaks the interface of $soname (a member moved, changed or removed):" \
            "make it compatible, or raise MP_VERSION_MAJOR (a new SONAME) and commit its dump" >&2
        exit 1
    fi
fi
broken=$(printf '%s\n' "$out" | sed -n 's/^\(Functions\|Variables\) changes summary: \([0-9]*\) Removed[^,]*, \([0-9]*\) Changed.*/\2 \3/p' |
    awk '{n += $1 + $2} END {print n + 0}')
if [ "$broken" -gt 0 ]; then
    printf '%s\n' "$out"
    echo "abi_check: $lib breaks the interface of $soname ($broken functions or variables removed or changed):" \
        "make it compatible, or raise MP_VERSION_MAJOR (a new SONAME) and commit its dump" >&2
    exit 1
fi
added=$(printf '%s\n' "$out" | sed -n 's/^Functions changes summary: .* \([0-9]*\) Added.*/\1/p')
echo "abi_check: $lib keeps the interface of $soname (${added:-0} functions added since its dump)"
