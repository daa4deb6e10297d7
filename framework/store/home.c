/* home.c — where the store lives: the t2exp home directory and the paths under it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store.h"
#include "t2exp/error.h"

/* Writes a + b to buf, made absolute against the working directory when relative: the paths
 * recorded under the home (logs, checkpoints) must still name the same files when a later command
 * runs from another directory. Not realpath(): the home need not exist yet. */
static int put(char *buf, size_t len, const char *a, const char *b)
{
    char cwd[4096] = "";
    if (a[0] != '/' && !getcwd(cwd, sizeof cwd))
        return t2_seterr(T2_EIO, "store home: %s is relative and the working directory is "
                         "unknown: %s", a, strerror(errno));
    while (cwd[0] && a[0] == '.' && a[1] == '/') /* "./x" -> "x"; "." alone is kept */
        for (a += 2; *a == '/';) a++;
    int n = snprintf(buf, len, "%s%s%s%s", cwd, cwd[0] && cwd[1] ? "/" : "", a, b);
    if (n < 0 || (size_t)n >= len)
        return t2_seterr(T2_EINVAL, "store home: path %s%s%s is longer than %zu bytes", cwd, a, b,
                         len ? len - 1 : 0);
    return 0;
}

int t2__store_home(const char *override, char *buf, size_t len)
{
    if (!buf || !len) return t2_seterr(T2_EINVAL, "store home: no buffer");
    if (override && *override) return put(buf, len, override, "");
    const char *v = getenv("T2EXP_HOME");
    if (v && *v) return put(buf, len, v, "");
    /* The XDG base-directory spec says a relative $XDG_DATA_HOME is invalid and to be ignored. */
    v = getenv("XDG_DATA_HOME");
    if (v && v[0] == '/') return put(buf, len, v, "/t2exp");
    v = getenv("HOME");
    if (v && *v) return put(buf, len, v, "/.local/share/t2exp");
    return t2_seterr(T2_ENOTFOUND,
                     "store home: none of --home, $T2EXP_HOME, $XDG_DATA_HOME, $HOME is set");
}

int t2__store_experiment_dir(const char *home, int64_t experiment_id, const char *sub, char *buf,
                             size_t len)
{
    if (!home || !*home || !buf || !len || experiment_id <= 0)
        return t2_seterr(T2_EINVAL, "store: experiment directory needs a home and an id > 0");
    int n = sub && *sub
                ? snprintf(buf, len, "%s/experiments/%" PRId64 "/%s", home, experiment_id, sub)
                : snprintf(buf, len, "%s/experiments/%" PRId64, home, experiment_id);
    if (n < 0 || (size_t)n >= len)
        return t2_seterr(T2_EINVAL, "store: path under %s for experiment %" PRId64
                         " is longer than %zu bytes", home, experiment_id, len - 1);
    return 0;
}
