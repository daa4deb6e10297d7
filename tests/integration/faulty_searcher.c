/* faulty_searcher.c — a custom searcher (t2exp/searcher.h) for search_custom.sh that breaks the
 * rules on purpose, as searcher.options.mode says:
 *   ok          two trials, each trained to max_length in two steps (half, then all), then closed
 *   past_max    trains trial 0 past max_length
 *   bad_point   sets x outside its range
 *   close_twice closes trial 0 twice
 *   outside     issues an operation from init, outside any event
 *   fail_file   on_validation fails while the file options.file exists (the resume after its
 *               removal must finish the search)
 *   binary      as ok, with a saved state that is no UTF-8 (bytes 0xff 0x01, then the count)
 *   close_first creates trial 0 and closes it before it ran, then creates trial 1 and trains it:
 *               the exit of 0 comes inside the event, and fails while options.file exists
 *   invalid     trial 0 at x = 4 (the config's invalid_above makes its hparams invalid); its
 *               failure, told with invalid_hparams, draws a replacement at x = 0 (told without,
 *               nothing); on_trial_failed fails while options.file exists
 * Built without -DWITH_LOAD it lacks load, and the library is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <t2exp/searcher.h>

typedef struct st {
    const char *mode, *file;
    int closed;
} st;

static int init(t2_search *s, void **state)
{
    st *x = calloc(1, sizeof *x);
    if (!x) return T2_ENOMEM;
    *state = x;
    if (t2_search_option_text(s, "mode", &x->mode)) return t2_seterr(T2_EINVAL, "faulty: options.mode is required");
    if (t2_search_option_text(s, "file", &x->file)) x->file = NULL;
    if (!strcmp(x->mode, "outside")) return t2_search_create(s, NULL, NULL);
    return T2_OK;
}

/* Trial `seed`'s point with x fixed, trained to max_length. */
static int create_at(t2_search *s, uint64_t seed, double at)
{
    t2_point *p = NULL;
    int64_t id;
    int rc = t2_search_sample(s, seed, &p);
    if (!rc) rc = t2_point_set_double(p, "x", at);
    if (rc) {
        t2_point_free(p);
        return rc;
    }
    if ((rc = t2_search_create(s, p, &id))) return rc;
    return t2_search_train(s, id, t2_search_max_length(s));
}

static int start(t2_search *s, void *state)
{
    st *x = state;
    if (!strcmp(x->mode, "invalid")) return create_at(s, 0, 4);
    if (!strcmp(x->mode, "close_first")) {
        int64_t a, b;
        int rc = t2_search_create(s, NULL, &a);
        if (!rc) rc = t2_search_close(s, a);
        if (!rc) rc = t2_search_create(s, NULL, &b);
        return rc ? rc : t2_search_train(s, b, t2_search_max_length(s));
    }
    int64_t half = t2_search_max_length(s) / 2, id;
    for (int k = 0; k < 2; k++) {
        t2_point *p = NULL;
        int rc = t2_search_sample(s, (uint64_t)k, &p);
        if (!rc && !strcmp(x->mode, "bad_point")) rc = t2_point_set_double(p, "x", 7);
        if (rc) {
            t2_point_free(p);
            return rc;
        }
        if ((rc = t2_search_create(s, p, &id))) return rc;
        if (!strcmp(x->mode, "past_max")) half = t2_search_max_length(s) + 1;
        if ((rc = t2_search_train(s, id, half > 0 ? half : 1))) return rc;
    }
    return T2_OK;
}

static int on_validation(t2_search *s, void *state, int64_t rid, double metric, int64_t length)
{
    (void)metric;
    st *x = state;
    if (x->file && access(x->file, F_OK) == 0) return t2_seterr(T2_EINVAL, "faulty: refusing while %s exists", x->file);
    if (length < t2_search_max_length(s)) return t2_search_train(s, rid, t2_search_max_length(s));
    int rc = t2_search_close(s, rid);
    if (!rc && !strcmp(x->mode, "close_twice")) rc = t2_search_close(s, rid);
    return rc;
}

static int on_trial_exited(t2_search *s, void *state, int64_t rid)
{
    (void)s, (void)rid;
    st *x = state;
    if (!strcmp(x->mode, "close_first") && x->file && access(x->file, F_OK) == 0)
        return t2_seterr(T2_EINVAL, "faulty: no exit while %s exists", x->file);
    x->closed++;
    return T2_OK;
}

static int on_trial_failed(t2_search *s, void *state, int64_t rid, int invalid)
{
    st *x = state;
    if (!strcmp(x->mode, "invalid")) {
        if (x->file && access(x->file, F_OK) == 0) return t2_seterr(T2_EINVAL, "faulty: no failure while %s exists", x->file);
        /* As random and TPE do: unusable hparams are replaced by a new draw, once here. */
        int rc = invalid && rid == 0 ? create_at(s, 1, 0) : T2_OK;
        if (rc) return rc;
    }
    return on_trial_exited(s, state, rid);
}

static int save(t2_search *s, void *state, char **text)
{
    (void)s;
    *text = malloc(32);
    if (!*text) return T2_ENOMEM;
    st *x = state;
    snprintf(*text, 32, "%s%d", !strcmp(x->mode, "binary") ? "\xff\x01" : "", x->closed);
    return T2_OK;
}

#ifdef WITH_LOAD
static int load(t2_search *s, void *state, const char *text)
{
    (void)s;
    st *x = state;
    if (!strcmp(x->mode, "binary") && strncmp(text, "\xff\x01", 2) != 0)
        return t2_seterr(T2_EFORMAT, "faulty: the binary state came back as other bytes");
    return sscanf(text + (!strcmp(x->mode, "binary") ? 2 : 0), "%d", &x->closed) == 1
               ? T2_OK
               : t2_seterr(T2_EFORMAT, "faulty: bad state");
}
#endif

static void destroy(void *state) { free(state); }

T2_SEARCHER(.name = "faulty", .init = init, .start = start, .on_validation = on_validation,
            .on_trial_exited = on_trial_exited, .on_trial_failed = on_trial_failed, .save = save,
#ifdef WITH_LOAD
            .load = load,
#endif
            .destroy = destroy);
