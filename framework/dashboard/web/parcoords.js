// parcoords.js — parallel coordinates on a canvas: one vertical axis per hparam and one for the
// searcher metric, one line per trial, coloured from best (dark blue) to worst (light yellow).
// uPlot draws x/y charts only, so this small one is drawn here.
"use strict";

T2.PARCOORDS_MAX = 2000;  // lines drawn; the trials come ranked, so these are the best ones

T2.parcoords = function (box, ranked, hnames, metric, smaller) {
  var trials = ranked.slice(0, T2.PARCOORDS_MAX);
  // Constant hparams (e.g. a fixed batch size) would be flat axes that say nothing.
  hnames = hnames.filter(function (h) {
    var seen = new Set(trials.map(function (t) { return JSON.stringify(t.hparams ? t.hparams[h] : null); }));
    return seen.size > 1 || trials.length === 1;
  });
  var axes = hnames.map(function (h) { return {name: h, get: function (t) { return t.hparams ? t.hparams[h] : undefined; }}; });
  axes.push({name: metric, get: function (t) { return t.best_validation; }, metric: true});
  box.classList.add("parcoords");
  box.setAttribute("data-axes", axes.length);
  box.setAttribute("data-lines", trials.length);
  if (!trials.length) { T2.append(box, T2.el("p", {class: "muted"}, "No trial has a validation yet.")); return; }

  // Each axis maps its values to [0, 1]: numbers by range, anything else by first appearance.
  axes.forEach(function (a) {
    var vals = trials.map(a.get);
    if (vals.every(function (v) { return typeof v === "number"; })) {
      a.min = Math.min.apply(null, vals); a.max = Math.max.apply(null, vals);
      a.pos = function (v) { return a.max > a.min ? (v - a.min) / (a.max - a.min) : 0.5; };
      a.labels = [T2.num(a.min), T2.num(a.max)];
    } else {
      var cats = [], index = {};
      vals.forEach(function (v) { var k = typeof v === "string" ? v : JSON.stringify(v); if (index[k] === undefined) { index[k] = cats.length; cats.push(k); } });
      a.pos = function (v) { var k = typeof v === "string" ? v : JSON.stringify(v); return cats.length > 1 ? index[k] / (cats.length - 1) : 0.5; };
      a.labels = [cats[0], cats[cats.length - 1]];
    }
  });

  var width = Math.max(320, Math.min(1100, (document.getElementById("main").clientWidth || 900) - 60));
  var height = 260, top = 28, bottom = 34, left = 70, right = 70;
  var dpr = window.devicePixelRatio || 1;
  var canvas = T2.el("canvas", {width: width * dpr, height: height * dpr, style: "width:" + width + "px;height:" + height + "px",
                                role: "img", "aria-label": "parallel coordinates of " + trials.length + " trials"});
  var ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  var step = axes.length > 1 ? (width - left - right) / (axes.length - 1) : 0;
  function x(i) { return left + i * step; }
  function y(p) { return top + (1 - p) * (height - top - bottom); }

  // Worst first, so the best lines end up on top.
  var n = trials.length;
  ctx.lineWidth = 1.2;
  for (var r = n - 1; r >= 0; r--) {
    var t = trials[r], q = n > 1 ? r / (n - 1) : 0;
    ctx.strokeStyle = "hsla(" + (220 - 170 * q) + ",70%," + (35 + 40 * q) + "%," + (n > 200 ? 0.35 : 0.8) + ")";
    ctx.beginPath();
    axes.forEach(function (a, i) {
      var v = a.get(t), py = y(a.pos(v));
      if (i === 0) ctx.moveTo(x(i), py); else ctx.lineTo(x(i), py);
    });
    ctx.stroke();
  }
  // Axes with their names (canvas text is drawn, never parsed, so user strings are safe here).
  ctx.strokeStyle = "#333"; ctx.fillStyle = "#222"; ctx.lineWidth = 1;
  ctx.font = "12px sans-serif"; ctx.textAlign = "center";
  axes.forEach(function (a, i) {
    ctx.beginPath(); ctx.moveTo(x(i), y(0)); ctx.lineTo(x(i), y(1)); ctx.stroke();
    ctx.fillText(String(a.name).slice(0, 24), x(i), top - 12);
    ctx.fillStyle = "#555";
    ctx.fillText(String(a.labels[1]).slice(0, 14), x(i), top - 1 + 0);
    ctx.fillText(String(a.labels[0]).slice(0, 14), x(i), height - bottom + 14);
    ctx.fillStyle = "#222";
  });
  ctx.textAlign = "left";
  ctx.fillText((smaller ? "dark: smallest " : "dark: largest ") + metric, 4, height - 4);
  box.appendChild(canvas);
};
