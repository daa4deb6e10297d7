// dom.js — the one way the dashboard puts data on the page, plus fetch and number formatting.
//
// Every string that comes from the store (experiment names, labels, hparam values, log lines,
// config text) is user input. It reaches the DOM only as a text node or an attribute value set
// with setAttribute, never through innerHTML, so markup in it shows as text and never runs.
"use strict";
var T2 = window.T2 || {};
window.T2 = T2;

// el("tag", {attr: value, onclick: fn}, child...): children are nodes, or anything else, which
// becomes a text node. null/undefined children are skipped.
T2.el = function (tag, attrs) {
  var node = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (typeof v === "function") node.addEventListener(k.replace(/^on/, ""), v);
      else node.setAttribute(k, String(v));
    });
  }
  for (var i = 2; i < arguments.length; i++) T2.append(node, arguments[i]);
  return node;
};

T2.append = function (node, child) {
  if (child === null || child === undefined) return;
  if (Array.isArray(child)) { child.forEach(function (c) { T2.append(node, c); }); return; }
  node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
};

T2.clear = function (node) { while (node.firstChild) node.removeChild(node.firstChild); };

T2.section = function (title, id) {
  var s = T2.el("section", {id: id, class: "card"}, T2.el("h2", null, title));
  return s;
};

// ---- fetching ------------------------------------------------------------------------------

T2.HttpError = function (status, message) { this.status = status; this.message = message; };

function errorFrom(r) {
  return r.text().then(function (t) {
    var msg = t;
    try { msg = JSON.parse(t).error || t; } catch (e) { /* plain text error */ }
    throw new T2.HttpError(r.status, r.status + " " + msg);
  });
}

T2.getJSON = function (url) {
  return fetch(url, {cache: "no-store"}).then(function (r) {
    if (!r.ok) return errorFrom(r);
    return r.json();
  });
};

// Resolves {text, next} where next is the X-Next-Offset header (NaN when absent).
T2.getText = function (url) {
  return fetch(url, {cache: "no-store"}).then(function (r) {
    if (!r.ok) return errorFrom(r);
    return r.text().then(function (t) {
      return {text: t, next: parseInt(r.headers.get("X-Next-Offset"), 10)};
    });
  });
};

// ---- formatting ----------------------------------------------------------------------------

T2.num = function (v) {
  if (v === null || v === undefined || v === "") return "";
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  var a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
  return String(Number(v.toPrecision(5)));
};

// A duration as `t2exp list` and `describe` write it (store_print.c's put_duration): one decimal
// under 10 s, so a 0.4 s experiment is 0.4s (it showed as 0s), then 12s, 1m02s, 1h02m03s.
T2.duration = function (sec) {
  if (typeof sec !== "number" || !(sec >= 0)) return "";
  if (sec < 10) return sec.toFixed(1) + "s";
  sec = Math.round(sec);
  var h = Math.floor(sec / 3600), m = Math.floor(sec / 60) % 60, s = sec % 60;
  var pad = function (n) { return String(n).padStart(2, "0"); };
  if (h) return h + "h" + pad(m) + "m" + pad(s) + "s";
  if (m) return m + "m" + pad(s) + "s";
  return s + "s";
};

// Age of an ISO 8601 UTC time, as "5m ago": whole units, no CLI column to agree with.
T2.age = function (iso) {
  var t = Date.parse(iso);
  if (isNaN(t)) return "";
  var sec = Math.round(Math.max(0, (Date.now() - t) / 1000));
  var h = Math.floor(sec / 3600), m = Math.floor(sec / 60) % 60;
  return (h ? h + "h" + String(m).padStart(2, "0") + "m" : m ? m + "m" + String(sec % 60).padStart(2, "0") + "s" : sec + "s") + " ago";
};

// A trial as the CLI names it, EXP.N: its experiment's id and its number in the experiment (the
// `trial` of /trials rows). The store id (`id`, which the routes take) only where called one.
T2.trialName = function (experimentId, t) {
  return "trial " + experimentId + "." + t.trial;
};

T2.percent = function (p) {
  if (typeof p !== "number") return "";
  return Math.round(p * 100) + "%";
};

// A <dl> of "key value" facts; pairs whose value is empty are left out.
T2.facts = function (pairs) {
  var dl = T2.el("dl", {class: "facts"});
  pairs.forEach(function (kv) {
    var v = kv[1];
    if (v === null || v === undefined || v === "" || (Array.isArray(v) && !v.length)) return;
    dl.appendChild(T2.el("div", null, T2.el("dt", null, kv[0]), T2.el("dd", null, v)));
  });
  return dl;
};

T2.stateBadge = function (state) {
  var s = String(state || "");
  return T2.el("span", {class: "state state-" + s.toLowerCase().replace(/[^a-z_]/g, "")}, s);
};

// An experiment's state as `t2exp list`'s table says it: ACTIVE with no live controller (killed or
// crashed before it recorded an end; the API's controller_running is 0) is "ACTIVE (no
// controller)", which `t2exp resume` continues. The stored state stays the API's `state`.
T2.experimentBadge = function (e) {
  if (e.state !== "ACTIVE" || e.controller_running !== 0) return T2.stateBadge(e.state);
  return T2.el("span", {class: "state state-no_controller", title: "no controller runs it: t2exp resume " + e.id + " continues it"},
               "ACTIVE (no controller)");
};

// A trial's state in an experiment whose controller_running is `running` and whose state is
// `expState`: RUNNING where no controller runs it reads "RUNNING (no controller)", and QUEUED in an
// ERRORED experiment "QUEUED (experiment ERRORED)" (it waits for `t2exp resume`, not for a slot),
// as `t2exp trials` says them.
T2.trialBadge = function (state, running, expState) {
  if (state === "QUEUED" && expState === "ERRORED")
    return T2.el("span", {class: "state state-queued", title: "its experiment ERRORED: it runs only when t2exp resume continues the experiment"},
                 "QUEUED (experiment ERRORED)");
  if (state !== "RUNNING" || running !== 0) return T2.stateBadge(state);
  return T2.el("span", {class: "state state-no_controller", title: "no controller runs its experiment"},
               "RUNNING (no controller)");
};

// A trial's hparams with nested groups as their leaves' dotted names ({opt: {lr: 1}} gives
// {"opt.lr": 1}), as `t2exp importance` and `t2exp plot` name them: a column, axis or panel per
// leaf, not one per group whose values are JSON. Lists and empty maps are leaves. When two leaves
// would get one name (a key with dots of its own), the hparams stay as they are.
T2.flatHparams = function (h) {
  if (!h || typeof h !== "object" || Array.isArray(h)) return h;
  var out = {}, clash = false;
  (function walk(m, prefix) {
    Object.keys(m).forEach(function (k) {
      var v = m[k], path = prefix + k;
      if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length) walk(v, path + ".");
      else if (Object.prototype.hasOwnProperty.call(out, path)) clash = true;
      else out[path] = v;
    });
  })(h, "");
  return clash ? h : out;
};

// hparams as "k=v, k=v" text (values may be any JSON, including user strings; nested groups by
// their leaves' dotted names).
T2.hparamText = function (h) {
  if (!h || typeof h !== "object") return h === undefined ? "" : String(h);
  h = T2.flatHparams(h);
  return Object.keys(h).map(function (k) {
    var v = h[k];
    return k + "=" + (typeof v === "object" ? JSON.stringify(v) : T2.num(v));
  }).join(", ");
};
