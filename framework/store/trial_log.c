/* trial_log.c — a trial's output as one stream, wherever its runs wrote it: each run's segment
 * (store_logs.c) of a worker's log or of the trial's own log file (log_path: a run in its own
 * process or through mpirun), in run order. `t2exp logs` and the dashboard's log view read it
 * through the same offsets. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "store.h"
#include "t2exp/error.h"

int t2__trial_log_open(t2__store *st, int64_t trial_id, t2__trial_log *out)
{
    memset(out, 0, sizeof *out);
    t2__trial_row row;
    int rc = t2__store_get_trial(st, trial_id, &row);
    if (rc) return rc;
    t2__log_segment *seg = NULL;
    size_t n = 0;
    if ((rc = t2__store_log_segments(st, trial_id, &seg, &n))) goto done;
    /* Every run records its segment now, a run in its own process too, so the pieces come in run
     * order whichever isolation each run had. What the trial's own log holds before its first
     * segment (runs of an older version, which recorded none) comes first, as it always did; a
     * trial that only ran in workers has a log_path but no file there: then it is no piece. */
    int64_t first = -1; /* where the first segment of the own log starts */
    for (size_t i = 0; row.log_path && i < n; i++)
        if (strcmp(seg[i].path, row.log_path) == 0 && (first < 0 || seg[i].start < first)) first = seg[i].start;
    if (row.log_path && first != 0 && access(row.log_path, F_OK) == 0) {
        t2__log_segment *v = realloc(seg, (n + 1) * sizeof *v);
        if (!v) {
            t2__log_segments_free(seg, n);
            rc = t2_seterr(T2_ENOMEM, "trial %lld's log: out of memory", (long long)trial_id);
            goto done;
        }
        memmove(v + 1, v, n * sizeof *v);
        v[0] = (t2__log_segment){.path = row.log_path, .start = 0, .end = first};
        row.log_path = NULL; /* now the piece's */
        seg = v;
        n++;
    }
    out->trial_id = trial_id;
    out->pieces = seg;
    out->n = n;
done:
    t2__trial_row_free(&row);
    return rc;
}

void t2__trial_log_free(t2__trial_log *l)
{
    if (!l) return;
    t2__log_segments_free(l->pieces, l->n);
    memset(l, 0, sizeof *l);
}

/* Piece i opened read-only, a regular file not reached through a symbolic link (the store names
 * it; nothing else is read); *len its bytes now. -1 with the error set. */
static int open_piece(const t2__trial_log *l, size_t i, int64_t *len)
{
    const t2__log_segment *p = &l->pieces[i];
    int fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0) close(fd);
        t2_seterr(T2_EIO, "trial %lld: cannot read its log %s: %s", (long long)l->trial_id, p->path,
                  e == EINVAL ? "not a regular file" : strerror(e));
        return -1;
    }
    int64_t end = p->end >= 0 && p->end < (int64_t)sb.st_size ? p->end : (int64_t)sb.st_size;
    *len = end > p->start ? end - p->start : 0;
    return fd;
}

int t2__trial_log_read(const t2__trial_log *l, int64_t offset, void *buf, size_t cap, size_t *got, int64_t *size)
{
    *got = 0;
    if (size) *size = 0;
    /* Each piece is opened once: its length and its bytes come from the same descriptor. With
     * size asked, the pieces past the read range are opened for their lengths only. */
    for (size_t i = 0; i < l->n && (size || *got < cap); i++) {
        int64_t len;
        int fd = open_piece(l, i, &len);
        if (fd < 0) return T2_EIO;
        if (size) *size += len;
        if (offset >= len || *got >= cap) { /* wholly before the asked range, or after what fits */
            offset = offset >= len ? offset - len : 0;
            close(fd);
            continue;
        }
        int64_t want = len - offset;
        if ((int64_t)(cap - *got) < want) want = (int64_t)(cap - *got);
        ssize_t k = pread(fd, (char *)buf + *got, (size_t)want, (off_t)(l->pieces[i].start + offset));
        int e = errno;
        close(fd);
        if (k < 0)
            return t2_seterr(T2_EIO, "trial %lld: cannot read its log %s: %s", (long long)l->trial_id,
                             l->pieces[i].path, strerror(e));
        *got += (size_t)k;
        offset = 0;
        if (k < want) { /* the file shrank under us: what is there is all */
            if (size) *size += (int64_t)k - len;
            cap = *got;
        }
    }
    return T2_OK;
}

int t2__trial_log_copy(const t2__trial_log *l, int64_t *at, FILE *out, char *last)
{
    enum { CHUNK = 65536 };
    char *buf = malloc(CHUNK);
    if (!buf) return t2_seterr(T2_ENOMEM, "logs: out of memory");
    size_t got;
    int rc;
    while (!(rc = t2__trial_log_read(l, *at, buf, CHUNK, &got, NULL)) && got > 0) {
        if (fwrite(buf, 1, got, out) != got) {
            rc = t2_seterr(T2_EIO, "logs: write error: %s", strerror(errno));
            break;
        }
        *at += (int64_t)got;
        if (last) *last = buf[got - 1];
    }
    free(buf);
    return rc;
}
