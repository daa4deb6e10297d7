/* prune_link.c — searcher.pruner in the controller: each validation of a running trial goes to the
 * pruner (searchers/pruner.c), which judges the ones before the trial's op ends; a trial it
 * stops checkpoints and reports done at that step, the searcher hears it was pruned (and closes
 * it), and the trial ends COMPLETED with why in its error column (T2__PRUNED_AT). A trial that
 * completed its work becomes a reference for the others; a pruned, failed or killed one never
 * does (Optuna compares with COMPLETE trials only). A resume rebuilds the pruner from the store's
 * validations, so the trials it continues are judged against the same references. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "internal.h"
#include "searchers/pruner.h"

int t2__ctl_prune_init(t2__ctl *c)
{
    const t2__pruner_config *pc = &c->cfg->searcher.pruner;
    if (!pc->on) return T2_OK;
    return t2__pruner_from_config(pc, c->cfg->searcher.smaller_is_better, &c->pruner);
}

void t2__ctl_prune_free(t2__ctl *c)
{
    t2__pruner_free(c->pruner);
    c->pruner = NULL;
}

/* The warmup in a trial's batches (its batch size gb and epoch length bpe decide them). */
static int64_t warmup_batches(const t2__ctl *c, int64_t gb, int64_t bpe)
{
    const t2__length *w = &c->cfg->searcher.pruner.warmup;
    return w->n > 0 ? t2__length_to_batches(w->unit, w->n, gb, bpe) : 0;
}

/* Whether a validation at `batches` of an op ending at `target` is judged: one the runner makes on
 * its period, never the initial one at batch 0 (perform_initial_validation; checkpoint_policy best
 * asks there too, and the runner goes on whatever the answer), nor its op's last (it is done), and
 * none in the warmup. The live controller and a resume's replay decide alike. */
static int judged(int64_t batches, int64_t target, int64_t warmup)
{
    return batches > 0 && target > 0 && batches < target && batches >= warmup;
}

/* min_resource for a trial of global batch gb and bpe batches an epoch (the halving rules'; with
 * bpe 0, an epoch's length still unknown, no rung is reached). */
static t2__halving_unit unit_of(const t2__ctl *c, int64_t gb, int64_t bpe)
{
    const t2__length *m = &c->cfg->searcher.pruner.min_resource;
    t2__halving_unit u = {.n = m->n, .mul = 1, .div = 1};
    if (m->unit == T2__UNIT_RECORDS) u.div = gb > 0 ? gb : 1;
    else if (m->unit == T2__UNIT_EPOCHS) u.mul = bpe;
    return u;
}

/* Why a halving rule pruned (v->prune), after "pruned at batch N: ". */
static void halving_reason(const t2__ctl *c, const t2__prune_verdict *v, char *why, size_t n)
{
    const char *metric = c->cfg->searcher.metric;
    char bracket[48] = "";
    if (c->cfg->searcher.pruner.hyperband) snprintf(bracket, sizeof bracket, " of bracket %lld", (long long)v->bracket);
    if (isnan(v->best))
        snprintf(why, n, "%s is NaN at rung %lld (batch %lld)%s", metric, (long long)v->rung,
                 (long long)v->rung_batches, bracket);
    else if (v->bootstrap)
        snprintf(why, n, "%lld trial(s) reached rung %lld (batch %lld)%s, not more than bootstrap_count %lld",
                 (long long)v->compared, (long long)v->rung, (long long)v->rung_batches, bracket,
                 (long long)c->cfg->searcher.pruner.bootstrap_count);
    else
        snprintf(why, n, "%s %.6g is not among the best %lld of %lld trials at rung %lld (batch %lld)%s, which reach %.6g",
                 metric, v->best, (long long)v->keep, (long long)v->compared, (long long)v->rung,
                 (long long)v->rung_batches, bracket, v->threshold);
}

/* Why the configured rule pruned (v->prune), after "pruned at batch N: ". */
static void reason(const t2__ctl *c, const t2__prune_verdict *v, char *why, size_t n)
{
    const t2__pruner_config *pc = &c->cfg->searcher.pruner;
    const char *metric = c->cfg->searcher.metric, *dir = c->cfg->searcher.smaller_is_better ? "above" : "below";
    if (pc->rule == T2__PRUNE_HALVING)
        halving_reason(c, v, why, n);
    else if (isnan(v->best))
        snprintf(why, n, "%s is NaN", metric);
    else if (pc->rule == T2__PRUNE_THRESHOLD)
        snprintf(why, n, "%s %.6g is %s the %s bound %.6g", metric, v->best, v->threshold == pc->upper ? "above" : "below",
                 v->threshold == pc->upper ? "upper" : "lower", v->threshold);
    else if (pc->rule == T2__PRUNE_PATIENT)
        snprintf(why, n, "best %s %.6g in the last %lld validations is not better than %.6g before them%s", metric,
                 v->best, (long long)pc->patience + 1, v->threshold, pc->min_delta > 0 ? " by more than min_delta" : "");
    else if (pc->percentile == 50)
        snprintf(why, n, "best %s %.6g is %s the median %.6g of %lld completed trials", metric, v->best, dir,
                 v->threshold, (long long)v->compared);
    else
        snprintf(why, n, "best %s %.6g is %s the %gth percentile %.6g of %lld completed trials", metric, v->best, dir,
                 pc->percentile, v->threshold, (long long)v->compared);
}

int t2__ctl_prune_validation(t2__ctl *c, t2__ctl_trial *t, double value, int asked, int *prune)
{
    *prune = 0;
    if (!c->pruner) return T2_OK;
    /* Only a validation the runner waits on can stop it (and a trial already stopping is not
     * judged again). */
    int decide = asked && !t->pruned_why && judged(t->batches, t->target, warmup_batches(c, t->gb, t->bpe));
    t2__prune_verdict v;
    t2__halving_unit u = unit_of(c, t->gb, t->bpe);
    int rc = t2__pruner_report(c->pruner, t->rid, t->batches, &u, value, decide, &v);
    if (rc || !decide || !v.prune) return rc;
    const t2__pruner_config *pc = &c->cfg->searcher.pruner;
    char rule[300], patient[160] = "", why[500];
    reason(c, &v, rule, sizeof rule);
    if (v.patient) /* a patient pruner around the rule: the trial stopped improving first */
        snprintf(patient, sizeof patient, "no better than %.6g in the last %lld validations (%.6g before them), and ",
                 v.patient_best, (long long)pc->patience + 1, v.patient_before);
    t2__fmt_fit(why, sizeof why, T2__PRUNED_AT "%lld: %s%s", (long long)t->batches, patient, rule);
    if (!(t->pruned_why = strdup(why))) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    t2__progress_event(&c->prog, "trial " T2__TRIAL_FMT " %s", T2__TRIAL_ARGS(c, t), why);
    *prune = 1;
    return T2_OK;
}

int t2__ctl_prune_done(t2__ctl *c, t2__ctl_trial *t, int64_t length)
{
    /* Its length in max_length's unit, as far as it got: tpe ranks pruned trials by it. */
    int64_t reached = t->batches;
    if (c->cfg->searcher.max_length.unit == T2__UNIT_RECORDS) reached = t->batches * t->gb;
    else if (c->cfg->searcher.max_length.unit == T2__UNIT_EPOCHS) reached = t->bpe > 0 ? t->batches / t->bpe : 0;
    if (reached > length) reached = length;
    return t2__searcher_on_trial_pruned(c->s, t->rid, t->metric, reached, &c->ops);
}

void t2__ctl_prune_ended(t2__ctl *c, t2__ctl_trial *t, int completed)
{
    if (!c->pruner) return;
    if (completed && !t->pruned_why) {
        if (t2__pruner_completed(c->pruner, t->rid)) t2_clearerr(); /* out of memory: one reference less */
    } else {
        t2__pruner_forget(c->pruner, t->rid);
    }
}

/* The trial with store id `id` (the table is in id order, as trials are made; else a scan). */
static const t2__ctl_trial *trial_by_id(const t2__ctl *c, int64_t id)
{
    size_t lo = 0, hi = c->tt.nt;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->tt.t[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    if (lo < c->tt.nt && c->tt.t[lo].id == id) return &c->tt.t[lo];
    for (size_t k = 0; k < c->tt.nt; k++)
        if (c->tt.t[k].id == id) return &c->tt.t[k];
    return NULL;
}

/* Replays one trial's validations v[0..n). Each is judged where the live controller judged it (on
 * its period, past batch 0 and the warmup, before max_length), the verdict dropped: a halving
 * rule keeps which rungs a trial was judged at, and a patient rule around it decides when. The
 * halving rules also need its unit: its batch size from its hparams, its epoch length from the
 * epochs its validations were stored with. */
static int replay_trial(t2__ctl *c, const t2__metric_point *v, size_t n)
{
    const t2__ctl_trial *t = trial_by_id(c, v[0].trial_id);
    if (!t) return T2_OK; /* not the experiment's (the table holds every trial it made) */
    int64_t gb = t->gb, bpe = t->bpe;
    for (size_t k = 0; !bpe && k < n; k++)
        if (v[k].batches > 0 && v[k].epoch > 0) bpe = llround((double)v[k].batches / v[k].epoch);
    t2__halving_unit u = unit_of(c, gb, bpe);
    const t2__length *ml = &c->cfg->searcher.max_length;
    int64_t end = t2__length_to_batches(ml->unit, ml->n, gb, bpe), warm = warmup_batches(c, gb, bpe);
    int rc = T2_OK;
    for (size_t k = 0; !rc && k < n; k++) {
        int decide = judged(v[k].batches, end, warm);
        t2__prune_verdict dropped;
        rc = t2__pruner_report(c->pruner, t->rid, v[k].batches, &u, v[k].value, decide, &dropped);
    }
    return rc;
}

int t2__ctl_prune_restore(t2__ctl *c)
{
    if (!c->pruner) return T2_OK;
    t2__metric_point *v = NULL;
    size_t n = 0;
    int rc = t2__store_validation_series(c->st, c->exp_id, c->cfg->searcher.metric, &v, &n);
    for (size_t k = 0, end; !rc && k < n; k = end) { /* by trial: the series is in trial order */
        for (end = k + 1; end < n && v[end].trial_id == v[k].trial_id;) end++;
        rc = replay_trial(c, v + k, end - k);
    }
    free(v);
    for (size_t k = 0; !rc && k < c->tt.nt; k++) {
        t2__ctl_trial *t = &c->tt.t[k];
        if (t->state == T2__CTL_DONE && !t->pruned_why) rc = t2__pruner_completed(c->pruner, t->rid);
        else if (t->state == T2__CTL_DONE || t->state == T2__CTL_ERRORED) t2__pruner_forget(c->pruner, t->rid);
    }
    return rc;
}
