// page_experiment.js — #/experiment/ID: the experiment, its config, and the sortable trials table
// whose checkboxes pick the trials the learning-curve charts show (experiment_charts.js).
"use strict";

T2.pages = T2.pages || {};

// Per experiment, what the user chose survives the live refreshes: sort column and direction,
// picked trials (null: the top N by the searcher metric), N, and the table page.
T2.expState = {};
T2.TABLE_PAGE = 200;   // rows rendered at once; a 100,000-trial table pages through the rest
T2.MAX_CURVES = 10;    // learning curves drawn at once

function stateFor(id) {
  if (!T2.expState[id]) T2.expState[id] = {sortKey: "rank", sortDir: 1, picked: null, topN: 5, page: 0};
  return T2.expState[id];
}

// Trials ordered by the searcher metric, best first; trials with no validation last, by id.
T2.rankTrials = function (trials, smaller) {
  var ranked = trials.slice();
  ranked.sort(function (a, b) {
    var av = a.best_validation, bv = b.best_validation;
    if (av === null && bv === null) return a.id - b.id;
    if (av === null) return 1;
    if (bv === null) return -1;
    if (av !== bv) return smaller ? av - bv : bv - av;
    return a.id - b.id;
  });
  ranked.forEach(function (t, i) { t.rank = i + 1; });
  return ranked;
};

T2.pickedTrials = function (st, ranked) {
  if (st.picked) return ranked.filter(function (t) { return st.picked.has(t.id); }).slice(0, T2.MAX_CURVES);
  return ranked.filter(function (t) { return t.best_validation !== null; }).slice(0, st.topN);
};

T2.hparamNames = function (trials) {
  var seen = {}, names = [];
  trials.forEach(function (t) {
    Object.keys(t.hparams || {}).forEach(function (k) { if (!seen[k]) { seen[k] = 1; names.push(k); } });
  });
  return names;
};

// The best trial as the CLI names it (EXP.N), from its row among the ranked trials (describe's
// best_trial is its store id, which the link takes); its id when the row is not among them.
function bestTrial(e, ranked) {
  var row = ranked.filter(function (t) { return t.id === e.best_trial; })[0];
  return T2.el("a", {href: "#/trial/" + e.best_trial}, row ? T2.trialName(e.id, row) : "trial id " + e.best_trial);
}

function summary(e, ranked) {
  return T2.facts([
    ["state", T2.experimentBadge(e)],
    ["searcher", e.searcher],
    ["metric", e.metric + " (" + (e.smaller_is_better ? "smaller" : "larger") + " is better)"],
    ["progress", T2.percent(e.progress)],
    ["trials", e.trials],
    ["best", e.best_metric === null ? null : T2.el("span", null, T2.num(e.best_metric) + " (", bestTrial(e, ranked), ")")],
    ["started", e.started ? e.started + " (" + T2.age(e.started) + ")" : null],
    ["duration", T2.duration(e.duration)],
    ["description", e.description],
    ["labels", (e.labels || []).map(function (l) { return T2.el("span", {class: "label"}, typeof l === "string" ? l : JSON.stringify(l)); })],
    ["seed", e.seed],
    ["error", e.error],
  ]);
}

var COLUMNS = [
  {key: "rank", title: "rank"}, {key: "trial", title: "trial"}, {key: "id", title: "id"},
  {key: "state", title: "state"}, {key: "best_validation", title: "best"},
  {key: "latest_validation", title: "latest"}, {key: "batches", title: "batches"},
  {key: "restarts", title: "restarts"}, {key: "duration", title: "duration"},
];

function cellValue(t, key) {
  if (key.indexOf("hp:") === 0) return t.hparams ? t.hparams[key.slice(3)] : undefined;
  return t[key];
}

function compare(a, b) {
  var na = a === null || a === undefined, nb = b === null || b === undefined;
  if (na || nb) return na === nb ? 0 : (na ? 1 : -1);
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b));
}

function trialsTable(id, st, ranked, hnames, rerender, running, expState) {
  var cols = COLUMNS.slice(0, 4).map(function (c) { return c; })
    .concat(hnames.map(function (h) { return {key: "hp:" + h, title: h, hparam: true}; }))
    .concat(COLUMNS.slice(4));
  var rows = ranked.slice();
  rows.sort(function (a, b) {
    var va = cellValue(a, st.sortKey), vb = cellValue(b, st.sortKey);
    var c = compare(va, vb);
    // Empty cells (no validation yet, a missing hparam) stay last whichever the direction.
    return c ? (va === null || va === undefined || vb === null || vb === undefined ? c : c * st.sortDir) : a.rank - b.rank;
  });
  var pages = Math.max(1, Math.ceil(rows.length / T2.TABLE_PAGE));
  if (st.page >= pages) st.page = pages - 1;
  var shown = rows.slice(st.page * T2.TABLE_PAGE, (st.page + 1) * T2.TABLE_PAGE);
  var picked = new Set(T2.pickedTrials(st, ranked).map(function (t) { return t.id; }));

  var head = T2.el("tr", null, T2.el("th", {title: "show its learning curves"}, "curves"));
  cols.forEach(function (c) {
    var arrow = st.sortKey === c.key ? (st.sortDir > 0 ? " ▲" : " ▼") : "";
    head.appendChild(T2.el("th", {class: "sortable" + (c.hparam ? " hparam" : ""), "data-key": c.key,
      onclick: function () {
        if (st.sortKey === c.key) st.sortDir = -st.sortDir; else { st.sortKey = c.key; st.sortDir = 1; }
        rerender();
      }}, c.title + arrow));
  });
  var body = T2.el("tbody");
  shown.forEach(function (t) {
    var box = T2.el("input", {type: "checkbox", checked: picked.has(t.id), "aria-label": "curves of " + T2.trialName(id, t),
      onchange: function (ev) {
        if (!st.picked) st.picked = new Set(picked);
        if (ev.target.checked) st.picked.add(t.id); else st.picked.delete(t.id);
        rerender();
      }});
    var tr = T2.el("tr", {"data-trial-id": t.id, class: picked.has(t.id) ? "picked" : null}, T2.el("td", null, box));
    cols.forEach(function (c) {
      var v = cellValue(t, c.key), cell;
      if (c.key === "id") cell = T2.el("a", {href: "#/trial/" + t.id}, String(t.id));
      else if (c.key === "state") cell = T2.trialBadge(v, running, expState);
      else if (c.key === "duration") cell = T2.duration(v);
      else if (v !== null && typeof v === "object") cell = JSON.stringify(v);
      else cell = T2.num(v);
      tr.appendChild(T2.el("td", {class: typeof v === "number" ? "num" : null}, cell));
    });
    body.appendChild(tr);
  });
  var table = T2.el("table", {id: "trials-table", class: "trials", "data-total-rows": rows.length, "data-rows": shown.length},
                    T2.el("thead", null, head), body);

  var controls = T2.el("div", {class: "controls"});
  var topN = T2.el("input", {type: "number", min: 1, max: T2.MAX_CURVES, value: st.topN, id: "top-n",
    onchange: function (ev) {
      st.topN = Math.max(1, Math.min(T2.MAX_CURVES, parseInt(ev.target.value, 10) || 5));
      st.picked = null;
      rerender();
    }});
  controls.appendChild(T2.el("label", null, "curves of the top ", topN, " trials "));
  controls.appendChild(T2.el("button", {type: "button", onclick: function () { st.picked = null; rerender(); }}, "reset picks"));
  if (pages > 1) {
    controls.appendChild(T2.el("span", {class: "pager"},
      T2.el("button", {type: "button", disabled: st.page === 0, onclick: function () { st.page--; rerender(); }}, "‹ prev"),
      " rows " + (st.page * T2.TABLE_PAGE + 1) + "–" + (st.page * T2.TABLE_PAGE + shown.length) + " of " + rows.length + " ",
      T2.el("button", {type: "button", disabled: st.page >= pages - 1, onclick: function () { st.page++; rerender(); }}, "next ›")));
  }
  var sec = T2.section("Trials (" + rows.length + ")", "trials");
  if (st.onlyTop) sec.appendChild(T2.el("p", {class: "muted", id: "only-top"}, "Showing the best " + rows.length + " of " +
    st.onlyTop + " trials by the searcher metric (all of them: /api/experiments/" + id + "/trials or t2exp trials " + id + ")."));
  sec.appendChild(controls);
  sec.appendChild(T2.el("div", {class: "table-wrap"}, table));
  return sec;
}

// Loads everything the page shows, then swaps it in at once so a live refresh does not flicker.
// Up to FULL_TRIALS_MAX trials the page has them all (/trials). Above, it works on the best
// BIG_TOP from describe ?top=N, which the store reads off its metric index without touching the
// rest: /trials of 100,000 trials is 24 MB of JSON, more than the 2 s the page may take.
T2.FULL_TRIALS_MAX = 5000;
T2.BIG_TOP = 2000;

// The experiment's trial count comes from the list (cheap at any size), which says how to load.
// Big ones ask describe for its best BIG_TOP (?top=N); a server without that answers 400 and gets
// the plain describe, which is complete but slow.
function loadTrials(id) {
  var base = "/api/experiments/" + encodeURIComponent(id);
  return T2.getJSON("/api/experiments").then(function (list) {
    var row = list.filter(function (x) { return String(x.id) === String(id); })[0];
    if (row && row.trials > T2.FULL_TRIALS_MAX) {
      return T2.getJSON(base + "?top=" + T2.BIG_TOP).catch(function (err) {
        if (err.status === 400) return T2.getJSON(base);
        throw err;
      }).then(function (d) { return [d.experiment, d.trials, d.trials.length < d.experiment.trials]; });
    }
    return Promise.all([T2.getJSON(base), T2.getJSON(base + "/trials")]).then(function (r) {
      return [r[0].experiment, r[1], false];
    });
  });
}

// Trial id -> its row and experiment, for the trial page's header (page_trial.js).
T2.trialIndex = {};

T2.pages.experiment = function (id, main, rerender) {
  var st = stateFor(id);
  return loadTrials(id).then(function (r) {
    var e = r[0], trials = r[1];
    e.onlyTop = r[2];
    trials.forEach(function (t) { t.hparams = T2.flatHparams(t.hparams); });
    var ranked = T2.rankTrials(trials, !!e.smaller_is_better);
    st.onlyTop = e.onlyTop ? e.trials : 0;
    trials.forEach(function (t) { T2.trialIndex[t.id] = Object.assign({experiment_id: e.id, onlyTop: e.onlyTop}, t); });
    var hnames = T2.hparamNames(trials);
    T2.setCrumbs([["experiments", "#/"], ["experiment " + e.id + ": " + e.name, null]]);
    var top = T2.el("section", {class: "card", id: "experiment"},
      T2.el("h1", null, "Experiment " + e.id + ": ", T2.el("span", {class: "name"}, e.name)), summary(e, ranked),
      T2.el("details", {id: "config"}, T2.el("summary", null, "config"), T2.el("pre", null, e.config || "")));
    var picked = T2.pickedTrials(st, ranked);
    return T2.experimentCharts(e, ranked, picked, hnames).then(function (charts) {
      var frag = document.createDocumentFragment();
      frag.appendChild(top);
      charts.forEach(function (c) { frag.appendChild(c); });
      frag.appendChild(trialsTable(id, st, ranked, hnames, rerender, e.controller_running, e.state));
      return frag;
    });
  });
};
