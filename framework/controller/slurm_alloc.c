/* slurm_alloc.c — the Slurm allocation's hosts and slots, from the variables Slurm sets in a job
 * (see slurm_alloc.h). Parsed here rather than through `scontrol show hostnames`: no process to
 * run, nothing that depends on Slurm's client being installed where the controller runs, and
 * every malformed value gets an error naming the variable and the column. */
#define _XOPEN_SOURCE 700
#include "slurm_alloc.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "t2exp/error.h"

typedef struct {
    const char *list, *what;
    t2__host *h;
    int n, cap;
} expander;

static int bad(const expander *e, const char *at, const char *problem)
{
    return t2_seterr(T2_EINVAL, "%s: \"%.200s\" at column %zu: %s", e->what, e->list, (size_t)(at - e->list) + 1,
                     problem);
}

static int add(expander *e, const char *item, const char *name, size_t len)
{
    if (len == 0) return bad(e, item, "an empty host name");
    if (len > T2__HOST_NAME_MAX) return bad(e, item, "a host name longer than 253 characters");
    const char *why = t2__host_name_problem(name, len);
    if (why) {
        char msg[700];
        snprintf(msg, sizeof msg, "host name \"%.*s\"%s", (int)len, name,
                 why[0] == '@' ? " has a character a host name or IP address cannot have" : why);
        return bad(e, item, msg);
    }
    if (e->n == T2__SLURM_MAX_HOSTS) return bad(e, item, "more than 100000 hosts");
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 16;
        t2__host *h = realloc(e->h, (size_t)cap * sizeof *h);
        if (!h) return t2_seterr(T2_ENOMEM, "%s: out of memory", e->what);
        e->h = h;
        e->cap = cap;
    }
    t2__host *h = &e->h[e->n++];
    memset(h, 0, sizeof *h);
    memcpy(h->name, name, len);
    return 0;
}

/* A decimal number of at most 18 digits at *s (so it fits in int64 with room to add); *s moves past it. */
static int number(const expander *e, const char **s, const char *end, int64_t *v, size_t *width)
{
    const char *p = *s;
    *v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (p - *s == 18) return bad(e, p, "a number in a range with more than 18 digits");
        *v = *v * 10 + (*p++ - '0');
    }
    if (p == *s) return bad(e, p, "a range needs a number here");
    *width = (size_t)(p - *s);
    *s = p;
    return 0;
}

/* Appends the names of item [s, end) that start with buf[0..blen): the literal up to the next
 * '[' is copied, then each number of the bracket's ranges is written and the rest expanded
 * after it. item is where the whole name starts, for messages. */
static int expand(expander *e, const char *item, const char *s, const char *end, char *buf, size_t blen)
{
    for (; s < end && *s != '['; s++) {
        if (*s == ']') return bad(e, s, "a ']' without its '['");
        if (blen >= T2__HOST_NAME_MAX) return bad(e, item, "a host name longer than 253 characters");
        buf[blen++] = *s;
    }
    if (s == end) return add(e, item, buf, blen);
    const char *close = memchr(s, ']', (size_t)(end - s));
    if (!close) return bad(e, s, "a '[' without its ']'");
    const char *r = s + 1;
    if (r == close) return bad(e, r, "an empty range list '[]'");
    while (r < close) {
        int64_t lo, hi;
        size_t w, whi;
        int rc = number(e, &r, close, &lo, &w);
        if (rc) return rc;
        hi = lo;
        if (r < close && *r == '-') {
            r++;
            if ((rc = number(e, &r, close, &hi, &whi))) return rc;
            if (hi < lo) return bad(e, r - whi, "a range that ends below its start");
        }
        if (r < close && *r != ',') return bad(e, r, "a range holds only digits, '-' and ','");
        if (r < close && r + 1 == close) return bad(e, r, "a ',' with no range after it");
        if (r < close) r++;
        if (hi - lo >= T2__SLURM_MAX_HOSTS - e->n) return bad(e, s, "more than 100000 hosts");
        for (int64_t v = lo; v <= hi; v++) {
            char num[32];
            int k = snprintf(num, sizeof num, "%0*lld", (int)w, (long long)v);
            if (blen + (size_t)k > T2__HOST_NAME_MAX) return bad(e, item, "a host name longer than 253 characters");
            memcpy(buf + blen, num, (size_t)k);
            if ((rc = expand(e, item, close + 1, end, buf, blen + (size_t)k))) return rc;
        }
    }
    return 0;
}

int t2__slurm_nodelist(const char *list, const char *what, t2__host **hosts, int *nhosts)
{
    expander e = {.list = list, .what = what};
    char buf[T2__HOST_NAME_MAX + 1];
    int rc = 0;
    *hosts = NULL;
    *nhosts = 0;
    if (!*list) rc = t2_seterr(T2_EINVAL, "%s: an empty node list", what);
    /* Items end at a ',' outside brackets; a '[' inside brackets is an error. */
    for (const char *s = list, *p = list; !rc && *s; s = *p ? p + 1 : p) {
        int depth = 0;
        for (p = s; *p && (depth || *p != ','); p++) {
            if (*p == '[' && depth++) rc = bad(&e, p, "a '[' inside brackets");
            if (*p == ']' && depth) depth--;
            if (rc) break;
        }
        if (!rc && p == s) rc = bad(&e, s, "an empty host name");
        if (!rc && *p == ',' && !p[1]) rc = bad(&e, p, "a ',' with no host after it");
        if (!rc) rc = expand(&e, s, s, p, buf, 0);
    }
    if (rc) {
        free(e.h);
        return rc;
    }
    *hosts = e.h;
    *nhosts = e.n;
    return 0;
}

/* A count in 1..INT_MAX at *s; *s moves past it. */
static int count(const char **s, int64_t *v)
{
    const char *p = *s;
    for (*v = 0; *p >= '0' && *p <= '9'; p++)
        if ((*v = *v * 10 + (*p - '0')) > INT_MAX) return -1;
    if (p == *s || *v < 1) return -1;
    *s = p;
    return 0;
}

int t2__slurm_counts(const char *spec, const char *what, int *counts, int n)
{
    const char *s = spec;
    int k = 0;
    for (;;) {
        int64_t v, reps = 1;
        if (count(&s, &v))
            return t2_seterr(T2_EINVAL, "%s: \"%.200s\" at column %zu: expected a count from 1 to 2147483647", what,
                             spec, (size_t)(s - spec) + 1);
        if (*s == '(') {
            const char *at = s;
            s++;
            if (*s++ != 'x' || count(&s, &reps) || *s++ != ')')
                return t2_seterr(T2_EINVAL, "%s: \"%.200s\" at column %zu: expected a repeat \"(xN)\"", what, spec,
                                 (size_t)(at - spec) + 1);
        }
        if (reps > n - k)
            return t2_seterr(T2_EINVAL, "%s: \"%.200s\" gives counts for more than the %d node(s) in the node list",
                             what, spec, n);
        while (reps-- > 0) counts[k++] = (int)v;
        if (*s == '\0') break;
        if (*s++ != ',')
            return t2_seterr(T2_EINVAL, "%s: \"%.200s\" at column %zu: expected ',' between counts", what, spec,
                             (size_t)(s - 1 - spec) + 1);
    }
    if (k != n)
        return t2_seterr(T2_EINVAL, "%s: \"%.200s\" gives counts for %d node(s), the node list has %d", what, spec, k,
                         n);
    return 0;
}

/* The first of two variables that is set and not empty; *name says which. */
static const char *either(const char *a, const char *b, const char **name)
{
    const char *v = getenv(a);
    *name = a;
    if (v && *v) return v;
    *name = b;
    v = getenv(b);
    return v && *v ? v : NULL;
}

int t2__slurm_pool_env(t2__host **hosts, int *nhosts, int *total, char *origin, size_t len)
{
    const char *job = getenv("SLURM_JOB_ID"), *lname, *cname;
    const char *list = either("SLURM_JOB_NODELIST", "SLURM_NODELIST", &lname);
    const char *spec = either("SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE", &cname);
    static const char hint[] = "resources.slurm: off runs the trials on this machine instead";
    *hosts = NULL;
    *nhosts = *total = 0;
    /* Inside a job step (`srun t2exp create` in a batch script), srun has set SLURM_TASKS_PER_NODE
     * to the step's tasks while SLURM_JOB_NODELIST stays the job's: the pool mixed the two (one
     * slot of a 4-task job; a two-node job refused over a variable the user never set; probe_N),
     * and trials launched from a step would compete with it for the job's resources. Slurm's own
     * steps are not the user's: from 4294967290 up (the interactive step of salloc, the batch
     * script's, 4294967291 since Slurm 20.11 and 4294967294 before, the extern one). */
    const char *step = getenv("SLURM_STEP_ID");
    char *end = NULL;
    unsigned long long step_id = step && *step ? strtoull(step, &end, 10) : 0;
    if (step && *step && end && !*end && step_id < 4294967290ULL)
        return t2_seterr(T2_EINVAL, "Slurm job %.40s: t2exp runs inside its step %.20s (srun), whose tasks are not "
                         "the job's allocation: run t2exp from the batch script itself (or salloc's shell), not "
                         "through srun; %s", job ? job : "?", step, hint);
    if (!list || !spec)
        return t2_seterr(T2_EINVAL, "Slurm job %.40s: %s is not set, so the allocation's %s unknown; %s",
                         job ? job : "?", !list ? "SLURM_JOB_NODELIST (or SLURM_NODELIST)"
                                                : "SLURM_TASKS_PER_NODE (or SLURM_JOB_CPUS_PER_NODE)",
                         !list ? "nodes are" : "slots are", hint);
    int *counts = NULL, rc = t2__slurm_nodelist(list, lname, hosts, nhosts);
    if (!rc && !(counts = malloc((size_t)*nhosts * sizeof *counts))) rc = t2_seterr(T2_ENOMEM, "Slurm: out of memory");
    if (!rc) rc = t2__slurm_counts(spec, cname, counts, *nhosts);
    int64_t sum = 0;
    for (int h = 0; !rc && h < *nhosts; h++) {
        (*hosts)[h].slots = counts[h];
        if ((sum += counts[h]) > INT_MAX) rc = t2_seterr(T2_EINVAL, "%s: the slots add up to more than 2147483647", cname);
    }
    free(counts);
    if (rc) {
        char why[1000];
        snprintf(why, sizeof why, "%s", t2_errmsg());
        free(*hosts);
        *hosts = NULL;
        *nhosts = 0;
        return rc == T2_ENOMEM ? rc : t2_seterr(rc, "Slurm job %.40s: %s; %s", job ? job : "?", why, hint);
    }
    *total = (int)sum;
    snprintf(origin, len, "Slurm job %.40s: %s=%.200s, %s=%.200s", job ? job : "?", lname, list, cname, spec);
    return 0;
}
