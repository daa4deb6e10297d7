/* outfile.c — a command's output file: never an input, never half-written (see outfile.h).
 *
 * Why both rules: `t2exp export CK CK` used to map the checkpoint, then open the output with
 * O_TRUNC, which truncated the very pages being copied (a Bus error, the checkpoint left at 0
 * bytes). Comparing st_dev/st_ino after resolving symlinks catches the same file under any name
 * (a symlink, a hard link, "./CK"); writing to a temporary file and renaming it at the end keeps
 * the destination whole if anything fails halfway (disk full, a corrupt input found late). */
#define _DEFAULT_SOURCE /* realpath */
#include "outfile.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "t2exp/error.h"

static void outfile_clear(t2__outfile *o)
{
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    o->fd = -1;
}

/* The directory part of path ("." when there is none, "/" for a file in the root). */
static char *dir_of(const char *path)
{
    char *d = strdup(path);
    if (!d) return NULL;
    char *slash = strrchr(d, '/');
    if (!slash) {
        free(d);
        return strdup(".");
    }
    if (slash == d) slash++;
    *slash = '\0';
    return d;
}

int t2__outfile_open(t2__outfile *o, const char *path, mode_t mode, const char *const *inputs, int ninputs)
{
    static int counter; /* temp-name uniqueness within a process; O_EXCL catches the rest */
    if (!o) return t2_seterr(T2_EINVAL, "t2__outfile_open: NULL argument");
    o->fd = -1;
    o->path = o->tmp = NULL;
    if (!path || (ninputs > 0 && !inputs)) return t2_seterr(T2_EINVAL, "t2__outfile_open: NULL argument");
    if (!*path) return t2_seterr(T2_EINVAL, "the output path is empty");
    /* Through a symlink to an existing file, that file is the output (and what is compared). */
    char *real = realpath(path, NULL);
    const char *dest = real ? real : path;
    struct stat ds;
    int rc = T2_OK;
    if (stat(dest, &ds) == 0) {
        /* Only a regular file is replaced: the rename would swap a device or a FIFO for a file
         * (as root, `export CK /dev/null` replaced the system's /dev/null; a reader waiting on
         * a FIFO got nothing, and the command said it succeeded). */
        if (S_ISDIR(ds.st_mode)) rc = t2_seterr(T2_EIO, "%s: is a directory", path);
        else if (!S_ISREG(ds.st_mode))
            rc = t2_seterr(T2_EIO, "%s: not a regular file (%s): refusing to replace it with one", path,
                           S_ISCHR(ds.st_mode)    ? "a character device"
                           : S_ISBLK(ds.st_mode)  ? "a block device"
                           : S_ISFIFO(ds.st_mode) ? "a FIFO"
                           : S_ISSOCK(ds.st_mode) ? "a socket"
                                                  : "a special file");
        for (int i = 0; i < ninputs && !rc; i++) {
            struct stat is;
            if (inputs[i] && stat(inputs[i], &is) == 0 && is.st_dev == ds.st_dev && is.st_ino == ds.st_ino)
                rc = t2_seterr(T2_EINVAL, "%s is the same file as the input %s: refusing to write over it", path,
                               inputs[i]);
        }
    }
    char *dir = NULL;
    if (!rc && (!(o->path = strdup(dest)) || !(dir = dir_of(dest))))
        rc = t2_seterr(T2_ENOMEM, "%s: out of memory", path);
    const char *base = rc ? "" : strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
    size_t tlen = (dir ? strlen(dir) : 0) + strlen(base) + 64;
    if (!rc && !(o->tmp = malloc(tlen))) rc = t2_seterr(T2_ENOMEM, "%s: out of memory", path);
    for (int attempt = 0; !rc && o->fd < 0; attempt++) {
        snprintf(o->tmp, tlen, "%s%s.%s.tmp-%ld-%d", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", base,
                 (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (o->fd < 0 && (errno != EEXIST || attempt == 100))
            rc = t2_seterr(T2_EIO, "%s: cannot create %s: %s", path, o->tmp, strerror(errno));
    }
    free(dir);
    free(real);
    if (rc) outfile_clear(o);
    return rc;
}

int t2__outfile_write(t2__outfile *o, const void *p, size_t n)
{
    if (!o || o->fd < 0 || (!p && n)) return t2_seterr(T2_EINVAL, "t2__outfile_write: no open output");
    const char *b = p;
    while (n) {
        ssize_t r = write(o->fd, b, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return t2_seterr(T2_EIO, "%s: write failed: %s", o->path, r < 0 ? strerror(errno) : "no progress");
        b += r;
        n -= (size_t)r;
    }
    return T2_OK;
}

void t2__outfile_abort(t2__outfile *o)
{
    if (!o) return;
    if (o->fd >= 0) close(o->fd);
    if (o->tmp) unlink(o->tmp);
    outfile_clear(o);
}

int t2__outfile_commit(t2__outfile *o)
{
    if (!o || o->fd < 0) return t2_seterr(T2_EINVAL, "t2__outfile_commit: no open output");
    int rc = T2_OK, fd = o->fd;
    o->fd = -1;
    if (fsync(fd) != 0) rc = t2_seterr(T2_EIO, "%s: fsync of %s failed: %s", o->path, o->tmp, strerror(errno));
    if (close(fd) != 0 && !rc) rc = t2_seterr(T2_EIO, "%s: close of %s failed: %s", o->path, o->tmp, strerror(errno));
    if (!rc && rename(o->tmp, o->path) != 0)
        rc = t2_seterr(T2_EIO, "%s: cannot rename %s over it: %s", o->path, o->tmp, strerror(errno));
    if (rc) {
        t2__outfile_abort(o);
        return rc;
    }
    /* The rename is durable once the directory is synced. */
    char *dir = dir_of(o->path);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (!dir) rc = t2_seterr(T2_ENOMEM, "%s: out of memory", o->path);
    else if (dfd < 0 || fsync(dfd) != 0) rc = t2_seterr(T2_EIO, "%s: syncing directory %s: %s", o->path, dir, strerror(errno));
    if (dfd >= 0) close(dfd);
    free(dir);
    outfile_clear(o);
    return rc;
}
