#!/bin/sh
# viz.sh - memplan trace, svg and report --html from the command line, and
# their output rendered for real in headless Chromium.
#
# Needs Debian's chromium and imagemagick (identify); without them the test
# FAILS.  A picture passes when:
#   - the screenshot is not blank: ImageMagick's `identify -format %k`
#     counts at least 8 distinct colours (a blank page has 1);
#   - the page logs nothing to the console: Chromium runs with
#     --enable-logging=stderr and every console message (errors, uncaught
#     exceptions) appears there as a ":CONSOLE" line; our pages have no
#     script, so any such line fails;
#   - the DOM Chromium built (--dump-dom) has the expected content and no
#     XML <parsererror>.
# Each detector is first shown to fire on a deliberately broken page.
set -u
. tests/cli/common.inc
has() { grep -q -- "$2" "$1" && ok || bad "$1 lacks '$2': $(head -c 300 "$1")"; }

# ------------------------------------------------------------ the CLI
"$M" gen --seed 3 --tensors 60 --devices cpu,cuda:0 -o "$T/g.mpg"
"$M" plan "$T/g.mpg" -o "$T/g.mpp"
expect_rc 0 "$M" trace --help
has "$T/out" "Perfetto"
expect_rc 0 "$M" svg --help
has "$T/out" "--color device|graph"
expect_rc 2 "$M" trace
expect_rc 2 "$M" svg "$T/g.mpg"
expect_rc 2 "$M" svg "$T/g.mpg" "$T/g.mpp" "$T/g.mpp"
expect_rc 2 "$M" svg --bogus "$T/g.mpg" "$T/g.mpp"
expect_rc 2 "$M" svg --color red "$T/g.mpg" "$T/g.mpp"
has "$T/err" "bad value 'red' for --color"
expect_rc 2 "$M" svg --width 5 "$T/g.mpg" "$T/g.mpp"
expect_rc 2 "$M" svg --height "$T/g.mpg" "$T/g.mpp"
expect_rc 2 "$M" trace --output "$T/g.mpg"
expect_rc 2 "$M" svg "$T/missing.mpg" "$T/g.mpp"
has "$T/err" "memplan svg: $T/missing.mpg: cannot open"

# bad input: file:line message, exit 2, no output file, no temporary left
printf 'memplan-graph 1\ngraph g\ntensor x 4 bogus\n' >"$T/broken.mpg"
expect_rc 2 "$M" svg -o "$T/b.svg" "$T/broken.mpg" "$T/g.mpp"
has "$T/err" "broken.mpg:3: unknown tensor attribute 'bogus'"
printf 'memplan-plan 1\noptions alignment=16\n' >"$T/broken.mpp"
expect_rc 2 "$M" trace -o "$T/b.json" "$T/g.mpg" "$T/broken.mpp"
has "$T/err" "memplan trace: $T/broken.mpp:2: missing field"
[ ! -e "$T/b.svg" ] && [ ! -e "$T/b.json" ] && ok || bad "partial output left behind"
[ -z "$(ls "$T" | grep tmp)" ] && ok || bad "temporary file left behind"

# -o and stdout agree; the same inputs give the same bytes
for cmd in trace svg; do
    expect_rc 0 "$M" $cmd -o "$T/a.$cmd" "$T/g.mpg" "$T/g.mpp"
    "$M" $cmd "$T/g.mpg" "$T/g.mpp" >"$T/b.$cmd"
    cmp -s "$T/a.$cmd" "$T/b.$cmd" && ok || bad "$cmd: -o differs from stdout"
    "$M" $cmd "$T/g.mpg" "$T/g.mpp" >"$T/c.$cmd"
    cmp -s "$T/a.$cmd" "$T/c.$cmd" && ok || bad "$cmd: output not deterministic"
done
has "$T/a.trace" '"traceEvents":\['
has "$T/a.trace" '"cat":"sub-graph"'
has "$T/a.svg" '<svg xmlns="http://www.w3.org/2000/svg"'
expect_rc 0 "$M" svg --color graph --width 900 --height 200 --title "g & co" -o "$T/g2.svg" "$T/g.mpg" "$T/g.mpp"
has "$T/g2.svg" "g &amp; co"
cp "$T/a.svg" "$T/g.svg"

# a plan with violations still draws, outlined in red
sed 's/offset=\([0-9]*\) size/offset=0 size/' "$T/g.mpp" >"$T/bad.mpp"
expect_rc 1 "$M" verify "$T/g.mpg" "$T/bad.mpp"
expect_rc 0 "$M" svg -o "$T/bad.svg" "$T/g.mpg" "$T/bad.mpp"
has "$T/bad.svg" 'class="v"><title>'
has "$T/bad.svg" "INVALID: "

# a legend says what the colours and shapes mean
has "$T/g.svg" "boxes: tensors, coloured by device"
# tensors live the whole program (a 100 KB KV cache) get a compressed band
# of their own; the rest fills the panel (a 2 KB tensor is 104 of 260 px)
cat >"$T/wl.mpg" <<'G'
memplan-graph 1
graph main
tensor x 1000
tensor kv 100000 mutable
tensor a 2000
tensor b 2000
tensor c 1000
tensor y 1000
node placeholder out=x
node placeholder out=kv
node call in=x,kv out=a
node call in=a out=b
node call in=b,kv out=c
node call in=c out=y
node output in=y
end
G
"$M" plan --algo opt -o "$T/wl.mpp" "$T/wl.mpg"
expect_rc 0 "$M" svg -o "$T/wl.svg" "$T/wl.mpg" "$T/wl.mpp"
has "$T/wl.svg" '<title>whole-life band: bytes 0..100000, taken by tensors live over the whole program'
has "$T/wl.svg" ">whole-life tensors: 97.7 KiB, drawn compressed to 20% of the height<"
h=$(sed -n 's/.*height="\([0-9.]*\)" class="c[0-9]*"><title>a (main).*/\1/p' "$T/wl.svg")
[ "${h%.*}" -ge 100 ] 2>/dev/null && ok || bad "the 2 KB tensor is ${h:-?} px tall beside a whole-life band"
grep -q 'class="wl"' "$T/g.svg" && bad "a band where no tensor lives the whole program" || ok

# a long run of placeholders (an fx export's weights) is drawn compressed:
# the first real node sits within the first tenth of the width, not at 80%
{ echo "memplan-graph 1"; echo "graph main"; echo "tensor x 64"
  for i in $(seq 1 40); do echo "tensor w$i 64 const"; done
  echo "tensor a 64"; echo "tensor b 64"
  echo "node placeholder out=x"; for i in $(seq 1 40); do echo "node placeholder out=w$i"; done
  echo "node call in=x,w1 out=a"; echo "node call in=a,w2 out=b"; echo "node output in=b"; echo "end"; } >"$T/ph.mpg"
"$M" plan -o "$T/ph.mpp" "$T/ph.mpg"
expect_rc 0 "$M" svg -o "$T/ph.svg" "$T/ph.mpg" "$T/ph.mpp"
has "$T/ph.svg" "nodes 0..40: 41 placeholders (inputs, weights), drawn compressed</title>"
xa=$(sed -n 's/.*<rect x="\([0-9.]*\)"[^>]*><title>a (main).*/\1/p' "$T/ph.svg")
[ "${xa%.*}" -le $((84 + 120)) ] 2>/dev/null && ok || bad "the first computed tensor starts at x=$xa"
grep -q "drawn compressed</title>" "$T/g.svg" && bad "placeholders compressed where there are few" || ok

# 10^4 tensors stay small
"$M" gen --seed 1 --tensors 10000 -o "$T/big.mpg"
"$M" plan "$T/big.mpg" -o "$T/big.mpp"
expect_rc 0 "$M" svg -o "$T/big.svg" "$T/big.mpg" "$T/big.mpp"
size=$(wc -c <"$T/big.svg")
echo "viz: the SVG of 'gen --seed 1 --tensors 10000' is $size bytes"
[ "$size" -lt 2097152 ] && ok || bad "10^4-tensor SVG is $size bytes (limit 2 MiB)"

# report: text, csv, json as before, -o, --html with pictures
"$M" harness --seed 1 --count 12 --db "$T/m.db" >/dev/null 2>&1
"$M" harness --seed 2 --count 12 --db "$T/m.db" >/dev/null 2>&1
expect_rc 0 "$M" report --db "$T/m.db"
has "$T/out" "== quality =="
expect_rc 0 "$M" report --db "$T/m.db" --format csv
has "$T/out" "^section,run,started"
expect_rc 0 "$M" report --db "$T/m.db" --format json -o "$T/r.json"
has "$T/r.json" '^{"quality":\['
expect_rc 2 "$M" report --db "$T/m.db" --html --format csv
expect_rc 2 "$M" report --db "$T/m.db" --svg-dir "$T/x"
expect_rc 2 "$M" report --db "$T/missing.db" --html -o "$T/no.html"
[ ! -e "$T/no.html" ] && ok || bad "report left a file after failing"
mkdir -p "$T/rep"
expect_rc 0 "$M" report --db "$T/m.db" --html -o "$T/rep/report.html" --svg-dir "$T/rep/svg"
has "$T/rep/report.html" '<a href="svg/h[0-9]*-[0-9]*-[a-z]*.svg">svg</a>'
links=$(grep -o 'href="svg/[^"]*"' "$T/rep/report.html" | sed 's/href="\(.*\)"/\1/' | sort -u)
missing=0
for l in $links; do [ -s "$T/rep/$l" ] || missing=$((missing + 1)); done
[ -n "$links" ] && [ "$missing" = 0 ] && ok || bad "report links to missing SVGs ($missing)"
first=$(echo "$links" | head -1)
"$M" report --db "$T/m.db" --html >"$T/rep/stdout.html"
grep -q '<a href' "$T/rep/stdout.html" && bad "links without --svg-dir" || ok
grep -q -i -E '<script|<link| src=|url\(' "$T/rep/report.html" && bad "report is not self-contained" || ok

# -------------------------------------------------- rendered by Chromium
CHROME=$(command -v chromium || true)
IDENTIFY=""
for c in /usr/bin/identify $(command -v identify || true); do
    if [ -x "$c" ] && "$c" -version 2>/dev/null | grep -q ImageMagick; then IDENTIFY=$c; break; fi
done
[ -n "$CHROME" ] && ok || bad "chromium not found: apt-get install chromium"
[ -n "$IDENTIFY" ] && ok || bad "ImageMagick's identify not found: apt-get install imagemagick"

chrome() { # a private profile and home: nothing outside $T is read or written
    HOME="$T" XDG_CONFIG_HOME="$T/xdg" XDG_CACHE_HOME="$T/xdg" timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --no-first-run --no-default-browser-check --hide-scrollbars \
        --user-data-dir="$T/profile" --enable-logging=stderr --v=0 "$@"
}
# shot FILE: a screenshot in FILE.png, Chromium's log in FILE.log
shot() { chrome --window-size=1320,1000 --screenshot="$1.png" "file://$1" >/dev/null 2>"$1.log"; }
colours() { [ -s "$1" ] && "$IDENTIFY" -format %k "$1" 2>/dev/null || echo 0; }
blank() { [ "$(colours "$1")" -lt 8 ]; }
console() { grep ':CONSOLE' "$1"; }
dom() { chrome --dump-dom "file://$1" 2>"$1.domlog" >"$1.dom"; }

if [ -n "$CHROME" ] && [ -n "$IDENTIFY" ]; then
    # the detectors fire on broken pages
    printf '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" fill="#fff"/></svg>\n' >"$T/empty.svg"
    shot "$T/empty.svg"
    [ -s "$T/empty.svg.png" ] && blank "$T/empty.svg.png" && ok || bad "blank check missed an empty page ($(colours "$T/empty.svg.png") colours)"
    printf '<!DOCTYPE html><html><body><p>x</p><script>notDefinedAnywhere();</script></body></html>\n' >"$T/broken.html"
    shot "$T/broken.html"
    console "$T/broken.html.log" | grep -q "Uncaught ReferenceError" && ok || bad "console check missed a script error"
    printf '<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>\n' >"$T/broken.svg"
    dom "$T/broken.svg"
    grep -q parsererror "$T/broken.svg.dom" && ok || bad "DOM check missed an XML error"

    # the real pictures
    cp "$T/rep/$first" "$T/linked.svg"
    for f in g.svg bad.svg big.svg rep/report.html linked.svg; do
        shot "$T/$f"
        [ -s "$T/$f.png" ] && ok || bad "$f: no screenshot: $(tail -3 "$T/$f.log")"
        blank "$T/$f.png" && bad "$f: blank screenshot ($(colours "$T/$f.png") colours)" || ok
        console "$T/$f.log" && bad "$f: console messages" || ok
        # the DOM proves the page itself loaded (an error page is not blank either)
        dom "$T/$f"
        case $f in *.svg) want='<svg xmlns="http://www.w3.org/2000/svg"' ;; *) want='memplan metrics report' ;; esac
        grep -q "$want" "$T/$f.dom" && ok || bad "$f: Chromium's DOM lacks '$want'"
        grep -q parsererror "$T/$f.dom" && bad "$f: XML error in Chromium" || ok
        console "$T/$f.domlog" && bad "$f: console messages" || ok
    done
    echo "viz: screenshot colours: g.svg $(colours "$T/g.svg.png"), big.svg $(colours "$T/big.svg.png"), report.html $(colours "$T/rep/report.html.png"), empty page $(colours "$T/empty.svg.png")"
    has "$T/rep/report.html.dom" 'class="chart"'
fi

echo "viz: $pass passed, $fail failed"
[ "$fail" = 0 ]
