// charts.js — line, scatter and bar charts on the vendored uPlot.
//
// Each chart's container carries what a test (or a curious user) can read without pixels:
// data-series-count, data-series (the series labels, one per line) and data-points (the point
// count of each series, comma separated, in the same order).
"use strict";

T2.palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
              "#17becf", "#7f7f7f", "#bcbd22"];

T2.color = function (i) { return T2.palette[i % T2.palette.length]; };

// Charts are built before their section is on the page (so nothing can be measured there): the
// width is <main>'s, less the card padding, shared by perRow charts.
function chartWidth(perRow) {
  var main = document.getElementById("main");
  var w = ((main && main.clientWidth) || 1200) - 40 - 34;
  return Math.max(260, Math.floor((w - 12 * (perRow - 1)) / perRow));
}

function describe(box, series) {
  box.setAttribute("data-series-count", series.length);
  box.setAttribute("data-series", series.map(function (s) { return s.label; }).join("\n"));
  box.setAttribute("data-points", series.map(function (s) { return s.xs.length; }).join(","));
}

// Series {label, xs, ys} with xs in any order; uPlot wants one shared, sorted x array with
// nulls where a series has no point, which uPlot.join builds.
function aligned(series) {
  var tables = series.map(function (s) {
    var idx = s.xs.map(function (_, i) { return i; });
    idx.sort(function (a, b) { return s.xs[a] - s.xs[b]; });
    var xs = [], ys = [];
    idx.forEach(function (i) {
      // uPlot.join keeps one value per x: a repeated x keeps the last one.
      if (xs.length && xs[xs.length - 1] === s.xs[i]) ys[ys.length - 1] = s.ys[i];
      else { xs.push(s.xs[i]); ys.push(s.ys[i]); }
    });
    return [xs, ys];
  });
  return tables.length ? uPlot.join(tables) : [[]];
}

function sortedPoints(s) {
  var idx = s.xs.map(function (_, i) { return i; });
  idx.sort(function (a, b) { return s.xs[a] - s.xs[b]; });
  return [idx.map(function (i) { return s.xs[i]; }), idx.map(function (i) { return s.ys[i]; })];
}

// opts: {title, xLabel, yLabel, series: [{label, xs, ys, color}], xTime, points, height, step}
T2.lineChart = function (box, opts) {
  var series = opts.series || [];
  describe(box, series);
  box.classList.add("chart");
  if (!series.length) {
    T2.append(box, T2.el("p", {class: "muted"}, opts.empty || "No data yet."));
    return null;
  }
  var cfg = {
    title: opts.title,
    width: chartWidth(opts.perRow || 2),
    height: opts.height || 260,
    scales: {x: {time: !!opts.xTime}},
    axes: [{label: opts.xLabel, stroke: "#444"},
           {label: opts.yLabel, stroke: "#444", size: 64, values: function (u, ticks) { return ticks.map(T2.num); }}],
    legend: {live: true},
    series: [{label: opts.xLabel}].concat(series.map(function (s, i) {
      // A line through one x is nothing: such a series is drawn as its point (a trial that
      // reported training once, shorter than scheduling_unit, had an empty chart; probe_J).
      var lone = !opts.points && s.xs.length > 0 && s.xs.every(function (x) { return x === s.xs[0]; });
      return {
        label: s.label,
        stroke: s.color || T2.color(i),
        width: 1.5,
        spanGaps: true,
        paths: opts.points ? function () { return null; } : (opts.step ? uPlot.paths.stepped({align: 1}) : undefined),
        points: {show: opts.points || lone ? true : undefined, size: opts.points || lone ? 5 : undefined,
                 fill: s.color || T2.color(i)},
        value: function (u, v) { return v === null || v === undefined ? "–" : T2.num(v); },
      };
    })),
  };
  if (opts.xRange) cfg.scales.x.range = function () { return opts.xRange; };
  if (opts.xValues) { cfg.axes[0].values = opts.xValues; cfg.axes[0].splits = opts.xSplits; }
  // A scatter keeps every point, repeated xs included; lines need the shared, joined x array.
  var data = opts.points ? sortedPoints(series[0]) : aligned(series);
  return new uPlot(cfg, data, box);
};

// One point cloud: xs[i], ys[i]; labels on the axes. Categorical xs are placed by index and the
// axis shows their names.
T2.scatterChart = function (box, opts) {
  var cats = opts.categories;
  var o = {
    title: opts.title, xLabel: opts.xLabel, yLabel: opts.yLabel, points: true, height: opts.height || 220, perRow: 3,
    series: [{label: opts.seriesLabel || "trials", xs: opts.xs, ys: opts.ys, color: opts.color}],
    empty: "No trial has a validation yet.",
  };
  if (!cats && opts.xs.length) {
    // Padded past the data: uPlot finds the visible points by searching x for the scale's ends,
    // and with repeated xs at an end it would stop at the first of them and hide the rest.
    var lo = Math.min.apply(null, opts.xs), hi = Math.max.apply(null, opts.xs);
    var pad = hi > lo ? (hi - lo) * 0.05 : Math.abs(lo) * 0.1 || 1;
    o.xRange = [lo - pad, hi + pad];
  }
  if (cats) {
    o.xRange = [-0.5, cats.length - 0.5];
    o.xSplits = function () { return cats.map(function (_, i) { return i; }); };
    o.xValues = function (u, ticks) {
      return ticks.map(function (t) { return cats[t] === undefined ? "" : String(cats[t]).slice(0, 18); });
    };
  }
  return T2.lineChart(box, o);
};

// Horizontal bars made of DOM boxes (a handful of values; no canvas needed).
// rows: [{label, parts: [{name, value, color}]}]; unit names the value.
T2.barChart = function (box, rows, unit) {
  box.classList.add("bars");
  box.setAttribute("data-bars", rows.length);
  var max = 0;
  rows.forEach(function (r) {
    var sum = r.parts.reduce(function (a, p) { return a + (p.value > 0 ? p.value : 0); }, 0);
    if (sum > max) max = sum;
  });
  rows.forEach(function (r) {
    var bar = T2.el("div", {class: "bar"});
    r.parts.forEach(function (p) {
      var w = max > 0 && p.value > 0 ? (100 * p.value / max) : 0;
      bar.appendChild(T2.el("span", {class: "bar-part", style: "width:" + w.toFixed(2) + "%;background:" + p.color,
                                     title: p.name + ": " + T2.num(p.value) + (unit ? " " + unit : "")}));
    });
    var total = r.parts.reduce(function (a, p) { return a + (p.value > 0 ? p.value : 0); }, 0);
    box.appendChild(T2.el("div", {class: "bar-row"}, T2.el("span", {class: "bar-label"}, r.label), bar,
                          T2.el("span", {class: "bar-value"}, T2.num(total) + (unit ? " " + unit : ""))));
  });
  var legendNames = {};
  var legend = T2.el("div", {class: "bar-legend"});
  rows.forEach(function (r) {
    r.parts.forEach(function (p) {
      if (legendNames[p.name]) return;
      legendNames[p.name] = 1;
      legend.appendChild(T2.el("span", null, T2.el("i", {style: "background:" + p.color}), p.name));
    });
  });
  box.appendChild(legend);
};
