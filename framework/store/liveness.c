/* liveness.c — which process runs an experiment (schema 3's controller_pid/controller_token).
 *
 * A pid alone is not an identity: after the controller dies its pid can be handed to any other
 * process, and `t2exp kill` would then signal a stranger. The token is the process's start time
 * in clock ticks since boot (/proc/PID/stat field 22) and the boot id: the pair names one process
 * for the life of the machine. "Running" means the recorded pid is alive with the same token. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "store_internal.h"
#include "t2exp/error.h"

/* Reads a small /proc file whole into buf (NUL-terminated). 0, or -1 when it cannot be read. */
static int read_small(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, len - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || n == 0) return -1;
    buf[n] = '\0';
    return 0;
}

int t2__proc_token(long pid, char *buf, size_t len)
{
    char path[64], stat[1024], boot[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (read_small(path, stat, sizeof stat)) return T2_ENOTFOUND; /* no such process */
    /* The command name (field 2) may hold spaces and parentheses: fields restart after the last
     * ')'. Field 3 is the state; a zombie has exited, whatever its table entry says. */
    char *p = strrchr(stat, ')');
    if (!p || p[1] != ' ') return t2_seterr(T2_EFORMAT, "%s: unexpected format", path);
    p += 2;
    if (*p == 'Z' || *p == 'X') return T2_ENOTFOUND;
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p) return t2_seterr(T2_EFORMAT, "%s: fewer than 22 fields", path);
        p++;
    }
    size_t n = strspn(p, "0123456789");
    if (n == 0 || n > 30) return t2_seterr(T2_EFORMAT, "%s: field 22 is not a start time", path);
    if (read_small("/proc/sys/kernel/random/boot_id", boot, sizeof boot))
        return t2_seterr(T2_EIO, "process token: cannot read /proc/sys/kernel/random/boot_id");
    boot[strcspn(boot, "\n")] = '\0';
    int w = snprintf(buf, len, "%.*s@%s", (int)n, p, boot);
    if (w < 0 || (size_t)w >= len) return t2_seterr(T2_EINVAL, "process token: buffer too small");
    return T2_OK;
}

static const char SQL_SET[] =
    "UPDATE experiments SET controller_pid = ?2, controller_token = ?3 WHERE id = ?1";

int t2__store_set_controller(t2__store *st, int64_t id, int set)
{
    char token[128];
    long pid = (long)getpid();
    int rc = set ? t2__proc_token(pid, token, sizeof token) : T2_OK;
    if (rc == T2_ENOTFOUND) rc = t2_seterr(T2_EIO, "/proc/%ld/stat: cannot read this process's own entry", pid);
    sqlite3_stmt *s;
    if (rc || (rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, SQL_SET, &s))) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    if (!b) b = set ? sqlite3_bind_int64(s, 2, pid) : sqlite3_bind_null(s, 2);
    if (!b) b = set ? sqlite3_bind_text(s, 3, token, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, 3);
    if (b) return t2__store_err(st, b, "bind");
    if ((rc = t2__store_exec_stmt(st, s, "record the experiment's controller"))) return rc;
    if (sqlite3_changes(st->db) != 1)
        return t2_seterr(T2_ENOTFOUND, "store %s: record the controller: no experiment %" PRId64, st->path, id);
    if ((rc = t2__store_write_done(st))) return rc;
    return t2__store_flush(st, 1); /* pause/kill/follow read it from other processes at once */
}

int t2__store_controller(t2__store *st, int64_t id, long *pid)
{
    sqlite3_stmt *s;
    *pid = 0;
    int rc = t2__store_prepare(st, "SELECT controller_pid, controller_token FROM experiments WHERE id = ?1", &s);
    if (rc) return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    int step = b ? b : sqlite3_step(s);
    char want[128] = "", have[128];
    long rec = 0;
    if (step == SQLITE_ROW) {
        rec = (long)sqlite3_column_int64(s, 0);
        const unsigned char *t = sqlite3_column_text(s, 1);
        if (t) snprintf(want, sizeof want, "%s", (const char *)t);
        rc = T2_OK;
    } else if (step == SQLITE_DONE) {
        rc = t2_seterr(T2_ENOTFOUND, "no experiment %" PRId64, id);
    } else {
        rc = t2__store_err(st, step, "read the experiment's controller");
    }
    sqlite3_finalize(s);
    if (rc || rec <= 0 || !want[0]) return rc < 0 ? rc : 0;
    /* Stale (the controller died without clearing its record) or a recycled pid: not running. */
    rc = t2__proc_token(rec, have, sizeof have);
    if (rc == T2_ENOTFOUND) return 0;
    if (rc) return rc;
    if (strcmp(have, want) != 0) return 0;
    *pid = rec;
    return 1;
}

void t2__store_sql_controller_alive(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    long pid = (long)sqlite3_value_int64(argv[0]);
    const unsigned char *want = sqlite3_value_text(argv[1]);
    char have[128];
    int alive = pid > 0 && want && t2__proc_token(pid, have, sizeof have) == T2_OK && strcmp(have, (const char *)want) == 0;
    t2_clearerr();
    sqlite3_result_int(ctx, alive);
}

int t2__store_delete_experiment(t2__store *st, int64_t id)
{
    sqlite3_stmt *s;
    int rc;
    /* The trials, metrics, checkpoints and searcher state go with it: ON DELETE CASCADE. */
    if ((rc = t2__store_write_begin(st)) || (rc = t2__store_stmt(st, "DELETE FROM experiments WHERE id = ?1", &s)))
        return rc;
    int b = sqlite3_bind_int64(s, 1, id);
    if (b) return t2__store_err(st, b, "bind");
    if ((rc = t2__store_exec_stmt(st, s, "delete experiment"))) return rc;
    if (sqlite3_changes(st->db) != 1)
        return t2_seterr(T2_ENOTFOUND, "store %s: delete: no experiment %" PRId64, st->path, id);
    if ((rc = t2__store_write_done(st))) return rc;
    return t2__store_flush(st, 1);
}
