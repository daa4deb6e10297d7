// page_list.js — #/: every experiment with its state, progress, best metric, searcher and age, and
// the model registry (t2exp model): each model's versions and the checkpoint each names.
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
        T2.el("td", null, T2.experimentBadge(e)),
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
    return T2.getJSON("/api/models").then(function (models) {
      if (models.length) frag.appendChild(modelsSection(models));
      return frag;
    });
  });
};

// One row per version: model:NAME:V, and the trial whose checkpoint it names.
function modelsSection(models) {
  var sec = T2.section("Models (" + models.length + ")", "models");
  var body = T2.el("tbody");
  var table = T2.el("table", {id: "models-table", class: "trials", "data-rows": models.length},
    T2.el("thead", null, T2.el("tr", null, ["name", "versions", "latest", "description", "created"]
      .map(function (h) { return T2.el("th", null, h); }))), body);
  models.forEach(function (m) {
    body.appendChild(T2.el("tr", {"data-model": m.name},
      T2.el("td", {class: "name"}, m.name),
      T2.el("td", {class: "num"}, m.versions),
      T2.el("td", null, m.latest ? "model:" + m.name + ":" + m.latest : ""),
      T2.el("td", null, m.description || ""),
      T2.el("td", {title: m.created || ""}, T2.age(m.created))));
  });
  sec.appendChild(T2.el("div", {class: "table-wrap"}, table));
  return sec;
}
