/* test_pipeline_flow.c — flow files: what loads, every refusal located at file:line:col, the graph
 * (data edges, cycles named, order, descendants), ${...} references and their resolution. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "pipeline/flow.h"
#include "pipeline/flow_internal.h"

static t2__flow *load(const char *text)
{
    t2__flow *f = NULL;
    int rc = t2__flow_load_string(text, strlen(text), "f.yaml", "/w/proj", &f);
    if (rc) fprintf(stderr, "unexpected: %s\n", t2_errmsg());
    CHECK(rc == 0 && f != NULL);
    return f;
}

/* The load fails and some error (in the full list) contains want. */
static void refused(const char *text, const char *want)
{
    t2__flow *f = NULL;
    int rc = t2__flow_load_string(text, strlen(text), "f.yaml", "/w/proj", &f);
    CHECK(rc < 0 && f == NULL);
    size_t n = 0, more = 0;
    const char *const *e = t2__flow_errors(&n, &more);
    int found = strstr(t2_errmsg(), want) != NULL;
    for (size_t i = 0; i < n; i++) found |= strstr(e[i], want) != NULL;
    if (!found) {
        fprintf(stderr, "wanted an error with: %s\ngot: %s\n", want, t2_errmsg());
        for (size_t i = 0; i < n; i++) fprintf(stderr, "  %s\n", e[i]);
    }
    CHECK(found);
}

static void test_load(void)
{
    t2__flow *f = load("name: demo\n"
                       "stages:\n"
                       "  prep:\n"
                       "    run: [./prep, --out, cache/x.t2c]\n"
                       "    inputs: [../data/raw]\n"
                       "    outputs: [{path: cache/x.t2c, kind: dataset}, ./cache/../log.txt]\n"
                       "  search:\n"
                       "    experiment: {config: search.yaml, trial: ./t.so}\n"
                       "    inputs: [cache/x.t2c]\n"
                       "  retrain:\n"
                       "    after: search\n"
                       "    experiment:\n"
                       "      config: final.yaml\n"
                       "      trial: /abs/t.so\n"
                       "      hyperparameters: ${search.best.hparams}\n"
                       "  export:\n"
                       "    after: [retrain]\n"
                       "    run: \"t2exp export ${retrain.best.checkpoint} m.bin && echo $${HOME}\"\n"
                       "    shell: true\n"
                       "  shard:\n"
                       "    run: [./rank]\n"
                       "    resources: {slots: 4, hostfile: hosts}\n");
    if (!f) return;
    CHECK(!strcmp(f->name, "demo") && f->n == 5 && !strcmp(f->dir, "/w/proj"));
    const t2__flow_stage *p = &f->stages[0], *s = &f->stages[1], *r = &f->stages[2], *e = &f->stages[3];
    CHECK(p->kind == T2__STAGE_COMMAND && p->argc == 3 && !strcmp(p->argv[2], "cache/x.t2c"));
    CHECK(!strcmp(p->inputs[0].abs, "/w/data/raw"));
    CHECK(p->noutputs == 2 && p->outputs[0].dataset && !p->outputs[1].dataset);
    CHECK(!strcmp(p->outputs[1].abs, "/w/proj/log.txt"));
    CHECK(s->kind == T2__STAGE_EXPERIMENT && !strcmp(s->config, "/w/proj/search.yaml") && !strcmp(s->trial, "/w/proj/t.so"));
    /* search reads prep's output: a data edge */
    CHECK(s->ndeps == 1 && s->deps[0] == 0);
    CHECK(r->ndeps == 1 && r->deps[0] == 1 && r->nrefs == 1 && r->refs[0] == 1 && !strcmp(r->trial, "/abs/t.so"));
    CHECK(r->hparams && r->hparams->kind == T2__VAL_STRING);
    CHECK(e->shell && e->argc == 1 && e->nrefs == 1);
    CHECK(f->stages[4].slots == 4 && !strcmp(f->stages[4].hostfile, "/w/proj/hosts"));
    /* file order where the graph allows it */
    CHECK(f->order[0] == 0 && f->order[1] == 1 && f->order[2] == 2 && f->order[3] == 3 && f->order[4] == 4);
    CHECK(t2__flow_is_ancestor(f, 0, 3) && !t2__flow_is_ancestor(f, 3, 0) && !t2__flow_is_ancestor(f, 4, 3));
    unsigned char seed[5] = {0, 1, 0, 0, 0}, mark[5];
    t2__flow_descendants(f, seed, mark);
    CHECK(!mark[0] && mark[1] && mark[2] && mark[3] && !mark[4]);
    /* the definition leaves after: out and keeps what the stage does */
    CHECK(strstr(e->def_json, "\"shell\":true") && !strstr(e->def_json, "after"));
    t2__flow_free(f);
}

static const t2__val *results(void *ud, size_t i) { return i == 1 ? (const t2__val *)ud : NULL; }

/* A reference to a stage without a recorded result cannot resolve, and says which. */
static void test_resolve(void)
{
    t2__flow *f = load("name: r\n"
                       "stages:\n"
                       "  search: {experiment: {config: s.yaml, trial: t.so}}\n"
                       "  prep: {run: [echo]}\n"
                       "  x:\n"
                       "    after: [search]\n"
                       "    run: [echo, \"id=${search.experiment_id}\", \"${search.best.metric}\", \"${search.best.hparams}\",\n"
                       "          \"$${search.best.metric}\"]\n"
                       "  y:\n"
                       "    after: [search]\n"
                       "    experiment:\n"
                       "      config: s.yaml\n"
                       "      trial: t.so\n"
                       "      hyperparameters: {lr: \"${search.best.metric}\", tag: \"run ${search.experiment_id}\", n: 3}\n");
    if (!f) return;
    t2__val *res = NULL;
    const char *json = "{\"experiment_id\":12,\"best\":{\"metric\":0.25,\"checkpoint\":\"u-1\",\"hparams\":{\"lr\":0.1,\"h\":64}}}";
    CHECK_OK(t2__val_from_json(json, strlen(json), &res, NULL));
    /* results() answers for stage index 1 only, and search is stage 0: nothing recorded for it */
    long si = t2__flow_find(f, "search");
    CHECK(si == 0);
    char **argv = NULL;
    t2__val *hp = NULL;
    /* with no result recorded the reference cannot resolve, and says which */
    CHECK_RC(t2__flow_resolve(f, 2, results, res, &argv, &hp), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "${search.experiment_id}: stage 'search' has no recorded result") != NULL);
    t2__flow_free(f);
    t2__val_free(res);
}

/* Resolution against a recorded result. */
static const t2__val *first(void *ud, size_t i) { return i == 0 ? (const t2__val *)ud : NULL; }

static void test_resolve_values(void)
{
    t2__flow *f = load("name: r\n"
                       "stages:\n"
                       "  search: {experiment: {config: s.yaml, trial: t.so}}\n"
                       "  x:\n"
                       "    after: [search]\n"
                       "    run: [echo, \"id=${search.experiment_id}\", \"${search.best.metric}\", \"${search.best.hparams}\",\n"
                       "          \"$${search.best.metric}\", \"${search.best.checkpoint}\"]\n"
                       "  y:\n"
                       "    after: [search]\n"
                       "    experiment:\n"
                       "      config: s.yaml\n"
                       "      trial: t.so\n"
                       "      hyperparameters: {lr: \"${search.best.metric}\", tag: \"run ${search.experiment_id}\", n: 3}\n"
                       "  z:\n"
                       "    after: [search]\n"
                       "    experiment: {config: s.yaml, trial: t.so, hyperparameters: \"${search.best.hparams}\"}\n");
    if (!f) return;
    t2__val *res = NULL;
    const char *json = "{\"experiment_id\":12,\"best\":{\"metric\":0.25,\"checkpoint\":\"u-1\",\"hparams\":{\"lr\":0.1,\"h\":64}}}";
    CHECK_OK(t2__val_from_json(json, strlen(json), &res, NULL));
    char **argv = NULL;
    t2__val *hp = NULL;
    CHECK_OK(t2__flow_resolve(f, 1, first, res, &argv, &hp));
    if (argv) {
        CHECK_STR(argv[1], "id=12");
        CHECK_STR(argv[2], "0.25");
        CHECK_STR(argv[3], "{\"lr\":0.1,\"h\":64}");
        CHECK_STR(argv[4], "${search.best.metric}");
        CHECK_STR(argv[5], "u-1");
    }
    CHECK(hp == NULL);
    t2__strv_free(argv, f->stages[1].argc);
    CHECK_OK(t2__flow_resolve(f, 2, first, res, &argv, &hp));
    CHECK(hp && t2__val_map_get(hp, "lr")->kind == T2__VAL_DOUBLE && t2__val_map_get(hp, "lr")->d == 0.25);
    CHECK(hp && !strcmp(t2__val_map_get(hp, "tag")->s, "run 12") && t2__val_map_get(hp, "n")->i == 3);
    t2__val_free(hp);
    CHECK_OK(t2__flow_resolve(f, 3, first, res, &argv, &hp));
    CHECK(hp && hp->kind == T2__VAL_MAP && t2__val_map_get(hp, "h")->i == 64);
    t2__val_free(hp);
    /* a result without a checkpoint: the reference that needs one says so */
    t2__val *best = t2__val_map_get(res, "best");
    CHECK_OK(t2__val_map_set(best, "checkpoint", t2__val_string("")));
    CHECK_RC(t2__flow_resolve(f, 1, first, res, &argv, &hp), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "no trial saved a checkpoint") != NULL);
    t2__val_free(res);
    t2__flow_free(f);
}

static void test_errors(void)
{
    /* YAML syntax, and the top level */
    refused("name: x\nstages: [\n", "f.yaml:");
    refused("- a\n", "f.yaml:1:1: a flow file is a map");
    refused("stages: {a: {run: [x]}}\n", "f.yaml:1:1: name: missing required key");
    refused("name: x\nstages: {}\n", "f.yaml:2:9: stages: expected a non-empty map");
    refused("name: 'a b'\nstages: {a: {run: [x]}}\n", "f.yaml:1:7: name: 'a b' is not a valid name");
    refused("name: x\nstage: {a: {run: [x]}}\n", "f.yaml:2:1: stage: unknown key (did you mean 'stages'?)");
    /* stage keys and values */
    refused("name: x\nstages:\n  a:\n    run: [x]\n    ouputs: [y]\n",
            "f.yaml:5:5: stages.a.ouputs: unknown key (did you mean 'outputs'?)");
    refused("name: x\nstages:\n  a:\n    after: [b]\n", "f.yaml:3:3: stages.a: needs run: (a command) or experiment:");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    experiment: {config: c, trial: t}\n",
            "f.yaml:3:3: stages.a: has both run: and experiment:");
    refused("name: x\nstages:\n  a:\n    run: echo hi\n", "f.yaml:4:10: stages.a.run: a string runs through sh -c only with shell: true");
    refused("name: x\nstages:\n  a:\n    run: [echo]\n    shell: true\n", "f.yaml:4:10: stages.a.run: with shell: true, run: is one string");
    refused("name: x\nstages:\n  a:\n    run: []\n", "f.yaml:4:10: stages.a.run: an empty command");
    refused("name: x\nstages:\n  a:\n    run: [echo, {x: 1}]\n", "f.yaml:4:17: stages.a.run[1]: expected a string, got a map");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    resources: {slots: 0}\n", "f.yaml:5:24: stages.a.resources.slots");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    resources: {hostfile: h}\n",
            "f.yaml:5:27: stages.a.resources.hostfile: a hostfile needs resources.slots");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    resources: {slot: 2}\n",
            "f.yaml:5:17: stages.a.resources.slot: unknown key (did you mean 'slots'?)");
    refused("name: x\nstages:\n  a:\n    experiment: {config: c.yaml}\n", "stages.a.experiment.trial: missing required key");
    refused("name: x\nstages:\n  a:\n    experiment: {config: c, trial: t, hyperparamters: {}}\n",
            "stages.a.experiment.hyperparamters: unknown key (did you mean 'hyperparameters'?)");
    refused("name: x\nstages:\n  a:\n    experiment: {config: c, trial: t}\n    resources: {slots: 2}\n",
            "f.yaml:5:5: stages.a.resources: an experiment stage takes its resources from its config");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    outputs: [{path: o, kind: table}]\n",
            "stages.a.outputs[0].kind: 'table' is not a kind of output");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    inputs: [\"${b.best.metric}\"]\n",
            "f.yaml:5:14: stages.a.inputs[0]: ${b.best.metric}: references are allowed only in run");
    refused("name: x\nstages:\n  'a/b':\n    run: [x]\n", "f.yaml:3:3: stages: 'a/b' is not a valid stage name");
    /* the graph */
    refused("name: x\nstages:\n  a:\n    run: [x]\n    after: [bb]\n  b: {run: [y]}\n",
            "f.yaml:5:13: stages.a.after[0]: no stage 'bb' (did you mean 'b'?)");
    refused("name: x\nstages:\n  a:\n    run: [x]\n    after: [a]\n", "stages.a.after[0]: stage 'a' cannot run after itself");
    refused("name: x\nstages:\n  a: {run: [x], after: [c]}\n  b: {run: [x], after: [a]}\n  c: {run: [x], after: [b]}\n",
            "f.yaml:4:3: stages form a cycle: b -> c -> a -> b");
    /* a cycle through data: a writes o1 which b reads, b writes o2 which a reads */
    refused("name: x\nstages:\n  a: {run: [x], inputs: [o2], outputs: [o1]}\n  b: {run: [x], inputs: [o1], outputs: [o2]}\n",
            "stages form a cycle: ");
    refused("name: x\nstages:\n  a: {run: [x], inputs: [d], outputs: [d/o]}\n",
            "f.yaml:3:26: stages.a.inputs: 'd' is also an output of stage 'a' itself");
    refused("name: x\nstages:\n  a: {run: [x], outputs: [o]}\n  b: {run: [x], outputs: [./o]}\n",
            "f.yaml:4:27: stages.b.outputs: './o' overlaps output 'o' of stage 'a'");
    /* references */
    const char *head = "name: x\nstages:\n  s: {experiment: {config: c, trial: t}}\n  p: {run: [x]}\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%s  e:\n    run: [x, \"${s.best.metric}\"]\n", head);
    refused(buf, "f.yaml:6:14: stages.e.run[1]: ${s.best.metric}: stage 's' does not run before stage 'e'; add it to stages.e.after");
    snprintf(buf, sizeof buf, "%s  e:\n    after: [s]\n    run: [x, \"${ss.best.metric}\"]\n", head);
    refused(buf, "f.yaml:7:14: stages.e.run[1]: ${ss.best.metric}: no stage 'ss' (did you mean 's'?)");
    snprintf(buf, sizeof buf, "%s  e:\n    after: [p]\n    run: [x, \"${p.best.metric}\"]\n", head);
    refused(buf, "${p.best.metric}: stage 'p' is a command stage; only experiment stages have results");
    snprintf(buf, sizeof buf, "%s  e:\n    after: [s]\n    run: [x, \"${s.best.loss}\"]\n", head);
    refused(buf, "f.yaml:7:14: stages.e.run[1]: ${s.best.loss}: unknown field 'best.loss'");
    snprintf(buf, sizeof buf, "%s  e:\n    after: [s]\n    run: [x, \"${s.best.metric\"]\n", head);
    refused(buf, "${ without a closing }");
    snprintf(buf, sizeof buf, "%s  e:\n    after: [s]\n    experiment: {config: c, trial: t, hyperparameters: [1]}\n", head);
    refused(buf, "stages.e.experiment.hyperparameters: expected a map of hyperparameters");
    /* everything at once: one load lists every problem */
    t2__flow *f = NULL;
    const char *many = "name: x\nstages:\n  a: {run: [x], ater: [b]}\n  b: {run: y}\n  c: {run: [x], after: [zz]}\n";
    CHECK_RC(t2__flow_load_string(many, strlen(many), "f.yaml", "/", &f), T2_EINVAL);
    size_t n = 0, more = 0;
    t2__flow_errors(&n, &more);
    CHECK(n == 3 && more == 0);
    CHECK(strstr(t2_errmsg(), "(and 2 more errors)") != NULL);
    /* a cycle does not hide the reference errors that need no order; the "runs before" check,
     * which needs one, is left out */
    const char *cyc = "name: x\nstages:\n  a: {run: [x], after: [c]}\n  c: {run: [x], after: [a]}\n"
                      "  s: {experiment: {config: c, trial: t}}\n"
                      "  e: {after: [s], run: [x, \"${ss.best.metric}\"]}\n"
                      "  g: {after: [a], run: [x, \"${a.best.metric}\"]}\n"
                      "  l: {run: [x, \"${s.best.metric}\"]}\n";
    CHECK_RC(t2__flow_load_string(cyc, strlen(cyc), "f.yaml", "/", &f), T2_EINVAL);
    const char *const *ce = t2__flow_errors(&n, &more);
    int saw_cycle = 0, saw_name = 0, saw_kind = 0, saw_order = 0;
    for (size_t i = 0; i < n; i++) {
        saw_cycle |= strstr(ce[i], "stages form a cycle: ") != NULL;
        saw_name |= strstr(ce[i], "f.yaml:6:28: stages.e.run[1]: ${ss.best.metric}: no stage 'ss' "
                                  "(did you mean 's'?)") != NULL;
        saw_kind |= strstr(ce[i], "${a.best.metric}: stage 'a' is a command stage") != NULL;
        saw_order |= strstr(ce[i], "does not run before") != NULL;
    }
    CHECK(n == 3 && more == 0 && saw_cycle && saw_name && saw_kind && !saw_order);
    /* hostile sizes */
    size_t big = T2__FLOW_MAX_BYTES + 1;
    char *huge = malloc(big + 1);
    if (huge) {
        memset(huge, '#', big);
        huge[big] = '\0';
        CHECK_RC(t2__flow_load_string(huge, big, "f.yaml", "/", &f), T2_EINVAL);
        free(huge);
    }
    CHECK_RC(t2__flow_load_string("a\0b", 3, "f.yaml", "/", &f), T2_EFORMAT);
    CHECK_RC(t2__flow_load("/nonexistent/flow.yaml", &f), T2_ENOTFOUND);
    CHECK_RC(t2__flow_load("/dev/null", &f), T2_EINVAL);
}

static void test_ref_syntax(void)
{
    t2__ref r;
    size_t pos = 0;
    CHECK(t2__ref_next("a $${x.y} ${s-1.best.checkpoint}!", &pos, &r) == 1);
    CHECK(!strcmp(r.stage, "s-1") && r.field == T2__REF_BEST_CHECKPOINT && r.start == 10 && r.end == 32);
    CHECK(t2__ref_next("a $${x.y} ${s-1.best.checkpoint}!", &pos, &r) == 0);
    pos = 0;
    CHECK_RC(t2__ref_next("${.best.metric}", &pos, &r), T2_EINVAL);
    pos = 0;
    CHECK_RC(t2__ref_next("${stage}", &pos, &r), T2_EINVAL);
    pos = 0;
    CHECK(t2__ref_next("$5 and $ {x}", &pos, &r) == 0);
}

static void abs_is(const char *dir, const char *p, const char *want)
{
    char *got = t2__flow_abspath(dir, p);
    CHECK_STR(got, want);
    free(got);
}

/* Lexical normalisation, including paths exactly as long as the folding leaves them (a bug
 * once read past the end of those). */
static void test_abspath(void)
{
    abs_is("/tmp/tmp.Uky6hX8T0z/proj", "after_good.ran", "/tmp/tmp.Uky6hX8T0z/proj/after_good.ran");
    abs_is("/", "/a/../../b/./c//d/", "/b/c/d");
    abs_is("/x/y", "../../../z", "/z");
    abs_is("/x/y", ".", "/x/y");
    abs_is("/", ".", "/");
    abs_is("/x", "/", "/");
    abs_is("/w", "a/b/..", "/w/a");
}

int main(void)
{
    test_abspath();
    test_load();
    test_resolve();
    test_resolve_values();
    test_errors();
    test_ref_syntax();
    return check_report("test_pipeline_flow");
}
