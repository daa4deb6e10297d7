/* status.c — `t2exp pipeline status FLOW`: what a run would do, without running anything.
 *
 * Each stage is compared with its last successful run by the same rule the executor uses
 * (cache.c), in topological order; a stage whose dependency is not up to date is reported stale
 * ("upstream X is stale") since running the flow would rerun that dependency first. References
 * resolve to the results recorded by the last successful runs. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"
#include "run.h"
#include "store/store_pipeline.h"
#include "t2exp/error.h"

typedef struct status_ctx {
    t2__val **results;
} status_ctx;

static const t2__val *lookup(void *ud, size_t i) { return ((status_ctx *)ud)->results[i]; }

typedef struct row {
    const char *status;
    char detail[1400];
    int64_t last_run;
} row;

static int stage_status(const t2__flow *f, t2__store *st, size_t i, status_ctx *sc, const unsigned char *stale,
                        row *out)
{
    const t2__flow_stage *s = &f->stages[i];
    t2__stage_run_row any, ok;
    int have_any = 0, have_ok = 0, rc = 0;
    if (st) {
        rc = t2__store_last_stage_run(st, f->name, s->name, 0, &any);
        if (rc && rc != T2_ENOTFOUND) return rc;
        have_any = rc == 0;
        rc = t2__store_last_stage_run(st, f->name, s->name, 1, &ok);
        if (rc && rc != T2_ENOTFOUND) {
            if (have_any) t2__stage_run_row_free(&any);
            return rc;
        }
        have_ok = rc == 0;
        rc = 0;
    }
    out->last_run = have_any ? any.run_id : 0;
    if (!have_ok) {
        if (have_any && !strcmp(any.state, "FAILED")) {
            out->status = "failed last time";
            snprintf(out->detail, sizeof out->detail, "run %lld: %s", (long long)any.run_id,
                     any.error ? any.error : "failed");
        } else {
            out->status = "never run";
            if (have_any)
                snprintf(out->detail, sizeof out->detail, "its last run (run %lld) was %s", (long long)any.run_id,
                         any.state);
        }
        goto done;
    }
    if (ok.result_json && t2__val_from_json(ok.result_json, strlen(ok.result_json), &sc->results[i], NULL))
        sc->results[i] = NULL;
    t2__stage_check c;
    int crc = t2__stage_check_run(f, i, lookup, sc, &ok, &c);
    const char *upstream = NULL;
    for (size_t d = 0; d < s->ndeps && !upstream; d++)
        if (stale[s->deps[d]]) upstream = f->stages[s->deps[d]].name;
    if (crc) {
        out->status = "stale";
        /* "stage NAME: " is the row's own name: leave it out */
        const char *m = t2_errmsg();
        size_t pl = strlen(s->name) + 8;
        if (!strncmp(m, "stage ", 6) && strlen(m) > pl) m += pl;
        snprintf(out->detail, sizeof out->detail, "%s", m);
    } else if (!c.up_to_date) {
        out->status = "stale";
        snprintf(out->detail, sizeof out->detail, "%s", c.why);
    } else if (upstream) {
        out->status = "stale";
        snprintf(out->detail, sizeof out->detail, "upstream %s is stale", upstream);
    } else {
        out->status = "up to date";
        snprintf(out->detail, sizeof out->detail, "as of run %lld", (long long)ok.run_id);
    }
    if (!crc) t2__stage_check_free(&c, s->argc);
    if (have_any && any.id != ok.id && !strcmp(any.state, "FAILED")) {
        size_t n = strlen(out->detail);
        snprintf(out->detail + n, sizeof out->detail - n, "; failed last time (run %lld)", (long long)any.run_id);
    }
done:
    if (have_any) t2__stage_run_row_free(&any);
    if (have_ok) t2__stage_run_row_free(&ok);
    return rc;
}

static int print_json(const t2__flow *f, const row *rows, FILE *out)
{
    t2__val *a = t2__val_list();
    int rc = a ? 0 : T2_ENOMEM;
    for (size_t k = 0; !rc && k < f->n; k++) {
        size_t i = f->order[k];
        t2__val *o = t2__val_map();
        rc = o ? 0 : T2_ENOMEM;
        if (!rc) rc = t2__val_map_set(o, "stage", t2__val_string(f->stages[i].name));
        if (!rc)
            rc = t2__val_map_set(o, "kind", t2__val_string(f->stages[i].kind == T2__STAGE_COMMAND ? "command"
                                                                                                 : "experiment"));
        if (!rc) rc = t2__val_map_set(o, "status", t2__val_string(rows[i].status));
        if (!rc) rc = t2__val_map_set(o, "detail", t2__val_string(rows[i].detail));
        if (!rc) rc = t2__val_map_set(o, "last_run", rows[i].last_run ? t2__val_int(rows[i].last_run) : t2__val_null());
        if (!rc) rc = t2__val_list_append(a, o);
        else t2__val_free(o);
    }
    char *json = NULL;
    if (!rc) rc = t2__val_to_json(a, &json, NULL);
    t2__val_free(a);
    if (rc) return t2_seterr(rc, "pipeline status: out of memory");
    fprintf(out, "%s\n", json);
    free(json);
    return 0;
}

int t2__pipeline_status(const char *flow_path, const char *home, t2__store_format fmt, FILE *out)
{
    t2__flow *f = NULL;
    int rc = t2__flow_load(flow_path, &f);
    if (rc) return rc;
    char h[4096];
    t2__store *st = NULL;
    status_ctx sc = {0};
    row *rows = calloc(f->n, sizeof *rows);
    unsigned char *stale = calloc(f->n, 1);
    sc.results = calloc(f->n, sizeof *sc.results);
    if (!rows || !stale || !sc.results) {
        rc = t2_seterr(T2_ENOMEM, "pipeline status: out of memory");
        goto done;
    }
    if ((rc = t2__store_home(home, h, sizeof h))) goto done;
    rc = t2__store_open(h, 1, &st);
    if (rc == T2_ENOTFOUND) rc = 0; /* nothing recorded yet: every stage never ran */
    if (rc) goto done;
    for (size_t k = 0; !rc && k < f->n; k++) {
        size_t i = f->order[k];
        rc = stage_status(f, st, i, &sc, stale, &rows[i]);
        stale[i] = !rc && strcmp(rows[i].status, "up to date") != 0;
    }
    if (rc) goto done;
    if (fmt == T2__FMT_JSON) {
        rc = print_json(f, rows, out);
        goto done;
    }
    size_t w = 5;
    for (size_t i = 0; i < f->n; i++)
        if (strlen(f->stages[i].name) > w) w = strlen(f->stages[i].name);
    fprintf(out, "pipeline %s (%s)\n", f->name, flow_path);
    fprintf(out, "%-*s  %-10s  %-16s  %s\n", (int)w, "stage", "kind", "status", "detail");
    for (size_t k = 0; k < f->n; k++) {
        size_t i = f->order[k];
        t2__store_printable(rows[i].detail, strlen(rows[i].detail));
        fprintf(out, "%-*s  %-10s  %-16s  %s\n", (int)w, f->stages[i].name,
                f->stages[i].kind == T2__STAGE_COMMAND ? "command" : "experiment", rows[i].status, rows[i].detail);
    }
    if (ferror(out)) rc = t2_seterr(T2_EIO, "pipeline status: cannot write the output");
done:
    for (size_t i = 0; sc.results && i < f->n; i++) t2__val_free(sc.results[i]);
    free(sc.results);
    free(rows);
    free(stale);
    if (st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        t2__store_close(st);
        t2_seterr(rc, "%s", msg);
    }
    t2__flow_free(f);
    return rc;
}
