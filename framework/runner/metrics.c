/* metrics.c — t2_metric / t2_metric_reduce: named scalars with a reducer, combined over a
 * reporting window. MEAN is weighted by the batch's sample count so that a short final batch
 * counts for what it is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "configs/value.h"

void t2__metrics_init(t2_metrics *m) { memset(m, 0, sizeof *m); }

void t2__metrics_free(t2_metrics *m)
{
    if (!m) return;
    free(m->acc);
    memset(m, 0, sizeof *m);
}

void t2__metrics_reset(t2_metrics *m)
{
    for (int i = 0; i < m->n; i++) {
        t2__metric_acc *a = &m->acc[i];
        a->sum = a->weight = 0.0;
        a->min = INFINITY;
        a->max = -INFINITY;
        a->count = 0;
        a->from_end = 0;
    }
    m->error[0] = '\0';
}

double t2__metrics_value(const t2_metrics *m, int i)
{
    const t2__metric_acc *a = &m->acc[i];
    if (a->count == 0) return 0.0;
    switch (a->reducer) {
    case T2_REDUCE_SUM: return a->sum;
    case T2_REDUCE_MIN: return a->min;
    case T2_REDUCE_MAX: return a->max;
    default: return a->weight > 0 ? a->sum / a->weight : 0.0;
    }
}

int t2_metric_reduce(t2_metrics *m, const char *name, double value, t2_reducer reducer)
{
    if (!m || !name || !*name) return t2_seterr(T2_EINVAL, "t2_metric: NULL metrics or empty name");
    if (strlen(name) >= sizeof m->acc[0].name)
        return t2_seterr(T2_EINVAL, "t2_metric: name '%.20s...' longer than %zu characters", name,
                         sizeof m->acc[0].name - 1);
    /* Names travel to the controller and the store as JSON text: a name that is no UTF-8 is the
     * trial's error here, named, rather than a protocol rejection later that names neither. */
    size_t bad = t2__utf8_invalid_at(name);
    if (bad != (size_t)-1 && !m->error[0]) /* fails the batch even if the trial ignores the return */
        snprintf(m->error, sizeof m->error, "metric name '%.*s' is not valid UTF-8 (byte %zu, 0x%02x)",
                 (int)(bad < 60 ? bad : 60), name, bad, (unsigned)(unsigned char)name[bad]);
    if (bad != (size_t)-1)
        return t2_seterr(T2_EINVAL, "t2_metric: name '%.*s' is not valid UTF-8 (byte %zu, 0x%02x)", (int)bad, name,
                         bad, (unsigned)(unsigned char)name[bad]);
    if ((int)reducer < T2_REDUCE_MEAN || reducer > T2_REDUCE_MAX)
        return t2_seterr(T2_EINVAL, "t2_metric %s: unknown reducer %d", name, (int)reducer);
    if (!isfinite(value)) {
        if (!m->error[0]) snprintf(m->error, sizeof m->error, "metric %s is %g", name, value);
        return t2_seterr(T2_ENUMERIC, "t2_metric: %s is %g", name, value);
    }
    int i = 0;
    while (i < m->n && strcmp(m->acc[i].name, name) != 0) i++;
    if (i == m->n) {
        if (m->n == m->cap) {
            int cap = m->cap ? 2 * m->cap : 8;
            t2__metric_acc *g = realloc(m->acc, (size_t)cap * sizeof *g);
            if (!g) return t2_seterr(T2_ENOMEM, "t2_metric: out of memory");
            m->acc = g;
            m->cap = cap;
        }
        t2__metric_acc *a = &m->acc[m->n++];
        memset(a, 0, sizeof *a);
        snprintf(a->name, sizeof a->name, "%s", name);
        a->reducer = reducer;
        a->min = INFINITY;
        a->max = -INFINITY;
    } else if (m->finishing && m->acc[i].count) {
        /* Adding to a reduced value would mix a whole-pass number into a per-batch one; a second
         * value of evaluate_end's own would average two answers. */
        int twice = m->acc[i].from_end;
        if (!m->error[0])
            snprintf(m->error, sizeof m->error, "evaluate_end reported %.60s, which %s reported", name,
                     twice ? "it already" : "evaluate_batch");
        return twice ? t2_seterr(T2_EINVAL, "t2_metric %s: evaluate_end reported it twice", name)
                     : t2_seterr(T2_EINVAL, "t2_metric %s: evaluate_batch reported it; evaluate_end adds metrics of new names",
                                 name);
    } else if (m->acc[i].reducer != reducer) {
        static const char *const names[] = {"MEAN", "SUM", "MIN", "MAX"};
        return t2_seterr(T2_EINVAL, "t2_metric %s: reported with reducer T2_REDUCE_%s after T2_REDUCE_%s (a metric "
                         "keeps one reducer)", name, names[reducer], names[m->acc[i].reducer]);
    }
    t2__metric_acc *a = &m->acc[i];
    double w = reducer == T2_REDUCE_MEAN ? (m->batch_weight > 0 ? m->batch_weight : 1.0) : 1.0;
    a->sum += value * w;
    a->weight += w;
    if (value < a->min) a->min = value;
    if (value > a->max) a->max = value;
    a->count++;
    a->from_end = m->finishing;
    return T2_OK;
}

int t2_metric(t2_metrics *m, const char *name, double value)
{
    return t2_metric_reduce(m, name, value, T2_REDUCE_MEAN);
}

int t2_metrics_get(const t2_metrics *m, const char *name, double *out)
{
    if (!m || !name || !out) return t2_seterr(T2_EINVAL, "t2_metrics_get: NULL argument");
    char names[256] = "";
    size_t off = 0;
    for (int i = 0; i < m->n; i++) {
        if (!m->acc[i].count) continue; /* a name of an earlier pass, not reported in this one */
        if (!strcmp(m->acc[i].name, name)) {
            *out = t2__metrics_value(m, i);
            return T2_OK;
        }
        if (off < sizeof names) off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "", m->acc[i].name);
    }
    return t2_seterr(T2_ENOTFOUND, "t2_metrics_get: no metric %s in this pass (reported: %s)", name,
                     names[0] ? names : "nothing");
}
