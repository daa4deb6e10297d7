/* api.c — the dashboard's JSON answers: each is what the CLI prints with --json for the same
 * question (the same store functions write both), so scripts can use either. */
#define _POSIX_C_SOURCE 200809L
#include "api.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "configs/value.h"
#include "framework/cli/importance.h"
#include "internal.h"

/* The most log bytes one answer carries; the page asks again from X-Next-Offset. */
#define LOG_CHUNK (64 * 1024)

static int reply_text(t2__dash_reply *r, int status, const char *type, char *body, size_t len)
{
    r->status = status;
    r->type = type;
    r->body = body;
    r->len = len;
    return T2_OK;
}

static int reply_error(t2__dash_reply *r, int status, const char *why)
{
    /* A JSON string: the reason's quotes and controls escaped by the codec. */
    t2__val *m = t2__val_map();
    char *json = NULL;
    size_t len = 0;
    if (!m || t2__val_map_set(m, "error", t2__val_string(why)) || t2__val_to_json(m, &json, &len)) {
        t2__val_free(m);
        return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
    }
    t2__val_free(m);
    return reply_text(r, status, "application/json", json, len);
}

/* Runs one of the store's printers into memory. */
typedef int (*printer)(t2__store *st, const void *arg, FILE *out);

static int reply_printed(t2__dash_reply *r, t2__store *st, printer p, const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
    int rc = p(st, arg, f);
    if (fclose(f) != 0 && !rc) rc = t2_seterr(T2_ENOMEM, "dashboard: out of memory");
    if (rc) {
        free(buf);
        char why[600];
        snprintf(why, sizeof why, "%s", t2_errmsg());
        t2_clearerr();
        if (rc == T2_ENOTFOUND || rc == T2_EINVAL) return reply_error(r, rc == T2_ENOTFOUND ? 404 : 400, why);
        /* A fair question the store cannot answer yet (importance of fewer than 2 trials). */
        if (rc == T2_ESTATE) return reply_error(r, 409, why);
        return rc;
    }
    return reply_text(r, 200, "application/json", buf, len);
}

typedef struct query {
    int64_t id;
    const char *kind;
    long top;
    char name[256]; /* models/NAME */
} query;

static int p_models(t2__store *st, const void *a, FILE *o)
{
    (void)a;
    return t2__store_print_models(st, T2__FMT_JSON, o);
}
static int p_model(t2__store *st, const void *a, FILE *o)
{
    return t2__store_print_model(st, ((const query *)a)->name, T2__FMT_JSON, o);
}

static int p_experiments(t2__store *st, const void *a, FILE *o)
{
    (void)a;
    return t2__store_print_experiments(st, T2__FMT_JSON, o);
}
static int p_experiment(t2__store *st, const void *a, FILE *o)
{
    const query *q = a;
    return t2__store_print_experiment(st, q->id, q->top, T2__FMT_JSON, o);
}
static int p_trials(t2__store *st, const void *a, FILE *o)
{
    return t2__store_print_trials(st, ((const query *)a)->id, T2__FMT_JSON, o);
}
static int p_exp_metrics(t2__store *st, const void *a, FILE *o)
{
    const query *q = a;
    return t2__store_print_experiment_metrics(st, q->id, q->kind, T2__FMT_JSON, o);
}
static int p_trial_metrics(t2__store *st, const void *a, FILE *o)
{
    const query *q = a;
    return t2__store_print_metrics(st, q->id, q->kind, T2__FMT_JSON, o);
}
static int p_importance(t2__store *st, const void *a, FILE *o)
{
    return t2__print_importance(st, ((const query *)a)->id, T2__FMT_JSON, o);
}

/* Importance answers, kept while the store is unchanged (PRAGMA data_version: no other
 * connection committed since). It fits a random forest: 2.2 s on a finished 10,000-trial
 * experiment, each time, on the server's one thread, with every other request waiting behind it
 * (probe_J). A few experiments' answers are kept; the oldest goes first. */
enum { IMPORTANCE_CACHED = 8 };
static struct cached_reply {
    int64_t id, version;
    int status;
    char *body;
    size_t len;
} importance_cache[IMPORTANCE_CACHED];
static size_t importance_next;

void t2__dash_api_cache_free(void)
{
    for (size_t k = 0; k < IMPORTANCE_CACHED; k++) {
        free(importance_cache[k].body);
        importance_cache[k] = (struct cached_reply){0};
    }
}

static char *copy_of(const char *p, size_t len)
{
    char *c = malloc(len ? len : 1);
    if (c && len) memcpy(c, p, len);
    return c;
}

static int importance(t2__dash_reply *r, t2__store *st, const query *q)
{
    int64_t version = 0;
    int rc = t2__store_data_version(st, &version);
    if (rc) return rc;
    for (size_t k = 0; k < IMPORTANCE_CACHED; k++) {
        const struct cached_reply *c = &importance_cache[k];
        if (c->body && c->id == q->id && c->version == version) {
            char *body = copy_of(c->body, c->len);
            if (!body) return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
            return reply_text(r, c->status, "application/json", body, c->len);
        }
    }
    if ((rc = reply_printed(r, st, p_importance, q))) return rc;
    if (r->status != 200 && r->status != 409) return T2_OK; /* kept: answers that stand while nothing changes */
    struct cached_reply *c = &importance_cache[importance_next];
    char *body = copy_of(r->body, r->len);
    if (!body) return T2_OK; /* not kept: the answer itself is fine */
    free(c->body);
    *c = (struct cached_reply){.id = q->id, .version = version, .status = r->status, .body = body, .len = r->len};
    importance_next = (importance_next + 1) % IMPORTANCE_CACHED;
    return T2_OK;
}
static int p_trial_checkpoints(t2__store *st, const void *a, FILE *o)
{
    return t2__store_print_checkpoints(st, 0, ((const query *)a)->id, 0, T2__FMT_JSON, o);
}
static int p_trial(t2__store *st, const void *a, FILE *o)
{
    static const char sql[] = "SELECT ordinal AS trial, id, experiment_id, state, hparams, restarts,"
                              " batches_trained AS batches, target_length_batches AS target_batches, best_validation,"
                              " latest_validation, hosts, error,"
                              /* Whether a live controller runs its experiment (liveness.c), and the
                               * experiment's state, so the trial page can say RUNNING (no controller)
                               * and QUEUED (experiment ERRORED) as its experiment's table does. */
                              " (SELECT t2_controller_alive(e.controller_pid, e.controller_token) FROM experiments e"
                              " WHERE e.id = trials.experiment_id) AS controller_running,"
                              " (SELECT e.state FROM experiments e WHERE e.id = trials.experiment_id) AS experiment_state"
                              " FROM trials WHERE id = :id";
    static const t2__store_colspec cols[] = {{"hparams", T2__COL_JSON}, {NULL, T2__COL_AUTO}};
    t2__store_param p = {.name = ":id", .type = T2__P_INT, .i = ((const query *)a)->id};
    return t2__store_print_query(st, sql, &p, 1, cols, T2__FMT_JSON, o);
}

/* A whole number in text, no sign, no junk; -1 otherwise. */
static int64_t number(const char *s, size_t n)
{
    if (n == 0 || n > 18) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

static int experiment_config(t2__dash_reply *r, t2__store *st, int64_t id)
{
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    int rc = t2__store_get_experiment(st, id, &row);
    if (rc == T2_ENOTFOUND) {
        t2_clearerr();
        return reply_error(r, 404, "no such experiment");
    }
    char *text = rc ? NULL : strdup(row.config_yaml ? row.config_yaml : "");
    t2__experiment_row_free(&row);
    if (rc) return rc;
    if (!text) return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
    return reply_text(r, 200, "text/plain; charset=utf-8", text, strlen(text));
}

/* Bytes of the trial's log (its stream: trial_log.c) from offset (capped); X-Next-Offset says
 * where the next ask starts. An offset past the end answers nothing and points back at the end
 * (a page that kept asking from there would never see the log's new lines). A piece that cannot
 * be read ends the answer where it starts. */
static int trial_log(t2__dash_reply *r, t2__store *st, int64_t id, const char *offset_text)
{
    long long offset = 0;
    if (offset_text && (offset = number(offset_text, strlen(offset_text))) < 0)
        return reply_error(r, 400, "offset must be a whole number of bytes");
    t2__trial_log l;
    int rc = t2__trial_log_open(st, id, &l);
    if (rc == T2_ENOTFOUND) {
        t2_clearerr();
        return reply_error(r, 404, "no such trial");
    }
    if (rc) return rc;
    char *buf = malloc(LOG_CHUNK);
    if (!buf) {
        t2__trial_log_free(&l);
        return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
    }
    size_t got = 0;
    int64_t size;
    if (t2__trial_log_read(&l, offset, buf, LOG_CHUNK, &got, &size)) t2_clearerr();
    else if (offset > size) offset = size;
    t2__trial_log_free(&l);
    snprintf(r->next_offset, sizeof r->next_offset, "%lld", offset + (long long)got);
    return reply_text(r, 200, "text/plain; charset=utf-8", buf, got);
}

int t2__dash_api(t2__store *st, const char *path, t2__dash_arg_fn arg, void *arg_ctx, t2__dash_reply *r)
{
    memset(r, 0, sizeof *r);
    query q = {.kind = arg(arg_ctx, "kind")};
    if (q.kind && strcmp(q.kind, "training") != 0 && strcmp(q.kind, "validation") != 0)
        return reply_error(r, 400, "kind must be training or validation");
    const char *top = arg(arg_ctx, "top");
    if (top && (q.top = (long)number(top, strlen(top))) < 0) return reply_error(r, 400, "top must be a count");
    if (strcmp(path, "version") == 0) {
        int64_t v = 0;
        int rc = t2__store_data_version(st, &v);
        if (rc) return rc;
        char *body = malloc(48);
        if (!body) return t2_seterr(T2_ENOMEM, "dashboard: out of memory");
        int n = snprintf(body, 48, "{\"data_version\":%lld}", (long long)v);
        return reply_text(r, 200, "application/json", body, (size_t)n);
    }
    if (strcmp(path, "experiments") == 0) return reply_printed(r, st, p_experiments, &q);
    /* models, models/NAME: the registry (t2exp model list, describe NAME). */
    if (strcmp(path, "models") == 0) return reply_printed(r, st, p_models, &q);
    if (strncmp(path, "models/", 7) == 0) {
        if (t2__model_name_check(path + 7)) {
            t2_clearerr();
            return reply_error(r, 404, "no such model");
        }
        snprintf(q.name, sizeof q.name, "%s", path + 7);
        return reply_printed(r, st, p_model, &q);
    }
    /* experiments/ID[/trials|/metrics|/config|/importance], trials/TID[/metrics|/checkpoints|/log] */
    const char *rest = NULL;
    int trial = 0;
    if (strncmp(path, "experiments/", 12) == 0) rest = path + 12;
    else if (strncmp(path, "trials/", 7) == 0) rest = path + 7, trial = 1;
    if (!rest) return reply_error(r, 404, "no such endpoint");
    const char *slash = strchr(rest, '/');
    size_t idlen = slash ? (size_t)(slash - rest) : strlen(rest);
    const char *what = slash ? slash + 1 : "";
    char ref[48];
    if (idlen == 0 || idlen >= sizeof ref) return reply_error(r, 404, "no such endpoint");
    memcpy(ref, rest, idlen);
    ref[idlen] = '\0';
    if (!trial) {
        if ((q.id = number(ref, idlen)) < 0) return reply_error(r, 400, "an experiment id is a number");
        if (!*what) return reply_printed(r, st, p_experiment, &q);
        if (strcmp(what, "trials") == 0) return reply_printed(r, st, p_trials, &q);
        if (strcmp(what, "metrics") == 0) return reply_printed(r, st, p_exp_metrics, &q);
        if (strcmp(what, "config") == 0) return experiment_config(r, st, q.id);
        if (strcmp(what, "importance") == 0) return importance(r, st, &q);
        return reply_error(r, 404, "no such endpoint");
    }
    /* A trial: its store id, or EXP.N as the CLI takes it. */
    int rc = t2__store_resolve_trial(st, ref, &q.id);
    if (rc) {
        char why[300];
        snprintf(why, sizeof why, "%s", t2_errmsg());
        t2_clearerr();
        return reply_error(r, rc == T2_ENOTFOUND ? 404 : 400, why);
    }
    if (!*what) {
        int prc = reply_printed(r, st, p_trial, &q);
        /* One row as an object, not a list of one. */
        if (!prc && r->status == 200 && r->len >= 2 && r->body[0] == '[') {
            char *end = strrchr(r->body, ']');
            if (end && end > r->body + 1) {
                size_t n = (size_t)(end - r->body) - 1;
                memmove(r->body, r->body + 1, n);
                r->len = n;
            }
        }
        return prc;
    }
    if (strcmp(what, "metrics") == 0) return reply_printed(r, st, p_trial_metrics, &q);
    if (strcmp(what, "checkpoints") == 0) return reply_printed(r, st, p_trial_checkpoints, &q);
    if (strcmp(what, "log") == 0) return trial_log(r, st, q.id, arg(arg_ctx, "offset"));
    return reply_error(r, 404, "no such endpoint");
}
