#!/bin/sh
# The command's allocator (cli/tune.c): where transparent huge pages are
# given on request, memplan starts itself again with glibc.malloc.hugetlb=1
# added to GLIBC_TUNABLES, once, and leaves it out when the caller chose a
# value; what memplan runs sees the caller's environment unchanged.
#
# A memplan waiting on a FIFO is looked at in /proc: its environ is the
# environment its image started with (after a restart, the one memplan
# set), its smaps say whether its heap is advised onto huge pages ("hg").
set -u
. tests/cli/common.inc
"$M" gen --seed 1 >"$T/g.mpg"
mkfifo "$T/fifo"

# start_waiting [ENV...]: a `memplan verify` that has read the graph and
# waits for its plan on the FIFO; its pid in $pid once it waits
start_waiting() {
    env "$@" "$M" verify "$T/g.mpg" "$T/fifo" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        grep -q wait_for_partner /proc/$pid/wchan 2>/dev/null && return
        sleep 0.05
    done
}
stop_waiting() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
started_with() { tr '\0' '\n' </proc/$pid/environ | grep -qx "$1"; }
heap_flags() { awk '/\[heap\]/ { h = 1 } h && /^VmFlags/ { print; exit }' /proc/$pid/smaps; }

# glibc's own allocator, not a sanitizer's: its heap can be looked at
glibc_heap=1
nm "$M" 2>/dev/null | grep -q __asan_init && glibc_heap=0
[ $glibc_heap = 1 ] || echo "tune: a sanitized build: its heap is the sanitizer's, not checked"
if grep -q '\[madvise\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
    # no GLIBC_TUNABLES: restarted, noting that the caller had none
    start_waiting -u GLIBC_TUNABLES
    started_with "MEMPLAN_GLIBC_TUNABLES_WAS=$pid" && ok || bad "not restarted, or the caller's unset GLIBC_TUNABLES not noted"
    if [ $glibc_heap = 1 ]; then heap_flags | grep -qw hg && ok || bad "the heap is not on huge pages: $(heap_flags)"; fi
    stop_waiting
    # the caller's tunables kept (glibc rewrites the variable in place, so
    # environ shows what memplan saved, and the heap that the tunable
    # took effect)
    start_waiting GLIBC_TUNABLES=glibc.malloc.perturb=0
    started_with "MEMPLAN_GLIBC_TUNABLES_WAS=$pid=glibc.malloc.perturb=0" && ok || bad "the caller's value not saved"
    stop_waiting
    # the variable in the caller's environment (forged, or a parent
    # memplan's) is not taken for a restart of this process (issue 45, B25)
    start_waiting -u GLIBC_TUNABLES MEMPLAN_GLIBC_TUNABLES_WAS==glibc.malloc.perturb=0
    started_with "MEMPLAN_GLIBC_TUNABLES_WAS=$pid" && ok || bad "a caller's MEMPLAN_GLIBC_TUNABLES_WAS taken for a restart"
    if [ $glibc_heap = 1 ]; then heap_flags | grep -qw hg && ok || bad "hugetlb=1 not added: $(heap_flags)"; fi
    stop_waiting
    # the caller's choice stands: no restart
    start_waiting GLIBC_TUNABLES=glibc.malloc.hugetlb=0
    tr '\0' '\n' </proc/$pid/environ | grep -q '^MEMPLAN_GLIBC' && bad "restarted though the caller set hugetlb" || ok
    if [ $glibc_heap = 1 ]; then heap_flags | grep -qw hg && bad "the heap on huge pages after hugetlb=0" || ok; fi
    stop_waiting
    # a tool that preloads a library (valgrind) is left alone
    start_waiting LD_PRELOAD=libm.so.6 ASAN_OPTIONS=verify_asan_link_order=0
    grep -q wait_for_partner /proc/$pid/wchan 2>/dev/null && ok || bad "memplan with LD_PRELOAD did not start"
    tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -q '^MEMPLAN_GLIBC' && bad "restarted under LD_PRELOAD" || ok
    stop_waiting
else
    echo "tune: transparent huge pages are not 'madvise' here: memplan does not restart; restart not checked"
fi

# what memplan runs sees the caller's environment: an external planner
# records its own
cat >"$T/envdump.sh" <<S
#!/bin/sh
env >>"$T/env.\$\$"
exec "$(cd "$(dirname "$M")" && pwd)/$(basename "$M")" plan --algo opt "\$@"
S
chmod +x "$T/envdump.sh"
expect_rc 0 env -u GLIBC_TUNABLES "$M" harness --seed 1 --count 2 --quiet --db "$T/a.db" --failures "$T/fa" \
    --planner dump="$T/envdump.sh"
ls "$T"/env.* >/dev/null 2>&1 && ok || bad "the external planner did not run"
cat "$T"/env.* 2>/dev/null | grep -q '^GLIBC_TUNABLES=\|^MEMPLAN_GLIBC' && bad "an external planner saw memplan's tunables" || ok
rm -f "$T"/env.*
expect_rc 0 env GLIBC_TUNABLES=glibc.malloc.perturb=0 "$M" harness --seed 1 --count 2 --quiet --db "$T/b.db" \
    --failures "$T/fb" --planner dump="$T/envdump.sh"
[ "$(cat "$T"/env.* | grep '^GLIBC_TUNABLES=\|^MEMPLAN_GLIBC' | sort -u)" = "GLIBC_TUNABLES=glibc.malloc.perturb=0" ] && ok ||
    bad "an external planner saw: $(cat "$T"/env.* | grep '^GLIBC_TUNABLES=\|^MEMPLAN_GLIBC' | sort -u)"
# B25: a caller's MEMPLAN_GLIBC_TUNABLES_WAS does not become the
# GLIBC_TUNABLES of what memplan runs
rm -f "$T"/env.*
expect_rc 0 env -u GLIBC_TUNABLES MEMPLAN_GLIBC_TUNABLES_WAS==glibc.malloc.perturb=0 "$M" harness --seed 1 --count 2 \
    --quiet --db "$T/c.db" --failures "$T/fc" --planner dump="$T/envdump.sh"
cat "$T"/env.* 2>/dev/null | grep -q '^GLIBC_TUNABLES=' && bad "B25: a forged variable set GLIBC_TUNABLES: $(cat "$T"/env.* | grep '^GLIBC_TUNABLES=' | sort -u)" || ok
echo "tune: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
