/* outfile.h — writing a command's output file safely (internal).
 *
 * An output never aliases an input, and is never seen half-written: t2__outfile_open refuses a
 * destination that is (after symlinks) the same file as one of the inputs, and writes go to a
 * temporary file beside the destination that t2__outfile_commit fsyncs and renames over it.
 * Until the commit the destination is untouched; t2__outfile_abort (or a failed commit) removes
 * the temporary file.
 *
 *     t2__outfile o;
 *     int rc = t2__outfile_open(&o, out_path, 0666, &in_path, 1);
 *     if (!rc) rc = t2__outfile_write(&o, buf, len);
 *     rc = rc ? (t2__outfile_abort(&o), rc) : t2__outfile_commit(&o);
 */
#ifndef T2_COMMON_OUTFILE_H
#define T2_COMMON_OUTFILE_H

#include <stddef.h>
#include <sys/types.h>

typedef struct t2__outfile {
    int fd;     /* the temporary file, -1 when closed */
    char *path; /* where the output goes: the destination, or the file its symlink names */
    char *tmp;  /* "<dir>/.<name>.tmp-<pid>-<n>" */
} t2__outfile;

/* Creates the temporary file (O_EXCL, mode & ~umask) in the directory of path, or of the file
 * path's symlink points to when it exists (the output then replaces that file, as writing
 * through the link would). T2_EINVAL, with a message naming both paths, when path is one of
 * inputs[0..ninputs) (same st_dev and st_ino; an input that does not exist is skipped);
 * T2_EIO naming the path for a directory that cannot be written; T2_ENOMEM. On failure
 * nothing is left behind and o->fd is -1 (abort is harmless). */
int t2__outfile_open(t2__outfile *o, const char *path, mode_t mode, const char *const *inputs, int ninputs);

/* Writes all n bytes (retrying short writes). T2_EIO naming the destination and errno's text. */
int t2__outfile_write(t2__outfile *o, const void *p, size_t n);

/* fsync, close, rename over the destination, fsync its directory. On failure the temporary file
 * is removed and the destination is as it was (T2_EIO naming the step and errno's text). Frees o
 * either way. */
int t2__outfile_commit(t2__outfile *o);

/* Closes and removes the temporary file; frees o. Accepts an o whose open failed. */
void t2__outfile_abort(t2__outfile *o);

#endif
