/* api.h — the dashboard's /api answers, computed from the store (internal). */
#ifndef T2_DASHBOARD_API_H
#define T2_DASHBOARD_API_H

#include <stddef.h>
#include "store/store.h"

typedef struct t2__dash_reply {
    int status;              /* HTTP status */
    const char *type;        /* Content-Type */
    char *body;              /* malloc'd */
    size_t len;
    char next_offset[24];    /* logs: the X-Next-Offset header ("" otherwise) */
} t2__dash_reply;

/* A query-string argument by name, or NULL. */
typedef const char *(*t2__dash_arg_fn)(void *ctx, const char *name);

/* Answers GET /api/PATH (path without the "/api/" prefix). Endpoints:
 *   version                         {"data_version": N}, which changes whenever the store does
 *   experiments                     = t2exp list --json
 *   experiments/ID[?top=N]          = t2exp describe ID [--top N] --json
 *   experiments/ID/trials           = t2exp trials ID --json
 *   experiments/ID/metrics[?kind=]  = t2exp metrics ID [--kind K] --json
 *   experiments/ID/config           the stored config (text/plain)
 *   trials/TID                      the trial's row as in trials --json, plus experiment_id
 *   trials/TID/metrics[?kind=]      = t2exp metrics TID [--kind K] --json
 *   trials/TID/checkpoints          = t2exp checkpoints TID --json
 *   trials/TID/log?offset=N         up to 64 KiB of the log from byte N; X-Next-Offset
 * TID is a trial id or EXP.N. Unknown things are 404, bad arguments 400, with {"error": why}.
 * Returns T2_OK with r filled (free r->body), or a negative code for the store's own trouble. */
int t2__dash_api(t2__store *st, const char *path, t2__dash_arg_fn arg, void *arg_ctx, t2__dash_reply *r);
/* Frees the answers t2__dash_api keeps (importance's, while the store is unchanged). */
void t2__dash_api_cache_free(void);

#endif
