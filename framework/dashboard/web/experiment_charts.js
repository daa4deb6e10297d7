// experiment_charts.js — the experiment page's charts: best-so-far, learning curves of the picked
// trials, hparam-vs-metric scatter, parallel coordinates, ASHA rungs and the t2exp.* timing split.
"use strict";

T2.SCATTER_MAX = 20000;  // points per scatter; a 100,000-trial search shows its best 20,000

// Trial end time in Unix seconds: started + duration (a running trial's duration runs to now).
function endTime(t) {
  var s = Date.parse(t.started);
  if (isNaN(s) || typeof t.duration !== "number") return null;
  return s / 1000 + t.duration;
}

// The best searcher metric over time. From the validation rows themselves (each has its time)
// when the experiment is small enough to fetch them all; on a big one, from the trials: each
// counts its best validation at its end (a running one: now).
T2.BEST_FROM_METRICS_MAX = 2000;  // trials

function bestPoints(e, trials) {
  if (e.onlyTop) {
    // Only the best trials are here, with no times: the record by trial number. Records set by
    // trials outside them were worse than all of them, so the curve starts at the first one here.
    return Promise.resolve(trials.filter(function (t) { return t.best_validation !== null; })
      .map(function (t) { return [t.trial, t.best_validation]; }));
  }
  if (e.trials > T2.BEST_FROM_METRICS_MAX) {
    return Promise.resolve(trials.filter(function (t) { return t.best_validation !== null && endTime(t) !== null; })
      .map(function (t) { return [endTime(t), t.best_validation]; }));
  }
  return T2.getJSON("/api/experiments/" + e.id + "/metrics?kind=validation").then(function (rows) {
    return rows.filter(function (m) { return m.kind === "validation" && m.name === e.metric; })
      .map(function (m) { return [Date.parse(m.time) / 1000, m.value]; });
  });
}

function bestSoFar(e, pts, trials) {
  pts.sort(function (a, b) { return a[0] - b[0]; });
  var xs = [], ys = [], best = null;
  pts.forEach(function (p) {
    if (best === null || (e.smaller_is_better ? p[1] < best : p[1] > best)) best = p[1];
    xs.push(p[0]); ys.push(best);
  });
  var box = T2.el("div", {id: "chart-best", class: "chart"});
  T2.lineChart(box, {title: "best " + e.metric + " so far" + (e.onlyTop ? " (best " + trials + " trials)" : ""),
                     xLabel: e.onlyTop ? "trial number" : "time", yLabel: e.metric, xTime: !e.onlyTop, step: true,
                     perRow: 1, height: 220, series: [{label: "best " + e.metric, xs: xs, ys: ys}], empty: "No validation yet."});
  return box;
}

// metrics rows ({kind, batches, name, value}) of one trial, grouped "kind/name" -> {xs, ys}.
function groupMetrics(rows) {
  var g = {};
  rows.forEach(function (m) {
    var k = m.kind + "/" + m.name;
    if (!g[k]) g[k] = {xs: [], ys: []};
    g[k].xs.push(m.batches);
    g[k].ys.push(m.value);
  });
  return g;
}
T2.groupMetrics = groupMetrics;

// One chart per metric (training loss first, then each validation metric), one series per trial.
function learningCurves(e, picked, perTrial) {
  var names = {};
  perTrial.forEach(function (g) { Object.keys(g).forEach(function (k) { names[k] = 1; }); });
  var keys = Object.keys(names).filter(function (k) {
    return k === "training/loss" || k.indexOf("validation/") === 0;
  });
  keys.sort(function (a, b) { return (a === "training/loss" ? -1 : b === "training/loss" ? 1 : a.localeCompare(b)); });
  var sec = T2.section("Learning curves of " + picked.length + " picked trial" + (picked.length === 1 ? "" : "s"), "curves");
  sec.setAttribute("data-picked", picked.map(function (t) { return t.id; }).join(","));
  if (!keys.length) sec.appendChild(T2.el("p", {class: "muted"}, "The picked trials have no loss or validation metrics yet."));
  var grid = T2.el("div", {class: "grid"});
  keys.forEach(function (k) {
    var series = [];
    picked.forEach(function (t, i) {
      var s = perTrial[i][k];
      if (s) series.push({label: T2.trialName(e.id, t), xs: s.xs, ys: s.ys, color: T2.color(i)});
    });
    var box = T2.el("div", {class: "chart", "data-metric": k});
    grid.appendChild(box);
    T2.lineChart(box, {title: k.replace("/", " "), xLabel: "batches", yLabel: k.split("/")[1], series: series});
  });
  sec.appendChild(grid);
  return sec;
}

// Mean seconds per reported window of data loading, compute and communication, per trial.
function timingSplit(e, picked, perTrial) {
  var sec = T2.section("Where the time went (t2exp.* timing, mean per report)", "timing");
  var parts = [["t2exp.data_s", "data", "#17becf"], ["t2exp.compute_s", "compute", "#1f77b4"], ["t2exp.comm_s", "comm", "#ff7f0e"]];
  var rows = [];
  picked.forEach(function (t, i) {
    var g = perTrial[i];
    if (!g["training/t2exp.compute_s"]) return;
    rows.push({label: T2.trialName(e.id, t), parts: parts.map(function (p) {
      var s = g["training/" + p[0]];
      var mean = s && s.ys.length ? s.ys.reduce(function (a, b) { return a + b; }, 0) / s.ys.length : 0;
      return {name: p[1], value: mean, color: p[2]};
    })});
  });
  if (!rows.length) { sec.appendChild(T2.el("p", {class: "muted"}, "No t2exp.* timing reported by the picked trials.")); return sec; }
  var box = T2.el("div", {id: "chart-timing"});
  T2.barChart(box, rows, "s");
  sec.appendChild(box);
  return sec;
}

// For each hparam, the searcher metric against it; categorical values are placed by index.
function scatters(e, ranked, hnames) {
  var sec = T2.section("Hyperparameters against " + e.metric, "scatter");
  var grid = T2.el("div", {class: "grid grid3"});
  var done = ranked.filter(function (t) { return t.best_validation !== null; }).slice(0, T2.SCATTER_MAX);
  hnames.forEach(function (h) {
    var vals = done.map(function (t) { return t.hparams ? t.hparams[h] : undefined; });
    var distinct = new Set(vals.map(function (v) { return typeof v === "number" ? v : "c:" + JSON.stringify(v); }));
    if (distinct.size < 2 && done.length > 1) return; // a constant says nothing
    var numeric = vals.every(function (v) { return typeof v === "number"; });
    var cats = null, xs = vals;
    if (!numeric) {
      cats = [];
      var index = {};
      xs = vals.map(function (v) {
        var k = typeof v === "string" ? v : JSON.stringify(v);
        if (index[k] === undefined) { index[k] = cats.length; cats.push(k); }
        return index[k];
      });
    }
    var box = T2.el("div", {class: "chart", "data-hparam": h});
    grid.appendChild(box);
    T2.scatterChart(box, {title: h, xLabel: h, yLabel: e.metric, xs: xs, ys: done.map(function (t) { return t.best_validation; }),
                          categories: cats});
  });
  if (!grid.firstChild) sec.appendChild(T2.el("p", {class: "muted"}, "No varying hyperparameter."));
  sec.appendChild(grid);
  var pc = T2.el("div", {id: "chart-parcoords"});
  sec.appendChild(T2.el("h3", null, "Parallel coordinates"));
  sec.appendChild(pc);
  T2.parcoords(pc, done, hnames, e.metric, !!e.smaller_is_better);
  return sec;
}

// ASHA: trials stop at rung lengths; a trial that trained past a rung was promoted from it.
function ashaRungs(e, trials) {
  var sec = T2.section("ASHA rungs and promotions", "rungs");
  var lengths = {};
  trials.forEach(function (t) { if (t.target_batches > 0) lengths[t.target_batches] = 1; if (t.batches > 0 && t.state !== "RUNNING") lengths[t.batches] = 1; });
  var rungs = Object.keys(lengths).map(Number).sort(function (a, b) { return a - b; });
  var body = T2.el("tbody");
  var bars = [];
  rungs.forEach(function (len, i) {
    var reached = trials.filter(function (t) { return t.batches >= len; });
    var next = rungs[i + 1];
    var promoted = next === undefined ? 0 : trials.filter(function (t) {
      return t.batches >= next || (t.state === "RUNNING" && t.target_batches >= next);
    }).length;
    var best = null;
    reached.forEach(function (t) {
      if (t.best_validation !== null && (best === null || (e.smaller_is_better ? t.best_validation < best : t.best_validation > best))) best = t.best_validation;
    });
    body.appendChild(T2.el("tr", {"data-rung": len}, T2.el("td", {class: "num"}, i), T2.el("td", {class: "num"}, len),
                           T2.el("td", {class: "num"}, reached.length), T2.el("td", {class: "num"}, next === undefined ? "–" : promoted),
                           T2.el("td", {class: "num"}, T2.num(best))));
    bars.push({label: "rung " + i + " (" + len + " batches)", parts: [{name: "trials that reached the rung", value: reached.length, color: "#1f77b4"}]});
  });
  sec.appendChild(T2.el("table", {class: "trials", id: "rungs-table", "data-rungs": rungs.length},
    T2.el("thead", null, T2.el("tr", null, ["rung", "batches", "trials reached", "promoted", "best " + e.metric].map(function (h) { return T2.el("th", null, h); }))), body));
  var box = T2.el("div", {id: "chart-rungs"});
  T2.barChart(box, bars, "trials");
  sec.appendChild(box);
  return sec;
}

// Which hyperparameters the results depend on (/importance: `t2exp importance`, fANOVA). A fit
// takes up to 2 s on a big experiment, so a live page asks again only when the completed trials
// grew by a tenth since its last answer (or the state changed); until then it shows that answer.
// Where the answer is known to be none (fewer than 2 completed trials, no hyperparameter that
// varies) the page says so without asking (the server's 409 would be a console error).
T2.importanceCache = {};

function importance(e, ranked, hnames) {
  var done = ranked.filter(function (t) { return t.state === "COMPLETED" && t.best_validation !== null; }).length;
  var varied = hnames.some(function (h) {
    return new Set(ranked.map(function (t) { return JSON.stringify(t.hparams ? t.hparams[h] : null); })).size > 1;
  });
  if (done < 2 || !varied) {
    var none = T2.section("Hyperparameter importance (fANOVA)", "importance");
    none.appendChild(T2.el("p", {class: "muted", id: "importance-none"}, !varied ? "No hyperparameter varies between the trials." :
      "Needs 2 completed trials with a validation of " + e.metric + "; " + done + " so far."));
    return Promise.resolve(none);
  }
  var c = T2.importanceCache[e.id];
  var fresh = c && c.state === e.state && done <= c.done * 1.1;
  var answer = fresh ? Promise.resolve(c.answer) : T2.getJSON("/api/experiments/" + e.id + "/importance")
    .then(function (r) { return {ok: r}; }, function (err) { return {error: err.message || String(err)}; })
    .then(function (a) { T2.importanceCache[e.id] = {done: done, state: e.state, answer: a}; return a; });
  return answer.then(function (a) {
    var sec = T2.section("Hyperparameter importance (fANOVA)", "importance");
    if (a.error) {
      sec.appendChild(T2.el("p", {class: "muted", id: "importance-none"}, a.error));
      return sec;
    }
    var box = T2.el("div", {id: "chart-importance", "data-first": a.ok.importance.length ? a.ok.importance[0].hyperparameter : ""});
    T2.barChart(box, a.ok.importance.map(function (h) {
      return {label: h.hyperparameter, parts: [{name: "share of the variance of " + a.ok.metric, value: h.importance, color: "#5d3a9b"}]};
    }), "");
    sec.appendChild(box);
    sec.appendChild(T2.el("p", {class: "muted"}, "From " + a.ok.trials + " completed trials' best " + a.ok.metric +
      " (t2exp importance " + e.id + ")."));
    return sec;
  });
}

// Resolves to the list of sections; fetches the picked trials' metrics (T2.MAX_CURVES at most).
T2.experimentCharts = function (e, ranked, picked, hnames) {
  return Promise.all([bestPoints(e, ranked), importance(e, ranked, hnames)].concat(picked.map(function (t) {
    return T2.getJSON("/api/trials/" + t.id + "/metrics");
  }))).then(function (rows) {
    var best = rows.shift(), imp = rows.shift();
    var perTrial = rows.map(groupMetrics);
    var out = [];
    var top = T2.section("Search", "search");
    top.appendChild(bestSoFar(e, best, ranked.length));
    out.push(top);
    out.push(learningCurves(e, picked, perTrial));
    out.push(scatters(e, ranked, hnames));
    out.push(imp);
    if (/asha/i.test(e.searcher || "")) out.push(ashaRungs(e, ranked));
    out.push(timingSplit(e, picked, perTrial));
    return out;
  });
};
