/* hill_climb.c — an example custom searcher (t2exp/searcher.h): a stochastic hill climb.
 *
 *   searcher:
 *     name: custom
 *     library: build/searchers/hill_climb.so
 *     metric: loss
 *     max_length: {batches: 100}
 *     max_trials: 30
 *     options: {first: 4, step: 0.15}
 *
 * The first `first` trials are random draws; every later trial starts from the best point so far
 * and moves each searched hyperparameter by a normal step of `step` times its range (a
 * categorical one changes to a random choice with probability `step`), so the search climbs
 * towards better results while trials run side by side. Each trial trains to max_length once.
 *
 * Every random choice comes from the experiment seed and the request id, and the state (the best
 * point and how many trials were made) is saved as text, so a paused and resumed search makes
 * the same trials as one that ran through. Build: cc -shared -fPIC -I <t2exp include> hill_climb.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <t2exp/rng.h>
#include <t2exp/searcher.h>

#define MAX_PARAMS 64

typedef struct hill {
    int64_t first, made, ended;
    double step;
    int has_best;
    double best;                /* the best metric so far, as a loss (smaller is better) */
    double best_x[MAX_PARAMS];  /* its values: numbers as they are, categoricals as indices */
    double *x;                  /* each request's values (the point it was created with) */
    size_t cap, np;
} hill;

/* A stream per (seed, request, draw) through t2_hash64, so choices do not depend on event order. */
static double uniform(uint64_t seed, int64_t rid, int k)
{
    return (double)(t2_hash64(seed ^ t2_hash64((uint64_t)rid * 1000003u + (uint64_t)k)) >> 11) * 0x1.0p-53;
}
static double normal(uint64_t seed, int64_t rid, int k)
{
    double u = uniform(seed, rid, 2 * k) + 1e-300, v = uniform(seed, rid, 2 * k + 1);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static int init(t2_search *s, void **state)
{
    hill *h = calloc(1, sizeof *h);
    if (!h) return t2_seterr(T2_ENOMEM, "hill_climb: out of memory");
    *state = h;
    double v;
    h->first = t2_search_option(s, "first", &v) == T2_OK ? (int64_t)v : 4;
    h->step = t2_search_option(s, "step", &v) == T2_OK ? v : 0.15;
    h->np = t2_search_nparams(s);
    if (h->first < 1 || !(h->step > 0 && h->step <= 1))
        return t2_seterr(T2_EINVAL, "hill_climb: options.first must be >= 1 and options.step in (0, 1]");
    if (h->np > MAX_PARAMS) return t2_seterr(T2_EINVAL, "hill_climb: at most %d hyperparameters", MAX_PARAMS);
    if (t2_search_max_trials(s) < 1) return t2_seterr(T2_EINVAL, "hill_climb: needs searcher.max_trials");
    return T2_OK;
}

/* The values of p, by parameter, into x. */
static int values_of(t2_search *s, const t2_point *p, double *x)
{
    for (size_t i = 0; i < t2_search_nparams(s); i++) {
        t2_param q;
        int rc = t2_search_param(s, i, &q);
        size_t c;
        if (rc) return rc;
        x[i] = 0;
        if (q.kind == T2_PARAM_CATEGORICAL) {
            if ((rc = t2_point_choice(p, q.name, &c))) return rc;
            x[i] = (double)c;
        } else if (q.kind != T2_PARAM_CONST && (rc = t2_point_double(p, q.name, &x[i]))) {
            return rc;
        }
    }
    return T2_OK;
}

/* A step from the best point for request rid, into p. */
static int climb(t2_search *s, const hill *h, int64_t rid, t2_point *p)
{
    uint64_t seed = t2_search_seed(s);
    for (size_t i = 0; i < h->np; i++) {
        t2_param q;
        int rc = t2_search_param(s, i, &q);
        if (rc) return rc;
        double b = h->best_x[i];
        if (q.kind == T2_PARAM_CATEGORICAL) {
            size_t c = (size_t)b;
            if (uniform(seed, rid, 100 + (int)i) < h->step)
                c = (size_t)(uniform(seed, rid, 200 + (int)i) * (double)q.nchoices) % q.nchoices;
            rc = t2_point_set_choice(p, q.name, c);
        } else if (q.kind == T2_PARAM_INT || q.kind == T2_PARAM_DOUBLE) {
            double x = b + normal(seed, rid, (int)i) * h->step * (q.maxval - q.minval);
            x = fmin(fmax(x, q.minval), q.maxval);
            rc = t2_point_set_double(p, q.name, q.kind == T2_PARAM_INT ? round(x) : x);
        } else if (q.kind == T2_PARAM_LOG) { /* a step in the exponent */
            double e = log(b) / log(q.base) + normal(seed, rid, (int)i) * h->step * (q.maxval - q.minval);
            e = fmin(fmax(e, q.minval), q.maxval);
            rc = t2_point_set_double(p, q.name, pow(q.base, e));
        }
        if (rc) return rc;
    }
    return T2_OK;
}

/* The next trial: a draw until `first` exist and while nothing has a result, a climb after. */
static int next(t2_search *s, hill *h)
{
    int64_t rid = h->made;
    if (rid >= t2_search_max_trials(s)) return T2_OK;
    if ((size_t)rid >= h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        double *x = realloc(h->x, cap * (h->np ? h->np : 1) * sizeof *x);
        if (!x) return t2_seterr(T2_ENOMEM, "hill_climb: out of memory");
        h->x = x;
        h->cap = cap;
    }
    t2_point *p = NULL;
    int rc = t2_search_sample(s, t2_search_seed(s) ^ t2_hash64((uint64_t)rid), &p);
    if (!rc && rid >= h->first && h->has_best) rc = climb(s, h, rid, p);
    if (!rc) rc = values_of(s, p, h->x + (size_t)rid * h->np);
    if (rc) {
        t2_point_free(p);
        return rc;
    }
    int64_t got;
    if ((rc = t2_search_create(s, p, &got))) return rc;
    h->made++;
    return t2_search_train(s, got, t2_search_max_length(s));
}

static int start(t2_search *s, void *state)
{
    hill *h = state;
    int rc = T2_OK;
    for (int64_t k = 0; k < h->first && !rc; k++) rc = next(s, h);
    return rc;
}

static int on_validation(t2_search *s, void *state, int64_t rid, double metric, int64_t length)
{
    hill *h = state;
    if (length < t2_search_max_length(s)) return T2_OK;
    double loss = t2_search_smaller_is_better(s) ? metric : -metric;
    if (!isnan(loss) && (!h->has_best || loss < h->best)) {
        h->has_best = 1;
        h->best = loss;
        memcpy(h->best_x, h->x + (size_t)rid * h->np, h->np * sizeof *h->best_x);
    }
    return t2_search_close(s, rid);
}

/* A place freed: the next trial takes it. */
static int on_trial_exited(t2_search *s, void *state, int64_t rid)
{
    (void)rid;
    hill *h = state;
    h->ended++;
    return next(s, h);
}

static int on_trial_failed(t2_search *s, void *state, int64_t rid, int invalid_hparams)
{
    (void)invalid_hparams;
    return on_trial_exited(s, state, rid);
}

static double progress(t2_search *s, void *state)
{
    const hill *h = state;
    return (double)h->ended / (double)t2_search_max_trials(s);
}

/* "made ended has_best best x0 x1 ... (best_x) then each request's values", as %a (exact). */
static int save(t2_search *s, void *state, char **text)
{
    (void)s;
    const hill *h = state;
    size_t n = 4 + h->np + (size_t)h->made * h->np, cap = 64 + n * 32;
    char *t = malloc(cap), *w = t;
    if (!t) return t2_seterr(T2_ENOMEM, "hill_climb: out of memory");
    w += sprintf(w, "%lld %lld %d %a", (long long)h->made, (long long)h->ended, h->has_best, h->best);
    for (size_t i = 0; i < h->np; i++) w += sprintf(w, " %a", h->best_x[i]);
    for (size_t i = 0; i < (size_t)h->made * h->np; i++) w += sprintf(w, " %a", h->x[i]);
    *text = t;
    return T2_OK;
}

static int load(t2_search *s, void *state, const char *text)
{
    (void)s;
    hill *h = state;
    long long made, ended;
    int used = 0;
    if (sscanf(text, "%lld %lld %d %la%n", &made, &ended, &h->has_best, &h->best, &used) != 4 || made < 0)
        return t2_seterr(T2_EFORMAT, "hill_climb: a saved state it did not write");
    text += used;
    h->made = made;
    h->ended = ended;
    h->cap = (size_t)made + 16;
    free(h->x);
    if (!(h->x = malloc(h->cap * (h->np ? h->np : 1) * sizeof *h->x))) return t2_seterr(T2_ENOMEM, "hill_climb: out of memory");
    for (size_t i = 0; i < h->np + (size_t)made * h->np; i++) {
        double *dst = i < h->np ? &h->best_x[i] : &h->x[i - h->np];
        if (sscanf(text, " %la%n", dst, &used) != 1) return t2_seterr(T2_EFORMAT, "hill_climb: the saved state is cut short");
        text += used;
    }
    return T2_OK;
}

static void destroy(void *state)
{
    hill *h = state;
    if (h) free(h->x);
    free(h);
}

T2_SEARCHER(.name = "hill_climb", .init = init, .start = start, .on_validation = on_validation,
            .on_trial_exited = on_trial_exited, .on_trial_failed = on_trial_failed, .progress = progress,
            .save = save, .load = load, .destroy = destroy);
