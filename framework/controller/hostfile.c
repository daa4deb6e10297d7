/* hostfile.c — resources.hostfile read line by line with getline and checked before any trial
 * runs: what reaches mpirun (the per-trial hostfiles the controller writes from this) is only
 * names from the hostname/IP alphabet and slot counts that add up within an int. */
#define _XOPEN_SOURCE 700
#include "hostfile.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "t2exp/error.h"

typedef struct {
    const char *path;
    long line;
    t2__host *h;
    int n, cap, total;
    int *slot_of; /* open-addressing table of indices into h (-1: empty), so duplicates are O(1) */
    size_t tcap;
} parser;

/* "resources.hostfile PATH:LINE: " followed by the three parts (NULL: none). */
static int bad(const parser *p, const char *what, const char *a, const char *b)
{
    return t2_seterr(T2_EINVAL, "resources.hostfile %s:%ld: %s%s%s", p->path, p->line, what, a ? a : "", b ? b : "");
}

/* A token for a message: at most 40 characters, anything unprintable as '?'. */
static const char *shown(const char *s, size_t n, char *buf, size_t len)
{
    size_t k = 0;
    for (; k < n && k < 40 && k + 4 < len; k++) buf[k] = s[k] > ' ' && s[k] < 127 ? s[k] : '?';
    if (k < n && k + 4 <= len) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = '\0';
    return buf;
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* Host names compare as DNS does: without regard to case. */
static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (uint64_t)lower((unsigned char)*s)) * 1099511628211u;
    return h;
}

static int same_name(const char *a, const char *b)
{
    for (; *a && lower((unsigned char)*a) == lower((unsigned char)*b); a++, b++) {}
    return *a == *b;
}

static int *probe(parser *p, const char *name)
{
    size_t i = (size_t)name_hash(name) & (p->tcap - 1);
    while (p->slot_of[i] >= 0 && !same_name(p->h[p->slot_of[i]].name, name)) i = (i + 1) & (p->tcap - 1);
    return &p->slot_of[i];
}

/* Keeps the table at most half full; its size is a power of two. */
static int grow_table(parser *p)
{
    size_t cap = p->tcap ? 2 * p->tcap : 64;
    int *t = malloc(cap * sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "resources.hostfile %s: out of memory", p->path);
    for (size_t i = 0; i < cap; i++) t[i] = -1;
    free(p->slot_of);
    p->slot_of = t;
    p->tcap = cap;
    for (int k = 0; k < p->n; k++) *probe(p, p->h[k].name) = k;
    return T2_OK;
}

const char *t2__host_name_problem(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (c == '@') return "@";
        /* Open MPI 4.1's launcher (Debian 12's) refuses a node name with any other character
         * ("the regex parser has detected the presence of an illegal character"), `_` and IPv6
         * addresses included: the trial then failed at launch and its host was taken for dead
         * (probe_N). */
        if (c == '_' && i > 0)
            return " has '_', which Open MPI's launcher refuses in a node name (letters, digits, '.' and '-' only): "
                   "give the host's IPv4 address or a name without '_' (an alias in /etc/hosts)";
        if (c == ':')
            return " is an IPv6 address, which Open MPI's launcher refuses in a node name (letters, digits, '.' and "
                   "'-' only): give the host's IPv4 address or its name";
        if (!alnum && (i == 0 || (c != '-' && c != '.')))
            return i == 0 ? " must start with a letter or a digit"
                          : " has a character a host name or IP address cannot have";
    }
    return NULL;
}

/* A name mpirun, ssh and the resolver all read as one host: a hostname or an IPv4/IPv6 address.
 * A leading '-' is refused in particular, since ssh would take it as an option. */
static int check_name(const parser *p, const char *s, size_t n)
{
    char buf[64];
    if (n > T2__HOST_NAME_MAX) {
        char len[32];
        snprintf(len, sizeof len, "%zu", n);
        return bad(p, "a host name of ", len, " characters (the limit is 253)");
    }
    const char *why = t2__host_name_problem(s, n);
    if (why && why[0] == '@')
        return bad(p, shown(s, n, buf, sizeof buf), ": user@host is not supported (set the user in ~/.ssh/config)", NULL);
    return why ? bad(p, "host name ", shown(s, n, buf, sizeof buf), why) : T2_OK;
}

/* A slot count: plain decimal digits, 1..INT_MAX. */
static int count(const parser *p, const char *key, const char *s, size_t n, int *out)
{
    char buf[64], what[128];
    snprintf(what, sizeof what, "%s=%s", key, shown(s, n, buf, sizeof buf));
    int64_t v = 0;
    if (n == 0) return bad(p, what, " has no value", NULL);
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return bad(p, what, " is not a whole number", NULL);
        if ((v = v * 10 + (s[i] - '0')) > INT_MAX) return bad(p, what, " is over the limit of 2147483647", NULL);
    }
    if (v < 1) return bad(p, what, ": a host needs at least 1 slot", NULL);
    *out = (int)v;
    return T2_OK;
}

enum { K_SLOTS, K_MAX, K_OTHER };

static int key_kind(const char *k, size_t n)
{
    static const char *const slots[] = {"slots", "cpu", "count"};
    static const char *const max[] = {"max_slots", "max-slots", "slots_max", "slots-max", "max_cpu", "max-cpu",
                                      "cpu_max", "cpu-max", "max_count", "max-count", "count_max", "count-max"};
    for (size_t i = 0; i < sizeof slots / sizeof *slots; i++)
        if (strlen(slots[i]) == n && memcmp(slots[i], k, n) == 0) return K_SLOTS;
    for (size_t i = 0; i < sizeof max / sizeof *max; i++)
        if (strlen(max[i]) == n && memcmp(max[i], k, n) == 0) return K_MAX;
    return K_OTHER;
}

static int add_host(parser *p, const char *name, size_t n, int slots, int max_slots)
{
    if (slots > INT_MAX - p->total) return bad(p, "the slots add up to more than 2147483647", NULL, NULL);
    p->total += slots;
    if ((size_t)p->n * 2 >= p->tcap) {
        int rc = grow_table(p);
        if (rc) return rc;
    }
    char key[T2__HOST_NAME_MAX + 1];
    memcpy(key, name, n);
    key[n] = '\0';
    int *at = probe(p, key);
    if (*at >= 0) { /* listed before: merged, as Open MPI does */
        t2__host *h = &p->h[*at];
        if (max_slots || h->max_slots) {
            int64_t m = (int64_t)(h->max_slots ? h->max_slots : h->slots) + (max_slots ? max_slots : slots);
            h->max_slots = m > INT_MAX ? INT_MAX : (int)m;
        }
        h->slots += slots; /* <= total */
        return T2_OK;
    }
    if (p->n == p->cap) {
        int cap = p->cap ? (p->cap < INT_MAX / 2 ? 2 * p->cap : INT_MAX) : 8;
        t2__host *g = cap > p->cap ? realloc(p->h, (size_t)cap * sizeof *g) : NULL;
        if (!g) return t2_seterr(T2_ENOMEM, "resources.hostfile %s: out of memory", p->path);
        p->h = g;
        p->cap = cap;
    }
    t2__host *h = &p->h[p->n];
    memcpy(h->name, key, n + 1);
    h->slots = slots;
    h->max_slots = max_slots;
    h->used = h->threads = 0;
    h->ipv4[0] = '\0'; /* looked up later (host_alias.c), if at all */
    h->dead = 0;
    *at = p->n++;
    return T2_OK;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static int parse_line(parser *p, char *s, size_t len)
{
    char buf[64];
    if (memchr(s, '\0', len)) return bad(p, "a NUL byte", NULL, NULL);
    char *hash = memchr(s, '#', len);
    if (hash) len = (size_t)(hash - s);
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r' || is_space(s[len - 1]))) len--;
    char *e = s + len;
    while (s < e && is_space(*s)) s++;
    if (s == e) return T2_OK;
    const char *name = s;
    while (s < e && !is_space(*s) && *s != '=') s++;
    size_t nlen = (size_t)(s - name);
    if (s < e && *s == '=') return bad(p, "expected a host name first, found ", shown(name, nlen, buf, sizeof buf), "=");
    int rc = check_name(p, name, nlen);
    if (rc) return rc;
    int slots = 0, max_slots = 0, seen = 0; /* seen: a bit per key kind given on this line */
    while (s < e) {
        while (s < e && is_space(*s)) s++;
        const char *k = s;
        while (s < e && !is_space(*s) && *s != '=') s++;
        size_t klen = (size_t)(s - k);
        while (s < e && is_space(*s)) s++;
        if (s == e || *s != '=')
            return bad(p, shown(k, klen, buf, sizeof buf), ": expected KEY=VALUE after the host name "
                       "(one host a line)", NULL);
        s++;
        while (s < e && is_space(*s)) s++;
        const char *v = s;
        while (s < e && !is_space(*s)) s++;
        char key[48];
        shown(k, klen, key, sizeof key);
        int kind = key_kind(k, klen);
        if (kind == K_OTHER)
            return bad(p, key, "= is not supported (t2exp reads slots= and max_slots=)", NULL);
        /* A second one would silently win over the first: say which the line means. */
        if (seen & (1 << kind)) return bad(p, key, "= is given twice on this line", NULL);
        seen |= 1 << kind;
        if ((rc = count(p, key, v, (size_t)(s - v), kind == K_SLOTS ? &slots : &max_slots))) return rc;
    }
    if (!slots) slots = 1;
    if (max_slots && max_slots < slots) {
        char nums[64];
        snprintf(nums, sizeof nums, "%d is less than slots=%d", max_slots, slots);
        return bad(p, "max_slots=", nums, NULL);
    }
    return add_host(p, name, nlen, slots, max_slots);
}

int t2__hostfile_parse(FILE *f, const char *path, t2__host **hosts, int *nhosts, int *total)
{
    *hosts = NULL;
    *nhosts = 0;
    *total = 0;
    parser p = {.path = path};
    char *line = NULL;
    size_t cap = 0;
    int rc = T2_OK;
    while (!rc) {
        errno = 0; /* getline's -1 is EOF, or an error that ferror or ENOMEM tells apart */
        ssize_t n = getline(&line, &cap, f);
        if (n < 0) break;
        p.line++;
        rc = parse_line(&p, line, (size_t)n);
    }
    if (!rc && (ferror(f) || errno == ENOMEM))
        rc = errno == ENOMEM ? t2_seterr(T2_ENOMEM, "resources.hostfile %s:%ld: out of memory", path, p.line + 1)
                             : t2_seterr(T2_EIO, "resources.hostfile %s: read failed: %s", path, strerror(errno));
    if (!rc && p.n == 0) rc = t2_seterr(T2_EINVAL, "resources.hostfile %s: lists no host", path);
    free(line);
    free(p.slot_of);
    if (rc) {
        free(p.h);
        return rc;
    }
    *hosts = p.h;
    *nhosts = p.n;
    *total = p.total;
    return T2_OK;
}

int t2__hostfile_load(const char *path, t2__host **hosts, int *nhosts, int *total)
{
    *hosts = NULL;
    *nhosts = 0;
    *total = 0;
    /* O_NONBLOCK: a FIFO named as the hostfile must not hang the controller at open. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return t2_seterr(errno == ENOENT ? T2_ENOTFOUND : T2_EIO, "resources.hostfile %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return t2_seterr(T2_EINVAL, "resources.hostfile %s: not a regular file", path);
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int e = errno;
        close(fd);
        return t2_seterr(T2_EIO, "resources.hostfile %s: %s", path, strerror(e));
    }
    int rc = t2__hostfile_parse(f, path, hosts, nhosts, total);
    fclose(f);
    return rc;
}
