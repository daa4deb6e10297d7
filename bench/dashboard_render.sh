#!/usr/bin/env bash
# bench/dashboard_render.sh URL EXP [RUNS] — how long the dashboard's experiment page takes to
# render in headless Chromium (Debian's /usr/bin/chromium, over the DevTools pipe with
# tests/integration/cdp.py): from navigating to URL#/experiment/EXP until the page has drawn
# everything (data-state ready: API answers fetched, table, charts and parallel coordinates drawn).
# A fresh tab each run, so nothing is cached; the median of RUNS (default 5) is reported, with
# api_s (first API request to last answer) and draw_s (last answer to the page drawn) beside it.
# Called by bench/run_dashboard.sh on the 100,000-trial store; the target is < 2 s, so
# ratio = 2 s / median (higher is better; >= 1 meets it).
set -euo pipefail
url=${1:?usage: bench/dashboard_render.sh URL EXP [RUNS]}
exp=${2:?usage: bench/dashboard_render.sh URL EXP [RUNS]}
runs=${3:-5}
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { echo "dashboard_render: skipped (no chromium)" >&2; exit 77; }
here=$(cd "$(dirname "$0")/.." && pwd)
PYTHONPATH="$here/tests/integration" exec python3 - "$url" "$exp" "$runs" <<'PY'
import statistics, sys, time
import cdp

# The address as t2exp dashboard printed it (with its ?token=, which the first answer turns into a
# cookie), or a bare one.
url, exp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
if "?" not in url:
    url = url.rstrip("/") + "/"
route = "/experiment/%s" % exp
ready = ('document.getElementById("main") && document.getElementById("main").dataset.route === %r'
         ' && document.getElementById("main").dataset.state' % route)
times, api, draw, rows, total = [], [], [], 0, 0
b = cdp.Browser()
try:
    for _ in range(runs):
        b.open_tab()
        t0 = time.monotonic()
        b.navigate(url + "#" + route)
        while True:
            state = None
            try:
                state = b.evaluate(ready)
            except cdp.CdpError:
                pass
            if state in ("ready", "error"):
                break
            if time.monotonic() - t0 > 60:
                sys.exit("dashboard_render: the page did not render in 60 s")
            b.pump(0.01)
        times.append(time.monotonic() - t0)
        # Where the time went: waiting on the API (until its last answer) vs drawing after it.
        draw.append(b.evaluate('(function () { var m = performance.getEntriesByName("t2exp-ready"); var e ='
                               ' performance.getEntriesByType("resource").filter(function (r) { return r.name.indexOf("/api/") >= 0'
                               ' && r.name.indexOf("/api/version") < 0; }); return m.length && e.length ? m[m.length - 1].startTime -'
                               ' Math.max.apply(null, e.map(function (r) { return r.responseEnd; })) : 0; })()') / 1000)
        api.append(b.evaluate('(function () { var e = performance.getEntriesByType("resource").filter(function (r) {'
                              ' return r.name.indexOf("/api/") >= 0 && r.name.indexOf("/api/version") < 0; });'
                              ' return e.length ? Math.max.apply(null, e.map(function (r) { return r.responseEnd; })) -'
                              ' Math.min.apply(null, e.map(function (r) { return r.startTime; })) : 0; })()') / 1000)
        if state == "error":
            sys.exit("dashboard_render: the page shows an error: %s" % b.evaluate('document.getElementById("main").textContent'))
        rows = b.evaluate('document.querySelectorAll("#trials-table tbody tr").length')
        total = b.evaluate('+document.getElementById("trials-table").dataset.totalRows')
        errors = b.console_errors()
        if errors:
            sys.exit("dashboard_render: console errors: %s" % errors)
        b.send("Target.closeTarget", {"targetId": b.send("Target.getTargetInfo")["targetInfo"]["targetId"]}, session=False)
        b.session = None
finally:
    b.close()
med = statistics.median(times)
print("dashboard_render: ratio=%.2f render_s=%.3f target_s=2 runs=%d min_s=%.3f max_s=%.3f api_s=%.3f draw_s=%.3f trials=%d rows_drawn=%d"
      % (2.0 / med, med, runs, min(times), max(times), statistics.median(api), statistics.median(draw), total, rows))
PY
