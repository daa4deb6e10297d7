/* mkdirs.c — mkdir -p with private directories, for every layer that keeps files (the store's
 * home and checkpoint directories, the data layer's caches). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "internal.h"

int t2__mkdirs(const char *path)
{
    if (!path || !*path) return t2_seterr(T2_EINVAL, "mkdir: empty path");
    size_t n = strlen(path);
    char *p = malloc(n + 1);
    if (!p) return t2_seterr(T2_ENOMEM, "mkdir %s: out of memory", path);
    memcpy(p, path, n + 1);
    int rc = 0;
    /* Create each prefix in turn; EEXIST is fine as long as it ends up a directory. */
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        /* 0700: what t2exp keeps is the user's alone (the umask can only take more away).
         * Existing directories keep their modes. */
        if (mkdir(p, 0700) != 0 && errno != EEXIST)
            rc = t2_seterr(T2_EIO, "mkdir %s: %s", p, strerror(errno));
        else if (c == '\0' || p[i + 1] == '\0') {
            struct stat sb;
            if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode))
                rc = t2_seterr(T2_EIO, "mkdir %s: exists and is not a directory", p);
        }
        p[i] = c;
    }
    free(p);
    return rc;
}
