/* writer_turns.c — fair turns at the write lock for controllers sharing one store.
 *
 * Why: a controller keeps its batch transaction (and so SQLite's write lock) open for up to
 * flush_ms and opens the next one at its next write, microseconds after a commit. A second
 * controller polling under busy_timeout almost never sees the lock free and gave up after 5 s with
 * "database is locked": two experiments could not run on one home at the same time.
 *
 * How: a writer that has to wait marks itself with a shared fcntl lock on byte 0 of
 * HOME/t2exp.db-turns while it waits (polling every millisecond). The holder checks for such a mark
 * (F_GETLK) whenever it could commit: it then commits its batch at once, and before opening the next
 * one it gives the waiter a moment to take the lock. Readers never take part (WAL lets them read
 * during any write). A side file, because closing any descriptor of a file drops all of a
 * process's fcntl locks on it, and SQLite holds its own on the database. Without the file (a
 * read-only directory) writers fall back to plain busy_timeout. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "store_internal.h"
#include "t2exp/error.h"

/* How long a holder leaves the lock free for a marked waiter before writing again. */
#define YIELD_MS 50.0

static void sleep_ms(double ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(ms * 1e6)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static int lock_byte0(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    return fcntl(fd, F_SETLK, &fl);
}

static void mark_waiting(t2__store *st, int on)
{
    if (st->turns_fd < 0 || st->turns_marked == on) return;
    if (lock_byte0(st->turns_fd, on ? F_RDLCK : F_UNLCK) == 0) st->turns_marked = on;
}

int t2__turns_others_waiting(t2__store *st)
{
    if (st->turns_fd < 0) return 0;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    /* F_GETLK ignores this process's own locks: F_UNLCK back means nobody else is waiting. */
    return fcntl(st->turns_fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

/* SQLite's busy handler for writers: 1 = try again. */
static int busy_wait(void *arg, int count)
{
    t2__store *st = arg;
    if (count == 0) st->turns_wait_start = t2__store_mono_ms();
    if (t2__store_mono_ms() - st->turns_wait_start > (double)st->turns_timeout_ms) {
        mark_waiting(st, 0);
        return 0;
    }
    mark_waiting(st, 1);
    sleep_ms(1.0);
    return 1;
}

int t2__turns_open(t2__store *st)
{
    st->turns_fd = -1;
    st->turns_marked = 0;
    size_t n = strlen(st->path);
    char *path = malloc(n + sizeof "-turns");
    if (!path) return t2_seterr(T2_ENOMEM, "store %s: out of memory", st->path);
    memcpy(path, st->path, n);
    memcpy(path + n, "-turns", sizeof "-turns");
    st->turns_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    free(path);
    int rc = sqlite3_busy_handler(st->db, busy_wait, st);
    return rc == SQLITE_OK ? 0 : t2__store_err(st, rc, "busy handler");
}

void t2__turns_close(t2__store *st)
{
    if (st->turns_fd >= 0) close(st->turns_fd); /* drops the mark with it */
    st->turns_fd = -1;
    st->turns_marked = 0;
}

void t2__turns_got_lock(t2__store *st) { mark_waiting(st, 0); }

void t2__turns_yield(t2__store *st)
{
    double t0 = t2__store_mono_ms();
    while (t2__turns_others_waiting(st) && t2__store_mono_ms() - t0 < YIELD_MS) sleep_ms(1.0);
}
