// page_trial.js — #/trial/ID: the trial's metrics as curves, its checkpoints and its log, whose
// tail follows the file while the trial runs.
"use strict";

T2.pages = T2.pages || {};
T2.LOG_KEEP = 262144;     // bytes kept on the page; older text is dropped from the top
T2.logState = {};

function logFor(tid) {
  if (!T2.logState[tid]) T2.logState[tid] = {text: "", next: null, busy: false, truncated: false, follow: true};
  return T2.logState[tid];
}

// Fetches what the log gained since last time and appends it to the <pre> (as text). Offsets
// are the API's byte offsets, from 0: answers are capped, so a long log comes in several; up to
// LOG_CATCHUP a poll, keeping the last LOG_KEEP characters.
T2.LOG_CATCHUP = 64;

function logChunk(tid, ls, left) {
  var url = "/api/trials/" + encodeURIComponent(tid) + "/log?offset=" + (ls.next || 0);
  return T2.getText(url).then(function (r) {
    if (isNaN(r.next)) throw new T2.HttpError(0, "the log answer has no X-Next-Offset header");
    var more = r.text.length > 0 && r.next > (ls.next || 0);
    ls.next = r.next;
    if (r.text) {
      ls.text += r.text;
      if (ls.text.length > T2.LOG_KEEP) { ls.text = ls.text.slice(ls.text.length - T2.LOG_KEEP); ls.truncated = true; }
      ls.changed = true;
    }
    return more && left > 1 ? logChunk(tid, ls, left - 1) : null;
  });
}

// Not while the trial is missing (ls.missing: its page or its log answered 404): the page asked
// for the log of an unknown trial every second for as long as it stayed open, 404 each time. A
// redraw that finds the trial (the store changed) clears it.
T2.pollLog = function (tid) {
  var ls = logFor(tid);
  if (ls.busy || ls.missing) return Promise.resolve();
  ls.busy = true;
  ls.changed = false;
  return logChunk(tid, ls, T2.LOG_CATCHUP).then(function () {
    var pre = document.getElementById("log");
    if (pre && pre.getAttribute("data-trial") === String(tid)) {
      if (ls.changed) {
        pre.textContent = ls.text;
        pre.setAttribute("data-bytes", ls.text.length);
      }
      // Stays at the newest line unless the reader scrolled up to read (ls.follow, set on scroll).
      if (ls.follow) pre.scrollTop = pre.scrollHeight;
    }
  }).catch(function (err) {
    var pre = document.getElementById("log");
    if (err.status === 404) {  // the log answers 404 only for an unknown trial (api.c)
      ls.missing = true;
      if (pre) pre.setAttribute("data-missing", "1");
    } else if (!(err instanceof T2.HttpError)) throw err;
  }).then(function () { ls.busy = false; }, function (e) { ls.busy = false; throw e; });
};

function checkpointsTable(rows) {
  var sec = T2.section("Checkpoints (" + rows.length + ")", "checkpoints");
  if (!rows.length) { sec.appendChild(T2.el("p", {class: "muted"}, "No active checkpoint.")); return sec; }
  var body = T2.el("tbody");
  rows.forEach(function (c) {
    body.appendChild(T2.el("tr", null, T2.el("td", {class: "mono"}, c.uuid), T2.el("td", {class: "num"}, c.batches),
      T2.el("td", {class: "num"}, T2.num(c.epoch)), T2.el("td", {class: "num"}, T2.num(c.metric)),
      T2.el("td", {class: "num"}, T2.num(c.size_bytes)), T2.el("td", null, T2.stateBadge(c.state)),
      T2.el("td", null, c.created), T2.el("td", {class: "mono"}, c.path)));
  });
  sec.appendChild(T2.el("div", {class: "table-wrap"}, T2.el("table", {class: "trials", id: "checkpoints-table", "data-rows": rows.length},
    T2.el("thead", null, T2.el("tr", null, ["uuid", "batches", "epoch", "metric", "bytes", "state", "created", "path"]
      .map(function (h) { return T2.el("th", null, h); }))), body)));
  return sec;
}

// One chart per metric; the t2exp.* timing metrics get their own section with the split.
function metricCharts(rows) {
  var groups = T2.groupMetrics(rows);
  var keys = Object.keys(groups).sort();
  var user = keys.filter(function (k) { return k.indexOf("/t2exp.") < 0; });
  var timing = keys.filter(function (k) { return k.indexOf("/t2exp.") >= 0; });
  var sec = T2.section("Metrics", "metrics");
  var grid = T2.el("div", {class: "grid"});
  user.forEach(function (k, i) {
    var box = T2.el("div", {class: "chart", "data-metric": k});
    grid.appendChild(box);
    T2.lineChart(box, {title: k.replace("/", " "), xLabel: "batches", yLabel: k.split("/")[1],
                       series: [{label: k.split("/")[1], xs: groups[k].xs, ys: groups[k].ys, color: T2.color(i)}]});
  });
  if (!user.length) sec.appendChild(T2.el("p", {class: "muted"}, "No metric reported yet."));
  sec.appendChild(grid);
  var tsec = T2.section("t2exp.* timing", "timing");
  var split = ["t2exp.data_s", "t2exp.compute_s", "t2exp.comm_s"].filter(function (n) { return groups["training/" + n]; });
  if (split.length) {
    var box = T2.el("div", {class: "chart", id: "chart-timing-split", "data-metric": "timing"});
    T2.lineChart(box, {title: "seconds per report: data, compute, comm", xLabel: "batches", yLabel: "seconds",
      series: split.map(function (n, i) { return {label: n, xs: groups["training/" + n].xs, ys: groups["training/" + n].ys, color: ["#17becf", "#1f77b4", "#ff7f0e"][i]}; })});
    tsec.appendChild(box);
  }
  var rest = T2.el("div", {class: "grid"});
  timing.filter(function (k) { return split.indexOf(k.split("/")[1]) < 0; }).forEach(function (k, i) {
    var b = T2.el("div", {class: "chart", "data-metric": k});
    rest.appendChild(b);
    T2.lineChart(b, {title: k.split("/")[1], xLabel: "batches", yLabel: k.split("/")[1],
                     series: [{label: k.split("/")[1], xs: groups[k].xs, ys: groups[k].ys, color: T2.color(i + 3)}]});
  });
  tsec.appendChild(rest);
  if (!timing.length) tsec.appendChild(T2.el("p", {class: "muted"}, "No t2exp.* timing reported yet."));
  return [sec, tsec];
}

// Titled as the CLI names the trial (EXP.N) when its row is known; the store id (the route's, and
// `t2exp logs ID`'s) is the "id" fact.
function header(tid, info) {
  var h = T2.el("section", {class: "card", id: "trial"}, T2.el("h1", null, info ? "Trial " + info.experiment_id + "." + info.trial : "Trial " + tid));
  if (!info) return h;
  // A trial searcher.pruner stopped is COMPLETED, and its error column says where and why.
  var pruned = info.state === "COMPLETED" && /^pruned at batch /.test(info.error || "");
  var dl = T2.facts([
    ["experiment", T2.el("a", {href: "#/experiment/" + info.experiment_id}, String(info.experiment_id))],
    ["id", info.id],
    ["state", T2.trialBadge(info.state, info.controller_running, info.experiment_state)],
    ["hparams", T2.hparamText(info.hparams)],
    ["batches", info.batches],
    ["best validation", T2.num(info.best_validation)],
    ["restarts", info.restarts],
    [pruned ? "pruned" : "error", info.error],
  ]);
  h.appendChild(dl);
  return h;
}

// The trial's row (state, hparams, experiment): from its experiment's /trials when an
// experiment page showed it before (T2.trialIndex), else from /api/trials/TID. Optional: the page
// still shows metrics, checkpoints and log without it.
function trialRow(tid) {
  var known = T2.trialIndex[tid];
  if (known && !known.onlyTop) {
    return T2.getJSON("/api/experiments/" + known.experiment_id + "/trials").then(function (rows) {
      var row = rows.filter(function (t) { return String(t.id) === String(tid); })[0];
      return row ? Object.assign({experiment_id: known.experiment_id}, row) : known;
    }, function () { return known; }).then(function (row) { return withController(tid, row); });
  }
  if (known) return Promise.resolve(known);
  return T2.getJSON("/api/trials/" + encodeURIComponent(tid)).catch(function () { return null; });
}

// A RUNNING or QUEUED row from its experiment's /trials does not say whether a controller runs it
// or whether its experiment ERRORED: its /api/trials/TID does (controller_running,
// experiment_state), so the header says RUNNING (no controller) and QUEUED (experiment ERRORED)
// where the experiment's table does (it said RUNNING for a killed controller's trial).
function withController(tid, row) {
  if (!row || (row.state !== "RUNNING" && row.state !== "QUEUED") || row.controller_running !== undefined) return row;
  return T2.getJSON("/api/trials/" + encodeURIComponent(tid)).then(function (t) {
    return Object.assign({}, row, {controller_running: t.controller_running, experiment_state: t.experiment_state});
  }, function () { return row; });
}

T2.pages.trial = function (tid) {
  var enc = encodeURIComponent(tid);
  var info = trialRow(tid);
  var ls = logFor(tid);
  return Promise.all([info, T2.getJSON("/api/trials/" + enc + "/metrics"), T2.getJSON("/api/trials/" + enc + "/checkpoints")])
    .then(function (r) {
      ls.missing = false;
      // The row itself (/api/trials/TID's object, whose `trial` is its number in the experiment).
      var t = r[0] && typeof r[0] === "object" ? r[0] : null;
      var crumbs = [["experiments", "#/"]];
      if (t && t.experiment_id !== undefined) crumbs.push(["experiment " + t.experiment_id, "#/experiment/" + t.experiment_id]);
      crumbs.push([t && t.experiment_id !== undefined ? T2.trialName(t.experiment_id, t) : "trial " + tid, null]);
      T2.setCrumbs(crumbs);
      var frag = document.createDocumentFragment();
      frag.appendChild(header(tid, t && t.experiment_id !== undefined ? t : null));
      metricCharts(r[1]).forEach(function (s) { frag.appendChild(s); });
      frag.appendChild(checkpointsTable(r[2]));
      var logSec = T2.section("Log (live tail)", "log-section");
      var pre = T2.el("pre", {id: "log", class: "log", "data-trial": tid, "data-bytes": ls.text.length,
        onscroll: function () { ls.follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4; }}, ls.text);
      if (ls.truncated) logSec.appendChild(T2.el("p", {class: "muted"}, "Showing the end of the log."));
      logSec.appendChild(pre);
      frag.appendChild(logSec);
      return frag;
    }, function (err) {
      // Its metrics answer 404 only when the store has no such trial (api.c resolves TID first).
      if (err.status !== 404) throw err;
      ls.missing = true;
      throw new T2.HttpError(404, "no such trial " + tid + " in the store (#/trial/ID takes a trial id or EXP.N)");
    });
};
