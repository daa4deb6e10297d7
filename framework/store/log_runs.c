/* log_runs.c — a worker's own record of where each of its runs starts in its log (worker-N.log.runs
 * beside worker-N.log), written by the worker before the run writes its first byte.
 *
 * Why: the store learns a run's start (trial_log_segments) in the controller's batch, which a
 * killed controller loses, up to flush_ms of runs. A segment ends where the next recorded one in
 * the same file starts, so the last segment the store kept ran on over every lost run after it:
 * `t2exp logs` of that one trial showed hundreds of other trials' output. The worker's record
 * survives the controller, and a segment now also ends at the next run start the worker recorded.
 *
 * Format: 16-byte records, the trial id and the start offset as little-endian int64, appended in
 * run order, so the starts only grow and a lookup is a binary search. A torn last record (a worker
 * killed inside its write) is ignored. A log that was replaced (deleted by its user, made anew by a
 * resumed experiment's worker) starts its record afresh (t2__log_runs_begin): records of the old
 * file would have made the starts fall, and the search then ends segments at wrong places. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store.h"

#define RECORD 16

static void put_le64(unsigned char *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(u >> (8 * i));
}

static int64_t get_le64(const unsigned char *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
    return (int64_t)u;
}

int t2__log_runs_append(int fd, int64_t trial_id, int64_t start)
{
    unsigned char rec[RECORD];
    put_le64(rec, trial_id);
    put_le64(rec + 8, start);
    ssize_t k;
    while ((k = write(fd, rec, sizeof rec)) < 0 && errno == EINTR) {
    }
    return k == (ssize_t)sizeof rec ? 0 : -1;
}

/* The record beside log_path opened with flags (and O_NOFOLLOW: a regular file only), *size its
 * bytes; -1 with errno (ENOENT: no record yet). */
static int open_record(const char *log_path, int flags, int64_t *size)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s%s", log_path, T2__LOG_RUNS_SUFFIX) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat sb;
    int bad = fstat(fd, &sb) != 0 ? errno : !S_ISREG(sb.st_mode) ? EINVAL : 0;
    if (bad) {
        close(fd);
        errno = bad;
        return -1;
    }
    *size = (int64_t)sb.st_size;
    return fd;
}

int t2__log_runs_begin(const char *log_path, int log_fd)
{
    struct stat log;
    int64_t size;
    if (fstat(log_fd, &log) != 0) return -1;
    int fd = open_record(log_path, O_RDWR, &size);
    if (fd < 0) return errno == ENOENT ? 0 : -1; /* no record yet: the first run makes it */
    int rc = 0;
    unsigned char rec[RECORD];
    if (size >= RECORD) {
        off_t last = (off_t)(size / RECORD - 1) * RECORD;
        if (pread(fd, rec, sizeof rec, last) != (ssize_t)sizeof rec) rc = -1;
        /* An empty log has no run to find; a shorter one than the last recorded start is another file. */
        else if ((log.st_size == 0 || get_le64(rec + 8) > (int64_t)log.st_size) && ftruncate(fd, 0) != 0) rc = -1;
    }
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int64_t t2__log_runs_next(const char *log_path, int64_t start)
{
    int64_t size, found = -1;
    int fd = open_record(log_path, O_RDONLY, &size);
    if (fd < 0) return -1; /* a log no worker wrote (a trial's own), or one from before this record */
    /* The first record whose start is past `start`. */
    int64_t lo = 0, hi = size / RECORD;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        unsigned char rec[RECORD];
        if (pread(fd, rec, sizeof rec, (off_t)(mid * RECORD)) != (ssize_t)sizeof rec) {
            found = -1;
            break;
        }
        int64_t s = get_le64(rec + 8);
        if (s > start) {
            found = s;
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    close(fd);
    return found;
}

int t2__log_runs_each(const char *log_path, t2__log_run_fn fn, void *ctx)
{
    int64_t size;
    int fd = open_record(log_path, O_RDONLY, &size);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    /* In blocks of 4096 records, holding one back: each run's end is the next one's start. A
     * record file of any size costs this much memory (a torn last record is left out). */
    static const size_t BLOCK = 4096;
    unsigned char *buf = malloc(BLOCK * RECORD);
    int64_t total = size / RECORD, at = 0;
    t2__log_run held = {0};
    int have = 0, rc = buf ? 0 : -1;
    while (!rc && at < total) {
        size_t k = total - at < (int64_t)BLOCK ? (size_t)(total - at) : BLOCK;
        if (pread(fd, buf, k * RECORD, (off_t)(at * RECORD)) != (ssize_t)(k * RECORD)) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < k && !rc; i++) {
            t2__log_run r = {get_le64(buf + i * RECORD), get_le64(buf + i * RECORD + 8)};
            if (have) rc = fn(ctx, &held, r.start);
            held = r;
            have = 1;
        }
        at += (int64_t)k;
    }
    if (!rc && have) rc = fn(ctx, &held, -1);
    free(buf);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}
