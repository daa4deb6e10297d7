#!/usr/bin/env bash
# t2exp plot: a small grid on the quadratic trial, plotted as SVG and PNG. The SVGs are valid XML
# with a <title> and a <desc> naming the axes and series; learning_curves has one line per top
# trial (counted by palette stroke colour) and each line has one point per stored metric row
# (counted as L commands: chart.c draws one segment per point); best_so_far has a point per
# validation; importance has a bar per searched hyperparameter; parallel has a line per trial; PNGs are PNGs; bad options, an unknown experiment, an experiment without metrics and
# an unwritable --out are refused with commands.h's exit codes, leaving no partial file behind.
source "$(dirname "$0")/common.bash"
command -v python3 >/dev/null || { echo "plot: skipped (no python3)"; exit 77; }
command -v sqlite3 >/dev/null || { echo "plot: skipped (no sqlite3)"; exit 77; }
[ -x "$T2EXP" ] && [ -e "$TRIALS/quadratic.so" ] || { echo "plot: skipped ($T2EXP or quadratic.so not built)"; exit 77; }

# 3 x 2 = 6 trials of 6 batches, training loss every 2 batches and a validation every 2.
expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_grid.yaml" "$TRIALS/quadratic.so" --quiet \
  --config hyperparameters.x.count=3 --config hyperparameters.y.count=2 --config searcher.max_length.batches=6 \
  --config min_validation_period.batches=2 --config scheduling_unit=2
[ "$(sql 'SELECT count(*) FROM trials WHERE experiment_id=1')" = 6 ] || fail "6 trials expected"

expect_exit 0 "$T2EXP" plot 1 --out "$WORK/svg" --format svg --top 3
expect_in "$OUT" "learning_curves.svg"
"$T2EXP" describe 1 --json > "$WORK/describe.json"
for n in $(seq 0 5); do "$T2EXP" metrics "1.$n" --json > "$WORK/metrics.$n.json"; done
"$T2EXP" importance 1 --json > "$WORK/importance.json"

python3 - "$WORK" <<'PY' || fail "the SVG checks failed (above)"
import json, re, sys, xml.dom.minidom
work = sys.argv[1]
# chart.c's palette, in legend order: series i is drawn in PALETTE[i].
PALETTE = [0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0xbcbd22, 0x17becf, 0x393b79]
bad = []
def check(ok, what):
    if not ok: bad.append(what)

def load(name):
    path = f"{work}/svg/{name}.svg"
    doc = xml.dom.minidom.parse(path)  # raises on invalid XML
    svg = doc.documentElement
    check(svg.tagName == "svg", f"{name}: root is {svg.tagName}")
    kids = [k for k in svg.childNodes if k.nodeType == k.ELEMENT_NODE]
    check(len(kids) >= 2 and kids[0].tagName == "title" and kids[1].tagName == "desc",
          f"{name}: <title> and <desc> do not come first")
    text = lambda tag: "".join(t.data for e in doc.getElementsByTagName(tag)[:1] for t in e.childNodes)
    return doc, text("title"), text("desc")

def series_paths(doc):
    """Stroked paths in a palette colour: {palette index: [L count of each path, in order]}."""
    out = {}
    for p in doc.getElementsByTagName("path"):
        m = re.search(r"stroke:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", p.getAttribute("style"))
        if not m: continue
        rgb = [round(float(v) * 255 / 100) for v in m.groups()]
        c = (rgb[0] << 16) | (rgb[1] << 8) | rgb[2]
        if c in PALETTE:
            out.setdefault(PALETTE.index(c), []).append(len(re.findall(r"\bL\b", p.getAttribute("d"))))
    return out

ranked = json.load(open(f"{work}/describe.json"))["trials"]
top = [t["trial"] for t in ranked[:3]]

doc, title, desc = load("learning_curves")
check("learning curves" in title, f"learning_curves title: {title!r}")
check("x axis: batches" in desc and "y axis: loss" in desc, f"learning_curves desc lacks the axes: {desc!r}")
# Named as the CLI names trials, EXP.N (it said "trial 3", which reads as store id 3).
named = [int(n) for n in re.findall(r"trial 1\.(\d+)", desc)]
check(named == top, f"desc names trials {named} as 1.N, describe ranks {top} first: {desc!r}")
paths = series_paths(doc)
check(sorted(paths) == [0, 1, 2], f"series colours {sorted(paths)}, wanted 3 (0, 1, 2)")
for i, ordinal in enumerate(top):
    rows = json.load(open(f"{work}/metrics.{ordinal}.json"))
    want = [sum(1 for r in rows if r["kind"] == k and r["name"] == "loss") for k in ("training", "validation")]
    check(paths.get(i) == want, f"trial {ordinal}: points per line {paths.get(i)}, stored rows {want}")
    check(want[0] > 1 and want[1] > 1, f"trial {ordinal}: too few rows to test lines: {want}")

doc, title, desc = load("best_so_far")
check("best loss so far" in title, f"best_so_far title: {title!r}")
check("y axis: loss" in desc and "series: best so far" in desc, f"best_so_far desc: {desc!r}")
nval = sum(sum(1 for r in json.load(open(f"{work}/metrics.{n}.json")) if r["kind"] == "validation" and r["name"] == "loss")
           for n in range(6))
steps = series_paths(doc).get(0, [])
# A step line: one segment for the first point, two (across, then up or down) for each later one.
check(steps == [2 * nval - 1], f"best_so_far: {steps} segments for {nval} validations")

doc, title, desc = load("hparams")
check("x axis: x, y; y axis: loss" in desc, f"hparams desc: {desc!r}")

# importance: a filled bar per searched hyperparameter (one path, a closed rectangle each), in palette colour 0.
imp = json.load(open(f"{work}/importance.json"))["importance"]
doc, title, desc = load("importance")
check("hyperparameter importance (fANOVA)" in title, f"importance title: {title!r}")
check("y axis: hyperparameter" in desc and "one bar per searched hyperparameter" in desc, f"importance desc: {desc!r}")
bars = [len(re.findall(r"\bZ\b", p.getAttribute("d"))) for p in doc.getElementsByTagName("path")
        if re.search(r"fill:rgb\(12.1\d*%,46.6\d*%,70.5\d*%\)", p.getAttribute("style"))]
check(bars == [len(imp)], f"importance: bars {bars}, wanted one path of {len(imp)}")
# parallel: an axis per varying hparam and the metric, one stroked line per trial with a
# validation, the best drawn last (on top) in the darkest colour.
doc, title, desc = load("parallel")
check("parallel coordinates of hyperparameters and loss" in title, f"parallel title: {title!r}")
check("x axis: x, y, loss;" in desc and "6 trials" in desc, f"parallel desc: {desc!r}")
lines = [p.getAttribute("style") for p in doc.getElementsByTagName("path") if "stroke-width:1.5;" in p.getAttribute("style")]
check(len(lines) == 6, f"parallel: {len(lines)} trial lines, wanted 6")
def lightness(style):
    m = re.search(r"stroke:rgb\(([\d.]+)%,([\d.]+)%,([\d.]+)%\)", style)
    return sum(float(v) for v in m.groups()) if m else -1
check(len(lines) == 6 and lightness(lines[-1]) < lightness(lines[0]), "parallel: the best line is not drawn last and darkest")
if bad:
    print("\n".join("FAIL: " + b for b in bad), file=sys.stderr)
    sys.exit(1)
PY

# PNG: the signature, a plausible size and the figure's dimensions in IHDR.
expect_exit 0 "$T2EXP" plot 1 --out "$WORK/png" --format png --top 3
for f in learning_curves best_so_far hparams importance parallel; do
  [ "$(head -c 8 "$WORK/png/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f.png: no PNG signature"
  [ "$(stat -c %s "$WORK/png/$f.png")" -gt 5000 ] || fail "$f.png: only $(stat -c %s "$WORK/png/$f.png") bytes"
done
[ "$(od -An -tu1 -j16 -N4 "$WORK/png/learning_curves.png" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')" -ge 1000 ] \
  || fail "learning_curves.png: narrower than two panels"

# Refusals: exit 2 for usage and unknown experiments, with the problem named.
expect_exit 2 "$T2EXP" plot 1 --out "$WORK/x" --top 0
expect_in "$OUT" "--top"
expect_exit 2 "$T2EXP" plot 1 --out "$WORK/x" --format jpeg
expect_in "$OUT" "--format must be svg or png"
expect_exit 2 "$T2EXP" plot 99 --out "$WORK/x"
expect_in "$OUT" "no experiment 99"
expect_exit 2 "$T2EXP" plot 1
expect_in "$OUT" "--out"
expect_exit 2 "$T2EXP" plot 1 --out "$WORK/x" --frob
expect_in "$OUT" "unknown option --frob"
expect_exit 2 "$T2EXP" plot 1 --out "$WORK/x" --top
expect_in "$OUT" "a value is missing after --top"
expect_exit 2 "$T2EXP" plot one --out "$WORK/x"
expect_in "$OUT" "not an experiment id"
[ ! -e "$WORK/x" ] || fail "a refused plot made its --out directory"

# An experiment whose only trial never reported (build_model refuses its hparams): exit 1.
cat > "$WORK/none.yaml" <<'Y'
name: no_metrics
hyperparameters: {global_batch_size: 1, x: 3, y: 0, invalid_above: 0}
searcher: {name: single, metric: loss, max_length: {batches: 2}}
max_restarts: 0
Y
set +e
"$T2EXP" create "$WORK/none.yaml" "$TRIALS/quadratic.so" --quiet >/dev/null 2>&1
set -e
[ "$(sql 'SELECT count(*) FROM metrics m JOIN trials t ON t.id = m.trial_id WHERE t.experiment_id = 2')" = 0 ] \
  || fail "experiment 2 was meant to have no metrics"
expect_exit 1 "$T2EXP" plot 2 --out "$WORK/none"
expect_in "$OUT" "no metrics"

# Unwritable --out: a file where the directory should be, then a directory where a file should
# be; exit 3, and no temporary or partial file is left.
: > "$WORK/afile"
expect_exit 3 "$T2EXP" plot 1 --out "$WORK/afile"
expect_in "$OUT" "not a directory"
mkdir -p "$WORK/blocked/hparams.svg"
expect_exit 3 "$T2EXP" plot 1 --out "$WORK/blocked"
expect_in "$OUT" "hparams.svg"
[ -z "$(find "$WORK/blocked" -name '.*tmp*')" ] || fail "temporary files left: $(ls -A "$WORK/blocked")"
[ -d "$WORK/blocked/hparams.svg" ] || fail "the directory in the way was replaced"
python3 -c 'import sys, xml.dom.minidom; [xml.dom.minidom.parse(f) for f in sys.argv[1:]]' \
  "$WORK/blocked/learning_curves.svg" "$WORK/blocked/best_so_far.svg" || fail "a file written before the failure is not whole"
# Markup and non-ASCII in names are escaped in the title and desc (the SVG stays valid XML), and a
# name cut inside a character by the title's length limit still draws (cairo refuses bad UTF-8).
cat > "$WORK/odd.yaml" <<'Y'
name: "a<b & c>'d\" xéééééééééééééééééééééééééééééééééééééééééééééé"
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -5, maxval: 5, count: 2}, "<k&>": {type: categorical, vals: [1, 1000]}, y: 0}
searcher: {name: grid, metric: loss, max_length: {batches: 2}}
Y
expect_exit 0 "$T2EXP" create "$WORK/odd.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" plot 3 --out "$WORK/odd"
python3 - "$WORK/odd" <<'PY' || fail "markup in names broke the SVGs"
import sys, xml.dom.minidom
for name in ("learning_curves", "best_so_far", "hparams"):
    doc = xml.dom.minidom.parse(f"{sys.argv[1]}/{name}.svg")
    get = lambda tag: "".join(t.data for t in doc.getElementsByTagName(tag)[0].childNodes)
    assert "(a<b & c>'d\" xé" in get("title"), get("title")
    assert "?)" in get("title"), "the cut character should show as ?: " + get("title")
    if name == "learning_curves": assert "trial 3.0 (x=5, <k&>=1000)" in get("desc"), get("desc")
    if name == "hparams": assert "x axis: x, <k&>;" in get("desc"), get("desc")
PY

# Nested hyperparameter groups are plotted by their leaves' dotted names, as `t2exp importance`
# names them: a panel and an axis each for opt.lr and opt.wd, and the legend names them; a
# categorical of maps gives its trials different leaves (opt.sched.kind, opt.sched.gamma), each an
# axis too. Without flattening, the hparams figure had no opt panel and parallel one axis of JSON.
cat > "$WORK/nested.yaml" <<'Y'
name: nested
hyperparameters:
  global_batch_size: 1
  x: 1
  y: -2
  opt:
    lr: {type: log, minval: -4, maxval: -1}
    wd: {type: double, minval: 0, maxval: 0.1}
    sched: {type: categorical, vals: [{kind: step, gamma: 0.5}, {kind: cosine}]}
searcher: {name: random, metric: loss, max_length: {batches: 2}, max_trials: 8}
reproducibility: {experiment_seed: 3}
Y
expect_exit 0 "$T2EXP" create "$WORK/nested.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" plot 4 --out "$WORK/nested"
python3 - "$WORK/nested" <<'PY' || fail "nested hyperparameters are not plotted by their dotted names"
import sys, xml.dom.minidom
def desc(name):
    doc = xml.dom.minidom.parse(f"{sys.argv[1]}/{name}.svg")
    return "".join(t.data for t in doc.getElementsByTagName("desc")[0].childNodes)
d = desc("hparams")
assert "x axis: opt.lr, opt.wd; y axis: loss" in d, d  # gamma: one value (0.5) where present
d = desc("parallel")
assert "x axis: opt.lr, opt.wd, opt.sched.kind, opt.sched.gamma, loss;" in d, d
assert "{" not in d, "a group drawn as JSON: " + d
d = desc("learning_curves")
assert "opt.lr=" in d and "opt.wd=" in d and "opt.sched.kind=" in d, d
PY

# The legend names the hparams that vary between trials whatever their type: a categorical of
# strings too (the legend said trial 0 (x=-5) for trials that differed in cat). Fixed ones (y) not.
cat > "$WORK/cat.yaml" <<'Y'
name: categorical
hyperparameters: {global_batch_size: 1, x: {type: double, minval: -5, maxval: 5, count: 2}, y: 0,
                  cat: {type: categorical, vals: [adam, sgd]}}
searcher: {name: grid, metric: loss, max_length: {batches: 2}}
Y
expect_exit 0 "$T2EXP" create "$WORK/cat.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" plot 5 --out "$WORK/cat" --top 4
python3 - "$WORK/cat" <<'PY' || fail "the learning curves' legend leaves out a categorical hyperparameter that varies"
import re, sys, xml.dom.minidom
doc = xml.dom.minidom.parse(f"{sys.argv[1]}/learning_curves.svg")
d = "".join(t.data for t in doc.getElementsByTagName("desc")[0].childNodes)
got = sorted(re.findall(r"trial 5\.\d \((x=-?5, cat=(?:adam|sgd))\)", d))
assert got == ["x=-5, cat=adam", "x=-5, cat=sgd", "x=5, cat=adam", "x=5, cat=sgd"], d
PY

# The store was only read.
store_ok
echo "plot: ok"
