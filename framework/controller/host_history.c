/* host_history.c — a trial's `hosts` history, one placement per run (host_history.h). */
#define _POSIX_C_SOURCE 200809L
#include "host_history.h"
#include <stdlib.h>
#include <string.h>
#include "t2exp/error.h"

/* Whether history lists run as one of its placements (whole ones: "a:1" is not in "a:10"). */
static int listed(const char *history, const char *run)
{
    size_t n = strlen(run), sep = strlen(T2__HOSTS_SEP);
    for (const char *p = history; p;) {
        const char *end = strstr(p, T2__HOSTS_SEP);
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !memcmp(p, run, n)) return 1;
        p = end ? end + sep : NULL;
    }
    return 0;
}

int t2__hosts_history_add(const char *history, const char *run, char **out)
{
    if (!out || !run || !run[0]) return t2_seterr(T2_EINVAL, "hosts history: no placement");
    *out = NULL;
    int none = !history || !history[0];
    /* Empty for trials that only ran here without a pool (docs/distributed.md). */
    if (none && !strcmp(run, T2__HOSTS_LOCAL)) return T2_OK;
    if (!none && listed(history, run)) return T2_OK;
    size_t a = none ? 0 : strlen(history), b = strlen(run), sep = none ? 0 : strlen(T2__HOSTS_SEP);
    char *s = malloc(a + sep + b + 1);
    if (!s) return t2_seterr(T2_ENOMEM, "hosts history: out of memory");
    if (a) memcpy(s, history, a);
    if (sep) memcpy(s + a, T2__HOSTS_SEP, sep);
    memcpy(s + a + sep, run, b + 1);
    *out = s;
    return T2_OK;
}
