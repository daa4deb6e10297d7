/* cache.c — the up-to-date rule (cache.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cache.h"
#include "t2exp.h"
#include "t2exp/error.h"

int t2__stage_outputs_ok(const t2__flow *f, size_t i)
{
    const t2__flow_stage *s = &f->stages[i];
    for (size_t k = 0; k < s->noutputs; k++) {
        struct stat st;
        if (lstat(s->outputs[k].abs, &st) != 0)
            return t2_seterr(T2_ENOTFOUND, "output %s is missing", s->outputs[k].text);
        if (s->outputs[k].dataset) {
            t2_dataset *ds = NULL;
            int rc = t2_dataset_cache_open(&ds, s->outputs[k].abs);
            if (rc) {
                char msg[900];
                snprintf(msg, sizeof msg, "%s", t2_errmsg());
                return t2_seterr(T2_ENOTFOUND, "output %s (kind: dataset) is not a usable dataset cache: %s",
                                 s->outputs[k].text, msg);
            }
            t2_dataset_free(ds);
        }
    }
    return 0;
}

void t2__stage_check_free(t2__stage_check *c, size_t argc)
{
    t2__strv_free(c->argv, argc);
    t2__val_free(c->hparams);
    t2__stage_hash_free(&c->h);
    free(c->inputs_json);
    t2__shell_cmd_free(&c->sh);
    memset(c, 0, sizeof *c);
}

/* The first input whose hash differs from the recorded ones (or that is new). */
static void input_change(const t2__val *now, const char *recorded_json, char *why, size_t len)
{
    t2__val *old = NULL;
    if (!recorded_json || t2__val_from_json(recorded_json, strlen(recorded_json), &old, NULL) ||
        old->kind != T2__VAL_MAP) {
        snprintf(why, len, "inputs changed");
        t2__val_free(old);
        return;
    }
    for (size_t k = 0; k < now->n; k++) {
        const t2__val *o = t2__val_map_get(old, now->keys[k]);
        if (!o) {
            snprintf(why, len, "input %s added", now->keys[k]);
            break;
        }
        if (o->kind != T2__VAL_STRING || strcmp(o->s, now->items[k]->s) != 0) {
            snprintf(why, len, "input %s changed", now->keys[k]);
            break;
        }
    }
    if (!why[0]) snprintf(why, len, "inputs changed");
    t2__val_free(old);
}

int t2__stage_check_run(const t2__flow *f, size_t i, t2__ref_lookup look, void *ud, const t2__stage_run_row *last_ok,
                        t2__stage_check *c)
{
    memset(c, 0, sizeof *c);
    const t2__flow_stage *s = &f->stages[i];
    int rc = t2__flow_resolve(f, i, look, ud, &c->argv, &c->hparams);
    if (rc) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        return t2_seterr(rc, "stage %s: %s", s->name, msg);
    }
    /* A shell command gets its values through the environment, never pasted into the text the
     * shell parses (flow_shell.c). The hash still takes the pasted argv, so it depends on the
     * values exactly as it did before this, and earlier runs' records stay valid. */
    if (s->kind == T2__STAGE_COMMAND && s->shell && s->argc == 1 && s->nrefs &&
        (rc = t2__shell_subst(f, s->argv[0], look, ud, &c->sh))) {
        char msg[900];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        t2__stage_check_free(c, s->argc);
        return t2_seterr(rc, "stage %s: %s", s->name, msg);
    }
    if ((rc = t2__stage_hash_compute(f, i, c->argv, c->hparams, &c->h)) ||
        (rc = t2__val_to_json(c->h.inputs, &c->inputs_json, NULL))) {
        if (rc == T2_ENOMEM) t2_seterr(rc, "stage %s: out of memory", s->name);
        t2__stage_check_free(c, s->argc);
        return rc;
    }
    const char *why = NULL;
    if (!last_ok || !last_ok->input_hash) why = "never run";
    else if (!last_ok->def_hash || strcmp(last_ok->def_hash, c->h.def) != 0) why = "definition changed";
    else if (strcmp(last_ok->refs_hash ? last_ok->refs_hash : "", c->h.refs) != 0) why = "upstream results changed";
    else if (strcmp(last_ok->input_hash, c->h.total) != 0) {
        input_change(c->h.inputs, last_ok->inputs_json, c->why, sizeof c->why);
        return 0;
    } else if (t2__stage_outputs_ok(f, i)) {
        snprintf(c->why, sizeof c->why, "%s", t2_errmsg());
        return 0;
    }
    if (why) snprintf(c->why, sizeof c->why, "%s", why);
    else c->up_to_date = 1;
    return 0;
}
