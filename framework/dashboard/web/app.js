// app.js — the router (#/, #/experiment/ID, #/trial/ID) and the live loop: every second it asks
// /api/version and redraws the page when the store changed; on a trial page it also follows the log.
//
// <main> says how the page stands, for people debugging and for the browser test:
// data-state (loading | ready | error), data-route, data-renders (redraws so far) and
// data-version (the store version the page shows).
"use strict";

(function () {
  var POLL_MS = 1000;
  var main = document.getElementById("main");
  var shownVersion = null, latestVersion = null, renders = 0;
  var rendering = false, again = false;

  T2.setCrumbs = function (items) {
    var nav = document.getElementById("crumbs");
    T2.clear(nav);
    items.forEach(function (it, i) {
      if (i) nav.appendChild(document.createTextNode(" / "));
      nav.appendChild(it[1] ? T2.el("a", {href: it[1]}, it[0]) : T2.el("span", null, it[0]));
    });
  };

  function route() {
    var h = location.hash.replace(/^#/, "") || "/";
    var m;
    if (h === "/") return {name: "list", key: "/"};
    if ((m = /^\/experiment\/(\d+)$/.exec(h))) return {name: "experiment", id: m[1], key: h};
    if ((m = /^\/trial\/([0-9.]+)$/.exec(h))) return {name: "trial", id: m[1], key: h};
    return {name: "unknown", key: h};
  }

  function page(r) {
    if (r.name === "list") return T2.pages.list();
    if (r.name === "experiment") return T2.pages.experiment(r.id, main, render);
    if (r.name === "trial") return T2.pages.trial(r.id);
    T2.setCrumbs([["experiments", "#/"]]);
    return Promise.reject(new T2.HttpError(404, "no page " + r.key + " (pages: #/, #/experiment/ID, #/trial/ID)"));
  }

  // Swaps the new content in at once, keeping which <details> were open and where the page was.
  function swap(frag, r) {
    var open = {};
    main.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
    var x = window.scrollX, y = window.scrollY;
    var sameRoute = main.getAttribute("data-route") === r.key;
    T2.clear(main);
    main.appendChild(frag);
    main.querySelectorAll("details[id]").forEach(function (d) { if (open[d.id]) d.open = true; });
    if (sameRoute) window.scrollTo(x, y); else window.scrollTo(0, 0);
    main.setAttribute("data-route", r.key);
  }

  function render() {
    if (rendering) { again = true; return; }
    rendering = true;
    var r = route();
    var version = latestVersion;
    if (main.getAttribute("data-route") !== r.key) main.setAttribute("data-state", "loading");
    page(r).then(function (frag) {
      swap(frag, r);
      main.setAttribute("data-state", "ready");
      if (window.performance && performance.mark) performance.mark("t2exp-ready");  // for bench/dashboard_render.sh
    }, function (err) {
      if (!(err instanceof T2.HttpError)) throw err;  // a bug: let it reach the console
      var box = T2.el("section", {class: "card error", id: "error"}, T2.el("h1", null, "Cannot show this page"), T2.el("p", null, err.message));
      var frag = document.createDocumentFragment();
      frag.appendChild(box);
      swap(frag, r);
      main.setAttribute("data-state", "error");
    }).then(function () {
      shownVersion = version;
      main.setAttribute("data-renders", ++renders);
      main.setAttribute("data-version", version === null ? "" : version);
      if (r.name === "trial") return T2.pollLog(r.id);
    }).then(done, function (e) { done(); throw e; });
    function done() {
      rendering = false;
      if (again) { again = false; render(); }
    }
  }

  var live = document.getElementById("live");
  function poll() {
    T2.getJSON("/api/version").then(function (v) {
      live.className = "live on";
      live.textContent = "live";
      latestVersion = v.data_version;
      if (shownVersion !== null && latestVersion !== shownVersion) render();
      else if (shownVersion === null) shownVersion = latestVersion;
      var r = route();
      if (r.name === "trial" && !rendering) return T2.pollLog(r.id);
    }).catch(function (err) {
      live.className = "live off";
      live.textContent = "offline";
      if (!(err instanceof T2.HttpError) && !(err instanceof TypeError)) throw err;
    }).then(function () { setTimeout(poll, POLL_MS); });
  }

  window.addEventListener("hashchange", render);
  T2.getJSON("/api/version").then(function (v) {
    latestVersion = v.data_version;
    live.className = "live on";
  }, function () {})
    .then(function () { render(); setTimeout(poll, POLL_MS); });
})();
