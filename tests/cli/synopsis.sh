#!/bin/sh
# The command synopsis (docs/usage.md, which the README links) lists every command `memplan --help`
# lists, and for each command every flag its `--help` lists.
set -u
. tests/cli/common.inc
syn=$(sed -n '/^## Commands/,/^## /p' docs/usage.md | sed -n '/^```$/,/^```$/p')
cmds=$("$M" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
[ -n "$cmds" ] && ok || bad "memplan --help lists no commands"
for c in $cmds; do
    line=$(echo "$syn" | awk -v c="$c" '$1 == "memplan" && $2 == c {p = 1; print; next} p && /^  / {print; next} {p = 0}')
    if [ -z "$line" ]; then bad "synopsis lacks 'memplan $c'"; continue; fi
    # the flags its --help documents: option lines ("  --flag ARG  text",
    # "  -o, --output FILE  text"), not flags named in prose
    for f in $("$M" "$c" --help | sed -n 's/^  \{1,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p' | sort -u); do
        [ "$f" = "--help" ] && continue
        want=$f
        [ "$f" = "--output" ] && want="-o"
        echo "$line" | grep -q -- "$want\b" && ok || bad "synopsis of '$c' lacks $want"
    done
done
echo "synopsis: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
