/* store_logs.c — where each run of a trial left its output: from a byte offset of the log it
 * appended to (a long-lived worker's, or the trial's own for a run in its own process or through
 * mpirun; schema 10's trial_log_segments) to the next run's start in the same file, or its end.
 * `t2exp logs` reads them back in run order. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "store_internal.h"
#include "t2exp/error.h"

static int bind_segment(sqlite3_stmt *s, int o, const t2__store_rec *r)
{
    int b = sqlite3_bind_int64(s, o + 1, r->id);
    b = b ? b : sqlite3_bind_text(s, o + 2, r->s1, -1, SQLITE_STATIC);
    return b ? b : sqlite3_bind_int64(s, o + 3, r->i[0]);
}

const t2__rows_insert t2__segment_rows = {
    T2__REC_SEGMENT, T2__ROWS_SEGMENTS, "INSERT INTO trial_log_segments (trial_id, path, start) VALUES", "", 3, bind_segment,
    "add log segment"};

int t2__store_add_log_segment(t2__store *st, int64_t trial_id, const char *path, int64_t start)
{
    if (!st || !path || !*path || start < 0)
        return t2_seterr(T2_EINVAL, "store: add_log_segment: needs a store, a path and an offset >= 0");
    t2__store_rec r = {.kind = T2__REC_SEGMENT, .id = trial_id, .i = {start}, .s1 = path};
    if (t2__store_queues(st)) return t2__store_async_put(st, &r, path, NULL);
    const t2__store_rec *v = &r;
    return t2__store_insert_recs(st, &t2__segment_rows, &v, 1);
}

/* A segment ends where the next one in the same file starts (by row order: the file is
 * append-only and its runs are sequential), or earlier at the next start its worker recorded. A
 * read, so no index on path: a scan of the table's rows per segment, milliseconds for 100,000
 * trials, rather than a cost on every trial's insert. */
static const char SQL_SEGMENTS[] =
    "SELECT s.path, s.start,"
    " (SELECT n.start FROM trial_log_segments n WHERE n.path = s.path AND n.id > s.id ORDER BY n.id LIMIT 1)"
    " FROM trial_log_segments s WHERE s.trial_id = ?1 ORDER BY s.id";

void t2__log_segments_free(t2__log_segment *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i].path);
    free(v);
}

int t2__store_log_segments(t2__store *st, int64_t trial_id, t2__log_segment **segs, size_t *n)
{
    if (!st || !segs || !n) return t2_seterr(T2_EINVAL, "store: log_segments: NULL argument");
    *segs = NULL;
    *n = 0;
    sqlite3_stmt *s;
    int rc = t2__store_stmt(st, SQL_SEGMENTS, &s);
    if (rc) return rc;
    if ((rc = sqlite3_bind_int64(s, 1, trial_id)) != SQLITE_OK) return t2__store_err(st, rc, "bind");
    t2__log_segment *v = NULL;
    size_t cnt = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(s)) == SQLITE_ROW) {
        t2__log_segment *nv = t2__grow_array(v, &cap, cnt, sizeof *v, 4);
        if (!nv) {
            rc = t2_seterr(T2_ENOMEM, "store: out of memory reading trial %" PRId64 "'s log segments", trial_id);
            break;
        }
        v = nv;
        v[cnt].path = t2__store_col_text(s, 0, &rc);
        if (rc) break;
        v[cnt].start = sqlite3_column_int64(s, 1);
        v[cnt].end = sqlite3_column_type(s, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 2);
        if (v[cnt].end < v[cnt].start) v[cnt].end = -1; /* the file was replaced since: its end */
        /* A worker's segment also ends at the next run start the worker itself recorded: the
         * store may have lost that run's segment with a killed controller's batch (log_runs.c). */
        int64_t next = t2__log_runs_next(v[cnt].path, v[cnt].start);
        if (next > v[cnt].start && (v[cnt].end < 0 || next < v[cnt].end)) v[cnt].end = next;
        cnt++;
    }
    if (!rc && src != SQLITE_DONE) rc = t2__store_err(st, src, "read log segments");
    sqlite3_reset(s);
    if (rc) {
        t2__log_segments_free(v, cnt);
        return rc;
    }
    *segs = v;
    *n = cnt;
    return 0;
}
