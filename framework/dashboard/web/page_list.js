// page_list.js — #/: every experiment with its state, progress, best metric, searcher and age.
"use strict";

T2.pages = T2.pages || {};

T2.pages.list = function () {
  return T2.getJSON("/api/experiments").then(function (exps) {
    T2.setCrumbs([["experiments", null]]);
    var body = T2.el("tbody");
    exps.slice().reverse().forEach(function (e) {  // newest first
      body.appendChild(T2.el("tr", {"data-experiment-id": e.id},
        T2.el("td", {class: "num"}, T2.el("a", {href: "#/experiment/" + e.id}, String(e.id))),
        T2.el("td", null, T2.el("a", {href: "#/experiment/" + e.id, class: "name"}, e.name)),
        T2.el("td", null, T2.stateBadge(e.state)),
        T2.el("td", null, T2.el("progress", {max: 1, value: typeof e.progress === "number" ? e.progress : 0}), " ", T2.percent(e.progress)),
        T2.el("td", {class: "num"}, e.trials),
        T2.el("td", {class: "num"}, T2.num(e.best_metric)),
        T2.el("td", null, e.searcher),
        T2.el("td", {title: e.started || ""}, T2.age(e.started)),
        T2.el("td", null, T2.duration(e.duration))));
    });
    var table = T2.el("table", {id: "experiments-table", class: "trials", "data-rows": exps.length},
      T2.el("thead", null, T2.el("tr", null, ["id", "name", "state", "progress", "trials", "best", "searcher", "age", "duration"]
        .map(function (h) { return T2.el("th", null, h); }))), body);
    var sec = T2.section("Experiments (" + exps.length + ")", "experiments");
    if (!exps.length) sec.appendChild(T2.el("p", {class: "muted"}, "The store has no experiment yet: start one with t2exp create CONFIG TRIAL.so."));
    else sec.appendChild(T2.el("div", {class: "table-wrap"}, table));
    var frag = document.createDocumentFragment();
    frag.appendChild(sec);
    return frag;
  });
};
