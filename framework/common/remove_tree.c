/* remove_tree.c — rm -r without following symlinks (an experiment's directory, a session directory). */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "t2exp/error.h"

/* nftw's callback has no context argument: the first failure is kept here (one delete at a
 * time per process). */
static char rm_error[PATH_MAX + 128];

static int rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    /* FTW_DEPTH: a directory comes after its contents. FTW_PHYS: a symlink is an entry (FTW_SL)
     * removed as such, never followed out of the tree. */
    int r = type == FTW_DP ? rmdir(path) : unlink(path);
    if (r != 0 && errno != ENOENT) {
        snprintf(rm_error, sizeof rm_error, "%s: %s", path, strerror(errno));
        return 1;
    }
    return 0;
}

int t2__remove_tree(const char *dir)
{
    struct stat sb;
    if (lstat(dir, &sb) != 0) return errno == ENOENT ? T2_OK : t2_seterr(T2_EIO, "cannot remove %s: %s", dir, strerror(errno));
    rm_error[0] = '\0';
    int r = nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    if (r != 0) return t2_seterr(T2_EIO, "cannot remove %s", rm_error[0] ? rm_error : strerror(errno));
    return T2_OK;
}
