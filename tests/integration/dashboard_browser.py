"""dashboard_browser.py URL DB SHOTS FINISHED RUNNING — the dashboard in a real headless Chromium.

Run by dashboard_browser.sh against `t2exp dashboard` on a store with a finished ASHA experiment
(FINISHED, whose name, description, labels, hparam values and log lines hold markup) and a running
one (RUNNING). Checks, on every page, that it loads with no console error and that no stored
markup ran (window.__xss stays unset) while it shows as text; the trials table's row count; one
learning-curve series per picked trial with the stored point counts (also after picking one more
trial in the table); and that the running experiment's page redraws with new data by itself.
Screenshots go to SHOTS/dashboard-*.png. The expected figures come from the store itself (DB,
opened read-only).
"""
import os
import re
import signal
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

URL, DB, SHOTS, FINISHED, RUNNING = sys.argv[1:6]
FINISHED, RUNNING = int(FINISHED), int(RUNNING)
MAIN = 'document.getElementById("main")'
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def sql(q, *args):
    con = sqlite3.connect("file:%s?mode=ro" % DB, uri=True)
    try:
        return con.execute(q, args).fetchall()
    finally:
        con.close()


def load(b, route, what):
    """Opens #route and waits until the page has drawn it (data-state ready)."""
    b.navigate(URL + "#" + route)
    b.wait_for('%s && %s.dataset.route === %r && %s.dataset.state === "ready"' % (MAIN, MAIN, route, MAIN),
               timeout=30, what=what + " to load")
    b.pump(0.3)


def check_clean(b, page, markup=()):
    errs = b.console_errors()
    if errs:
        fail("%s: console errors: %s" % (page, errs))
    b.events.clear()
    ran = b.evaluate("window.__xss === undefined ? null : String(window.__xss)")
    if ran is not None:
        fail("%s: stored markup ran (window.__xss = %r)" % (page, ran))
    text = b.evaluate("document.body.textContent")
    for m in markup:
        if m not in text:
            fail("%s: the stored string %r is not shown as text" % (page, m))
    # No element came from stored markup: an <img src=x> or <script> inside <main> is a leak.
    leaked = b.evaluate('%s.querySelectorAll("script, img, b[onmouseover]").length' % MAIN)
    if leaked:
        fail("%s: %d element(s) built from stored markup" % (page, leaked))


def store_id(label):
    """The store id of the trial a series label names as the CLI does, "trial EXP.N" (None if not so)."""
    m = re.fullmatch(r"trial (\d+)\.(\d+)", label)
    if not m:
        fail("a learning curve is labelled %r, not trial EXP.N as the CLI names trials" % label)
        return None
    rows = sql("SELECT id FROM trials WHERE experiment_id=? AND ordinal=?", int(m.group(1)), int(m.group(2)))
    return rows[0][0] if rows else None


def curve_points(b):
    """{trial id: points} of the training-loss chart, and the picked ids, read from the DOM."""
    picked = b.evaluate('document.getElementById("curves").dataset.picked')
    box = 'document.querySelector("#curves [data-metric=\\"training/loss\\"]")'
    count = b.evaluate(box + '.dataset.seriesCount')
    labels = b.evaluate(box + '.dataset.series').split("\n")
    points = [int(p) for p in b.evaluate(box + '.dataset.points').split(",")]
    ids = [int(x) for x in picked.split(",")] if picked else []
    return ids, int(count), dict(zip((store_id(lbl) for lbl in labels), points))


def fact(b, name):
    """The text of the experiment or trial header's fact NAME (None when not shown)."""
    return b.evaluate('(function () { var d = Array.from(document.querySelectorAll("dl.facts > div")).filter(function (x) {'
                      ' return x.querySelector("dt").textContent === %r; })[0]; return d ? d.querySelector("dd").textContent : null; })()'
                      % name)


def list_cell(b, exp, col):
    """The list page's cell in column COL (0 = id) of experiment EXP's row."""
    return b.evaluate('document.querySelector("#experiments-table tr[data-experiment-id=\\"%d\\"]").cells[%d].textContent'
                      % (exp, col))


def check_curves(ids, count, points, page):
    if count != len(ids):
        fail("%s: %d learning-curve series for %d picked trials" % (page, count, len(ids)))
    for tid in ids:
        want = sql("SELECT count(*) FROM metrics WHERE trial_id=? AND kind='training' AND name='loss'", tid)[0][0]
        if points.get(tid) != want:
            fail("%s: trial %d's curve has %s points, the store has %d" % (page, tid, points.get(tid), want))


b = cdp.Browser()
try:
    b.open_tab()
    name = sql("SELECT name FROM experiments WHERE id=?", FINISHED)[0][0]
    markup = [name, "<script>window.__xss='label'</script>", "<script>window.__xss='description'</script>"]

    # ---- experiments list ----
    load(b, "/", "the experiments list")
    rows = b.evaluate('document.querySelectorAll("#experiments-table tbody tr").length')
    want = sql("SELECT count(*) FROM experiments")[0][0]
    if rows != want:
        fail("list: %d rows, the store has %d experiments" % (rows, want))
    check_clean(b, "list", [name, "<script>window.__xss='model'</script>"])
    models = b.evaluate('document.querySelectorAll("#models-table tbody tr").length')
    if models != sql("SELECT count(*) FROM models")[0][0]:
        fail("list: %d model rows, the store has %d models" % (models, sql("SELECT count(*) FROM models")[0][0]))
    if "model:best:1" not in b.evaluate('document.querySelector("#models-table").textContent'):
        fail("list: the models table does not name model:best:1")
    # The printed address's token became a cookie the page cannot read (HttpOnly), and left the
    # address bar (the first answer sent the browser on to / without it).
    if b.evaluate("location.search") or "token" in b.evaluate("location.href"):
        fail("list: the token is still in the address: %s" % b.evaluate("location.href"))
    if "t2exp_dashboard" in b.evaluate("document.cookie"):
        fail("list: the page's script can read the token's cookie")
    b.screenshot(os.path.join(SHOTS, "dashboard-list.png"))
    print("list: %d experiments" % rows)
    # Durations as `t2exp list` writes them (store_print.c: one decimal under 10 s): a 0.4 s
    # experiment showed as 0s. The finished experiments' from the CLI's table; then the rule itself.
    for pair in os.environ.get("T2EXP_LIST_DURATIONS", "").split():
        exp, want = pair.split("=")
        got = list_cell(b, int(exp), 8)
        if got != want:
            fail("list: experiment %s's duration shows as %r, t2exp list says %r" % (exp, got, want))
    want = {"0": "0.0s", "0.4": "0.4s", "9.94": "9.9s", "10.4": "10s", "59.5": "1m00s", "754": "12m34s", "3725": "1h02m05s"}
    got = b.evaluate("(function () { var o = {}; %s.forEach(function (v) { o[v] = T2.duration(+v); }); return o; })()"
                     % list(want))
    if got != want:
        fail("T2.duration gives %r, t2exp list's rule %r" % (got, want))

    # ---- the finished ASHA experiment ----
    route = "/experiment/%d" % FINISHED
    load(b, route, "the finished experiment")
    rows = b.evaluate('document.querySelectorAll("#trials-table tbody tr").length')
    want = sql("SELECT count(*) FROM trials WHERE experiment_id=?", FINISHED)[0][0]
    if rows != want:
        fail("experiment: %d table rows, the store has %d trials" % (rows, want))
    ids, count, points = curve_points(b)
    check_curves(ids, count, points, "experiment")
    print("experiment %d: %d rows; %d curves with points %s" % (FINISHED, rows, count, points))
    # The best trial named as the CLI names it (EXP.N), linking to its page by store id.
    best_id, best_n, best_metric = sql("SELECT t.id, t.ordinal, e.best_metric FROM experiments e JOIN trials t"
                                       " ON t.id = e.best_trial_id WHERE e.id=?", FINISHED)[0]
    best = fact(b, "best") or ""
    href = b.evaluate('(function () { var d = Array.from(document.querySelectorAll("dl.facts > div")).filter(function (x) {'
                      ' return x.querySelector("dt").textContent === "best"; })[0], a = d && d.querySelector("a");'
                      ' return a ? a.getAttribute("href") : null; })()')
    if not best.endswith("(trial %d.%d)" % (FINISHED, best_n)) or href != "#/trial/%d" % best_id:
        fail("experiment: best shows %r linking %r, want (trial %d.%d) linking #/trial/%d" % (best, href, FINISHED, best_n, best_id))
    print("experiment %d: best %r" % (FINISHED, best))
    hparam = "<script>window.__xss='hparam'</script>"
    check_clean(b, "experiment", markup + [hparam])
    rungs = b.evaluate('document.getElementById("rungs-table") ? +document.getElementById("rungs-table").dataset.rungs : 0')
    want = sql("SELECT count(DISTINCT batches_trained) FROM trials WHERE experiment_id=?", FINISHED)[0][0]
    if rungs != want:
        fail("experiment: %s ASHA rungs shown, trials stopped at %d lengths" % (rungs, want))
    # Hyperparameter importance: a bar per searched hyperparameter (x and tag), the CLI's first first.
    imp = b.evaluate('(function () { var c = document.getElementById("chart-importance");'
                     ' return c ? [c.dataset.first, +c.dataset.bars] : null; })()')
    if imp != [os.environ.get("T2EXP_IMPORTANCE_TOP"), 2]:
        fail("experiment: importance chart %s, wanted %s first of 2 bars" % (imp, os.environ.get("T2EXP_IMPORTANCE_TOP")))
    b.evaluate('document.getElementById("config").open = true')
    b.screenshot(os.path.join(SHOTS, "dashboard-experiment-asha.png"))

    # Pick one more trial in the table: one more series, with its stored points.
    # (A live redraw may be under way when the click lands: wait for the pick, not for any redraw.)
    extra = b.evaluate('(function () { var r = document.querySelector("#trials-table tbody tr:not(.picked)");'
                       ' r.querySelector("input").click(); return +r.dataset.trialId; })()')
    b.wait_for('document.getElementById("curves").dataset.picked.split(",").indexOf("%d") >= 0' % extra,
               what="the curves of the picked trial %d" % extra)
    ids2, count2, points2 = curve_points(b)
    if extra not in ids2 or len(ids2) != len(ids) + 1:
        fail("experiment: picking trial %s gave picked %s (was %s)" % (extra, ids2, ids))
    check_curves(ids2, count2, points2, "experiment after picking")
    print("picked trial %d: %d curves" % (extra, count2))

    # Sorting: a click on the "best" header orders the rows by best validation.
    b.evaluate('document.querySelector("#trials-table th[data-key=best_validation]").click()')
    b.wait_for('document.querySelector("#trials-table th[data-key=best_validation]").textContent.indexOf("▲") > 0',
               what="the sort by best")
    order = b.evaluate('Array.from(document.querySelectorAll("#trials-table tbody tr")).map(function (r) { return +r.dataset.trialId; })')
    want = [r[0] for r in sql("SELECT id FROM trials WHERE experiment_id=? ORDER BY best_validation IS NULL, best_validation, id", FINISHED)]
    if order != want:
        fail("experiment: sorted by best, rows are %s, want %s" % (order, want))
    check_clean(b, "experiment after picking and sorting")

    # ---- a trial page: curves, checkpoints, the log with markup in it ----
    tid, tag = sql("SELECT id, json_extract(hparams, '$.tag') FROM trials WHERE experiment_id=? ORDER BY id LIMIT 1", FINISHED)[0]
    load(b, "/trial/%d" % tid, "the trial page")
    b.wait_for('+document.getElementById("log").dataset.bytes > 0', what="the trial's log")
    log = b.evaluate('document.getElementById("log").textContent')
    if ("tag " + tag) not in log:
        fail("trial: the log does not show the line with tag %r as text" % tag)
    charts = b.evaluate('document.querySelectorAll("#metrics .chart").length')
    want = sql("SELECT count(DISTINCT kind || name) FROM metrics WHERE trial_id=? AND name NOT LIKE 't2exp.%'", tid)[0][0]
    if charts != want:
        fail("trial: %d metric charts, the store has %d metrics" % (charts, want))
    check_clean(b, "trial", [tag])
    n = sql("SELECT ordinal FROM trials WHERE id=?", tid)[0][0]
    head = b.evaluate('document.querySelector("#trial h1").textContent')
    if head != "Trial %d.%d" % (FINISHED, n) or fact(b, "id") != str(tid):
        fail("trial: the header says %r with id %r, want Trial %d.%d with id %d" % (head, fact(b, "id"), FINISHED, n, tid))
    b.screenshot(os.path.join(SHOTS, "dashboard-trial.png"))
    print("trial %d: %d metric charts, %d log bytes" % (tid, charts, len(log)))

    # ---- a trial searcher.pruner stopped: COMPLETED, its error column labelled "pruned" (opened
    # directly: its experiment's page never showed, so the row comes from /api/trials/TID) ----
    facts = ('Array.from(document.querySelectorAll("#trial dl.facts > div")).map(function (d) {'
             ' return d.querySelector("dt").textContent + "=" + d.querySelector("dd").textContent; })')
    one = ("SELECT * FROM (SELECT id, coalesce(error, '') FROM trials WHERE experiment_id = 3 AND state = 'COMPLETED'"
           " AND error %s ORDER BY id DESC LIMIT 1)")
    for tid, error in sql(one % "LIKE 'pruned at batch %'" + " UNION ALL " + one % "IS NULL"):
        load(b, "/trial/%d" % tid, "pruned-search trial %d" % tid)
        b.wait_for('document.querySelector("#trial dl.facts") !== null', what="trial %d's facts" % tid)
        shown = b.evaluate(facts)
        want = ["pruned=" + error] if error else []
        got = [f for f in shown if f.startswith("pruned=") or f.startswith("error=")]
        if got != want:
            fail("trial %d: facts %r, want %r" % (tid, got, want))
        check_clean(b, "pruned-search trial %d" % tid)
        print("trial %d: %s" % (tid, got[0] if got else "no error row"))

    # ---- nested hparams: a column, a scatter and an axis per leaf by its dotted name (opt.lr),
    # never one per group with JSON values; the fixed leaf (opt.momentum) is a column only ----
    load(b, "/experiment/3", "the pruned search's experiment")
    b.wait_for('document.querySelector("#trials-table") !== null', what="experiment 3's trials table")
    cols = b.evaluate('Array.from(document.querySelectorAll("#trials-table th.hparam")).map(function (t) { return t.dataset.key; })')
    if cols != ["hp:global_batch_size", "hp:x", "hp:opt.lr", "hp:opt.momentum"]:
        fail("experiment 3: hparam columns %r, want hp:global_batch_size, hp:x, hp:opt.lr, hp:opt.momentum" % (cols,))
    cells = b.evaluate('document.getElementById("trials-table").textContent')
    if "{" in cells:
        fail("experiment 3: a hparam group shown as JSON in the table: %r" % cells[:300])
    axes = b.evaluate('(function () { var p = document.querySelector(".parcoords"); return p ? p.dataset.axes : null; })()')
    if axes != "3":
        fail("experiment 3: %r parallel axes, want 3 (x, opt.lr, loss)" % axes)
    check_clean(b, "experiment 3")
    # Its trials report training once each (8 batches, scheduling_unit 100): each series is one point,
    # which a line chart drew as nothing (probe_J). Pixels of the series' colours must be on the canvas.
    drawn = b.evaluate('(function () { var box = document.querySelector("#curves [data-metric=\\"training/loss\\"]");'
                       ' var c = box && box.querySelector("canvas"); if (!c) return -1;'
                       ' var d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, n = 0;'
                       ' var want = T2.palette.map(function (h) { return [parseInt(h.substr(1, 2), 16),'
                       ' parseInt(h.substr(3, 2), 16), parseInt(h.substr(5, 2), 16)]; });'
                       ' for (var i = 0; i < d.length; i += 4) for (var k = 0; k < want.length; k++)'
                       ' if (d[i] === want[k][0] && d[i + 1] === want[k][1] && d[i + 2] === want[k][2] && d[i + 3] === 255) { n++; break; }'
                       ' return n; })()')
    if not drawn or drawn < 4:
        fail("experiment 3: the one-point training-loss series drew %s pixels of their colours" % drawn)
    print("experiment 3: hparam columns %s, %s parallel axes; one-point curves drew %d pixels" % (cols, axes, drawn))

    # ---- the running experiment: the page redraws by itself as metrics arrive ----
    route = "/experiment/%d" % RUNNING
    load(b, route, "the running experiment")
    before = b.evaluate('document.getElementById("curves").textContent + "|" + '
                        'document.querySelector("#curves [data-metric]") .dataset.points + "|" + '
                        'document.getElementById("trials-table").textContent')
    renders = int(b.evaluate(MAIN + ".dataset.renders"))
    # No completed trial yet: the importance section says why instead of a chart.
    why = b.evaluate('(function () { var n = document.getElementById("importance-none"); return n ? n.textContent : null; })()')
    if not why or "Needs 2 completed trials" not in why:
        fail("running experiment: the importance section says %r" % why)
    b.screenshot(os.path.join(SHOTS, "dashboard-running-before.png"))
    b.wait_for("+%s.dataset.renders >= %d" % (MAIN, renders + 2), timeout=20, what="two live redraws")
    after = b.evaluate('document.getElementById("curves").textContent + "|" + '
                       'document.querySelector("#curves [data-metric]").dataset.points + "|" + '
                       'document.getElementById("trials-table").textContent')
    if after == before:
        fail("running experiment: the page redrew but shows the same data")
    ids, count, points = curve_points(b)
    b.screenshot(os.path.join(SHOTS, "dashboard-running-after.png"))
    print("running experiment %d: %d -> %s redraws; curve points now %s" %
          (RUNNING, renders, b.evaluate(MAIN + ".dataset.renders"), points))
    check_clean(b, "running experiment")

    # ---- a running trial: its log tail follows the file ----
    tid = sql("SELECT id FROM trials WHERE experiment_id=? AND state='RUNNING' ORDER BY id LIMIT 1", RUNNING)[0][0]
    load(b, "/trial/%d" % tid, "the running trial")
    if fact(b, "state") != "RUNNING":
        fail("running trial: its page says its state is %r, want RUNNING" % fact(b, "state"))
    b.wait_for('+document.getElementById("log").dataset.bytes > 0', what="the running trial's log")
    size = int(b.evaluate('document.getElementById("log").dataset.bytes'))
    b.wait_for('+document.getElementById("log").dataset.bytes > %d' % size, timeout=15, what="the log tail to grow")
    grown = int(b.evaluate('document.getElementById("log").dataset.bytes'))
    check_clean(b, "running trial", ["<script>window.__xss='running'</script>"])
    b.screenshot(os.path.join(SHOTS, "dashboard-running-trial.png"))
    print("running trial %d: log tail %d -> %d bytes" % (tid, size, grown))

    # ---- a trial the store does not have: the page says so and stops asking for its log (it asked
    # for /api/trials/ID/log every second, 404 each time, for as long as the page stayed open). The
    # page is still redrawn when the store changes (the running experiment writes), in case the
    # trial appears: that asks for its metrics again, not for its log ----
    missing = sql("SELECT coalesce(max(id), 0) + 1000 FROM trials")[0][0]
    b.navigate(URL + "#/trial/%d" % missing)
    b.wait_for('%s.dataset.route === "/trial/%d" && %s.dataset.state === "error"' % (MAIN, missing, MAIN),
               what="the unknown trial's page")
    said = b.evaluate(MAIN + ".textContent")
    if "no such trial" not in said:
        fail("unknown trial %d: the page says %r" % (missing, said))
    b.events.clear()
    b.pump(3.5)
    asked = [e["params"]["request"]["url"] for e in b.events if e.get("method") == "Network.requestWillBeSent"
             and "/api/trials/%d/log" % missing in e["params"]["request"]["url"]]
    if asked:
        fail("unknown trial %d: %d requests for its log in the 3.5 s after the page said so: %s" % (missing, len(asked), asked))
    b.events.clear()
    print("unknown trial %d: %r, %d requests for its log in 3.5 s" % (missing, said, len(asked)))

    # ---- the running experiment's controller killed (kill -9): the API keeps the stored state and
    # says no controller runs it; the pages say ACTIVE (no controller) as `t2exp list` does ----
    pid = sql("SELECT controller_pid FROM experiments WHERE id=?", RUNNING)[0][0]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    break
        except OSError:
            break
        time.sleep(0.05)
    api = b.evaluate('fetch("/api/experiments/%d").then(function (r) { return r.json(); }).then(function (j) {'
                     ' return [j.experiment.state, j.experiment.controller_running]; })' % RUNNING)
    if api != ["ACTIVE", 0]:
        fail("killed controller: /api/experiments/%d says [state, controller_running] = %r, want ['ACTIVE', 0]" % (RUNNING, api))
    listed = b.evaluate('fetch("/api/experiments").then(function (r) { return r.json(); }).then(function (l) {'
                        ' return l.filter(function (e) { return e.id === %d; }).map(function (e) { return [e.state, e.controller_running]; })[0]; })'
                        % RUNNING)
    if listed != ["ACTIVE", 0]:
        fail("killed controller: /api/experiments lists %d as %r, want ['ACTIVE', 0]" % (RUNNING, listed))
    load(b, "/", "the list after the kill")
    if list_cell(b, RUNNING, 2) != "ACTIVE (no controller)":
        fail("killed controller: the list shows experiment %d as %r" % (RUNNING, list_cell(b, RUNNING, 2)))
    if list_cell(b, FINISHED, 2) != "COMPLETED":
        fail("the list shows the finished experiment as %r" % list_cell(b, FINISHED, 2))
    load(b, "/experiment/%d" % RUNNING, "the experiment after the kill")
    if fact(b, "state") != "ACTIVE (no controller)":
        fail("killed controller: the experiment page's state is %r" % fact(b, "state"))
    b.wait_for('document.querySelector("#trials-table") !== null', what="the trials table after the kill")
    states = b.evaluate('Array.from(document.querySelectorAll("#trials-table tbody .state")).map(function (s) { return s.textContent; })')
    if "RUNNING (no controller)" not in states or "RUNNING" in states:
        fail("killed controller: the trials table's states are %r, want RUNNING (no controller) for its running ones" % states)
    check_clean(b, "experiment after its controller was killed")
    b.screenshot(os.path.join(SHOTS, "dashboard-no-controller.png"))
    # Its RUNNING trial's own page says so too (it said RUNNING while the table did not), from the
    # experiment page's rows as from the API's row.
    dead = sql("SELECT id FROM trials WHERE experiment_id=? AND state='RUNNING' ORDER BY id LIMIT 1", RUNNING)[0][0]
    own = b.evaluate('fetch("/api/trials/%d").then(function (r) { return r.json(); }).then(function (t) {'
                     ' return [t.state, t.controller_running]; })' % dead)
    if own != ["RUNNING", 0]:
        fail("killed controller: /api/trials/%d says [state, controller_running] = %r, want ['RUNNING', 0]" % (dead, own))
    load(b, "/trial/%d" % dead, "a running trial after the kill")
    if fact(b, "state") != "RUNNING (no controller)":
        fail("killed controller: trial %d's page says its state is %r, want RUNNING (no controller)" % (dead, fact(b, "state")))
    check_clean(b, "trial after its controller was killed")
    print("killed controller %d: API %r, its running trial's page says %r" % (pid, api, fact(b, "state")))
    # An ERRORED experiment's QUEUED trials wait for a resume: the table and the trial's page say
    # so, as `t2exp trials` does. (The stored states an error leaves are written here by hand: the
    # controller is dead, nothing else writes.)
    rw = sqlite3.connect(DB, timeout=5)
    try:
        with rw:
            rw.execute("UPDATE experiments SET state = 'ERRORED' WHERE id = ?", (RUNNING,))
            rw.execute("UPDATE trials SET state = 'QUEUED' WHERE id = ?", (dead,))
    finally:
        rw.close()
    load(b, "/experiment/%d" % RUNNING, "the ERRORED experiment")
    b.wait_for('document.querySelector("#trials-table") !== null', what="the ERRORED experiment's trials table")
    states = b.evaluate('Array.from(document.querySelectorAll("#trials-table tbody .state")).map(function (s) { return s.textContent; })')
    if "QUEUED (experiment ERRORED)" not in states or "QUEUED" in states:
        fail("ERRORED experiment: the trials table's states are %r, want QUEUED (experiment ERRORED) for its queued one" % states)
    load(b, "/trial/%d" % dead, "a QUEUED trial of the ERRORED experiment")
    if fact(b, "state") != "QUEUED (experiment ERRORED)":
        fail("ERRORED experiment: trial %d's page says its state is %r, want QUEUED (experiment ERRORED)" % (dead, fact(b, "state")))
    check_clean(b, "QUEUED trial of an ERRORED experiment")
finally:
    b.close()

if failures:
    sys.exit(1)
print("dashboard_browser.py: ok")
