/* empty_store.c — listings of a home that has no store yet print what an empty store prints.
 *
 * Why: on a fresh machine `t2exp list --json | jq` got exit 3 ("store trouble") and no JSON, and
 * `model list` exit 2, where Determined's `det e list` prints an empty list. The empty listing is
 * printed by the same code as any other, from an empty store of the current schema made in a
 * private temporary directory and removed after: the columns cannot drift from the real ones. The
 * listing goes to memory first and out only once the directory is gone, so a reader that leaves
 * early (`list | head -0`: SIGPIPE) cannot leave it behind. */
#define _DEFAULT_SOURCE /* mkdtemp, open_memstream */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "commands.h"
#include "internal.h"
#include "lifecycle.h"
#include "store/store.h"
#include "t2exp/error.h"

int t2__cli_open_store_or_empty(const char *home, int readonly, t2__store **st, char *scratch, size_t cap)
{
    char where[PATH_MAX];
    scratch[0] = '\0';
    int rc = t2__store_home(home, where, sizeof where);
    if (!rc) rc = t2__store_open(where, readonly, st);
    if (rc != T2_ENOTFOUND || !readonly) return rc; /* only a missing store is listed as empty */
    /* TMPDIR, else /tmp: a TMPDIR that cannot be used must not fail a listing of nothing. */
    const char *tmp = getenv("TMPDIR"), *dirs[2] = {tmp && *tmp ? tmp : "/tmp", "/tmp"};
    int made = 0;
    for (int k = 0; k < 2 && !made; k++)
        made = snprintf(scratch, cap, "%s/t2exp-empty-XXXXXX", dirs[k]) < (int)cap && mkdtemp(scratch) != NULL;
    if (!made) {
        rc = t2_seterr(T2_EIO, "a scratch directory for an empty listing in %s: %s", dirs[1], strerror(errno));
        scratch[0] = '\0';
        return rc;
    }
    if ((rc = t2__store_open(scratch, 0, st))) t2__cli_close_store(*st, scratch);
    return rc;
}

int t2__cli_close_store(t2__store *st, char *scratch)
{
    int rc = t2__store_close(st);
    if (scratch && scratch[0] && t2__remove_tree(scratch)) t2_clearerr(); /* a leftover in TMPDIR at worst */
    if (scratch) scratch[0] = '\0';
    return rc;
}

FILE *t2__cli_listing_out(const char *scratch, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!scratch[0]) return stdout;
    FILE *f = open_memstream(buf, len);
    if (!f) t2_seterr(T2_ENOMEM, "listing: out of memory");
    return f;
}

int t2__cli_listing_done(FILE *out, char **buf, size_t *len)
{
    if (out == stdout) return T2_OK;
    /* The stream sets *buf and *len at its close: read them only after it. */
    int rc = fclose(out) == 0 ? T2_OK : t2_seterr(T2_ENOMEM, "listing: out of memory");
    if (!rc && *len && (fwrite(*buf, 1, *len, stdout) != *len || fflush(stdout) != 0))
        rc = t2_seterr(T2_EIO, "writing the listing failed: %s", strerror(errno));
    free(*buf);
    *buf = NULL;
    return rc;
}
