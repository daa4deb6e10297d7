/* lost_runs.c — output of an experiment's runs that no trial in the store owns: runs a killed
 * controller's last batch took with it (`t2exp logs EXP --lost`).
 *
 * Why: a killed controller loses up to flush_ms of its writes, the rows of the trials it made in
 * that time among them; a resume makes those trials again (their ids too). Their runs' output
 * stays where it was written: in a worker's log, where the worker's own record (log_runs.c) says
 * where each run starts, and in a lost trial's own log file, which a new trial with its id moves
 * aside as trial-ID.log.lost-K (event_loop.c). `t2exp logs` of a trial shows its stored runs only;
 * this finds the rest:
 * - a worker log's recorded run whose start no stored segment of the file has;
 * - a set-aside trial-ID.log.lost-K;
 * - a trial-ID.log whose id no trial of the experiment has (not yet set aside).
 * The id a lost run had may name another trial now: the listing says so. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "store_internal.h"
#include "t2exp/error.h"

static const char SQL_STARTS[] = "SELECT s.start FROM trial_log_segments s JOIN trials t ON t.id = s.trial_id"
                                 " WHERE t.experiment_id = ?1 AND s.path = ?2 ORDER BY s.start";
static const char SQL_OWNED[] = "SELECT count(*) FROM trials WHERE id = ?1 AND experiment_id = ?2";

typedef struct {
    t2__lost_run *v;
    size_t n, cap;
} lost_list;

static int add(lost_list *l, const char *path, int64_t start, int64_t end, int64_t trial_id, int order, int64_t key)
{
    t2__lost_run *nv = t2__grow_array(l->v, &l->cap, l->n, sizeof *l->v, 8);
    char *p = nv ? strdup(path) : NULL;
    if (!p) return t2_seterr(T2_ENOMEM, "logs: out of memory");
    l->v = nv;
    l->v[l->n++] = (t2__lost_run){.seg = {.path = p, .start = start, .end = end}, .trial_id = trial_id,
                                  .order = order, .key = key};
    return T2_OK;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The starts the store has for segments of the file at path, in order, into a malloc'd array. */
static int stored_starts(t2__store *st, int64_t exp, const char *path, int64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_STARTS, &s), src;
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, exp);
    b = b ? b : sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
    if (b != SQLITE_OK) return t2__store_err(st, b, "bind");
    size_t cap = 0;
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        int64_t *nv = t2__grow_array(*out, &cap, *n, sizeof **out, 64);
        if (!nv) {
            rc = t2_seterr(T2_ENOMEM, "logs: out of memory");
            break;
        }
        *out = nv;
        (*out)[(*n)++] = sqlite3_column_int64(s, 0);
    }
    if (!rc && src != SQLITE_DONE) rc = t2__store_err(st, src, "read log segments");
    sqlite3_reset(s);
    return rc;
}

typedef struct {
    const char *log;
    int index;
    int64_t size;          /* the log's bytes now */
    const int64_t *starts; /* the stored segments' starts in it, sorted */
    size_t nstarts;
    lost_list *l;
    int rc;
} worker_walk;

static int lost_if_unstored(void *ctx, const t2__log_run *run, int64_t next)
{
    worker_walk *w = ctx;
    int64_t start = run->start, end = next >= 0 ? next : w->size;
    if (start < 0 || start >= end || start >= w->size) return 0; /* nothing written */
    if (w->nstarts && bsearch(&start, w->starts, w->nstarts, sizeof *w->starts, cmp_i64)) return 0; /* stored */
    if ((w->rc = add(w->l, w->log, start, end, run->trial_id, w->index, start))) return 1;
    return 0;
}

/* A worker log's recorded runs (log_runs.c) that the store has no segment for. */
static int worker_log(t2__store *st, int64_t exp, const char *log, int index, lost_list *l)
{
    struct stat ls;
    if (stat(log, &ls) != 0) return T2_OK;
    int64_t *starts = NULL;
    size_t ns = 0;
    int rc = stored_starts(st, exp, log, &starts, &ns);
    if (rc) return rc;
    worker_walk w = {.log = log, .index = index, .size = (int64_t)ls.st_size, .starts = starts,
                     .nstarts = ns, .l = l};
    /* An unreadable record file: every run it had is in the store, or none can be told apart. */
    (void)t2__log_runs_each(log, lost_if_unstored, &w);
    free(starts);
    return w.rc;
}

static int owned(t2__store *st, int64_t exp, int64_t trial, int *yes)
{
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_OWNED, &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, trial);
    b = b ? b : sqlite3_bind_int64(s, 2, exp);
    if (b != SQLITE_OK) return t2__store_err(st, b, "bind");
    int src = sqlite3_step(s);
    if (src == SQLITE_ROW) *yes = sqlite3_column_int64(s, 0) > 0;
    else rc = t2__store_err(st, src, "read trials");
    sqlite3_reset(s);
    return rc;
}

static int by_place(const void *a, const void *b)
{
    const t2__lost_run *x = a, *y = b;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return strcmp(x->seg.path, y->seg.path);
}

void t2__lost_runs_free(t2__lost_run *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i].seg.path);
    free(v);
}

int t2__store_lost_runs(t2__store *st, int64_t experiment_id, t2__lost_run **out, size_t *n)
{
    if (!st || !out || !n) return t2_seterr(T2_EINVAL, "store: lost_runs: NULL argument");
    *out = NULL;
    *n = 0;
    t2__experiment_row row;
    int rc = t2__store_get_experiment(st, experiment_id, &row);
    if (rc) return rc;
    t2__experiment_row_free(&row);
    char dir[PATH_MAX - 300];
    if ((rc = t2__store_experiment_dir(t2__store_home_of(st), experiment_id, NULL, dir, sizeof dir))) return rc;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT ? T2_OK : t2_seterr(T2_EIO, "logs: cannot read %s: %s", dir, strerror(errno));
    lost_list l = {0};
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        char path[PATH_MAX];
        int index, k, used = 0;
        long long id;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        if (sscanf(e->d_name, "worker-%d.log%n", &index, &used) == 1 && used > 0 && !e->d_name[used] && index >= 0) {
            rc = worker_log(st, experiment_id, path, index, &l);
        } else if (sscanf(e->d_name, "trial-%lld.log.lost-%d%n", &id, &k, &used) == 2 && !e->d_name[used]) {
            rc = add(&l, path, 0, -1, id, INT_MAX - 1, (int64_t)id * 1000 + k);
        } else if (sscanf(e->d_name, "trial-%lld.log%n", &id, &used) == 1 && used > 0 && !e->d_name[used] && id > 0) {
            int yes = 1;
            if (!(rc = owned(st, experiment_id, id, &yes)) && !yes)
                rc = add(&l, path, 0, -1, id, INT_MAX, (int64_t)id);
        }
    }
    closedir(d);
    if (rc) {
        t2__lost_runs_free(l.v, l.n);
        return rc;
    }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, by_place);
    *out = l.v;
    *n = l.n;
    return T2_OK;
}
