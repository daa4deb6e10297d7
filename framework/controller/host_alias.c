/* host_alias.c — two hostfile lines that name one machine (`localhost` and `127.0.0.1`, a name and
 * its address). Open MPI reads them as one node with two slot counts and fails every launch that
 * uses both with an internal error ("multiple definitions of the slot count"), after create had
 * accepted the file (probe_G G8). Refused when the pool is loaded instead, naming both lines.
 *
 * Open MPI's own rule decides what is one node: a name is this machine when one of its addresses
 * is a loopback one or an address of this machine; other names are one host when they share an
 * IPv4 address. A name that does not resolve now is left out: it leaves the pool at its first
 * launch, as an unreachable host does. */
#define _DEFAULT_SOURCE /* getifaddrs */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "slot_pool.h"
#include "t2exp/error.h"

#define MAX_ADDRS 16

typedef struct {
    int local;                /* this machine */
    int n;                    /* resolved IPv4 addresses (0: the name does not resolve now) */
    uint32_t addr[MAX_ADDRS]; /* host byte order */
} host_addrs;

/* An address of one of this machine's interfaces (getifaddrs: a bind test said yes to every
 * address where net.ipv4.ip_nonlocal_bind is set), or loopback. */
static int is_local(uint32_t a, const struct ifaddrs *ifs)
{
    if ((a >> 24) == 127) return 1;
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
            ntohl(((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr) == a)
            return 1;
    return 0;
}

/* The names are looked up side by side, on up to LOOKUP_THREADS threads that each take the next
 * name: the controller waits for them together, at most LOOKUP_S a round of them
 * (t2__host_lookup_deadline), and gives up on the first Ctrl-C
 * (lookups one after another took 10 s a name with a resolver that does not answer, Ctrl-C only set
 * a flag meanwhile, and create then recorded the experiment it was told to drop; review R7). A name
 * still unresolved then is left out, as one that does not resolve. A thread outlives an abandoned
 * wait (and then takes no new name): the batch is freed by whoever leaves it last. A pool of
 * hundreds of hosts started a thread per host before (review of session 27). */
#define LOOKUP_S 12.0 /* past one resolver timeout (5 s) and a second nameserver's answer (review) */
#define LOOKUP_THREADS 256

/* LOOKUP_S for each round of LOOKUP_THREADS names: with a resolver that takes its full timeout on
 * each name, a pool larger than one round needs more than one lookup's time, and a name not done
 * by the deadline is neither compared nor routed from (review: 100 hosts on 32 threads, 5 s a
 * lookup, lost the alias check at 12 s). */
double t2__host_lookup_deadline(int names)
{
    int rounds = names <= 0 ? 1 : (names + LOOKUP_THREADS - 1) / LOOKUP_THREADS;
    return LOOKUP_S * rounds;
}

typedef struct batch {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;  /* the caller and each running thread */
    int ndone; /* lookups ended */
    int next;  /* the next name to look up */
    int abandoned; /* the caller stopped waiting: no new lookup */
    int n;
    struct lookup {
        const char *name; /* a copy, in the batch's own memory */
        int done, naddr;
        uint32_t addr[MAX_ADDRS];
    } *l;
} batch;

static void batch_leave(batch *b)
{
    pthread_mutex_lock(&b->mu);
    int last = --b->refs == 0;
    pthread_mutex_unlock(&b->mu);
    if (!last) return;
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b); /* names and lookups live in the same block */
}

static void *lookup_run(void *arg)
{
    batch *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        int i = b->next < b->n && !b->abandoned ? b->next++ : -1;
        pthread_mutex_unlock(&b->mu);
        if (i < 0) break;
        struct lookup *l = &b->l[i];
        uint32_t addr[MAX_ADDRS];
        int n = 0;
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        if (getaddrinfo(l->name, NULL, &hints, &ai) == 0) {
            for (struct addrinfo *p = ai; p && n < MAX_ADDRS; p = p->ai_next)
                addr[n++] = ntohl(((struct sockaddr_in *)(void *)p->ai_addr)->sin_addr.s_addr);
            freeaddrinfo(ai);
        }
        pthread_mutex_lock(&b->mu);
        memcpy(l->addr, addr, sizeof addr);
        l->naddr = n;
        l->done = 1;
        b->ndone++;
        pthread_cond_signal(&b->cv);
        pthread_mutex_unlock(&b->mu);
    }
    batch_leave(b);
    return NULL;
}

/* Resolves the hosts' names into v (what is unresolved at the end stays empty); T2_ESTOPPED when
 * *stop became set meanwhile. */
static int resolve_all(const t2__host *h, int n, host_addrs *v, const volatile sig_atomic_t *stop)
{
    size_t names = 0;
    for (int i = 0; i < n; i++) names += strlen(h[i].name) + 1;
    batch *b = malloc(sizeof *b + (size_t)n * sizeof *b->l + names);
    if (!b) return t2_seterr(T2_ENOMEM, "resources.hostfile: out of memory");
    b->l = (struct lookup *)(void *)(b + 1);
    char *text = (char *)(b->l + n);
    pthread_mutex_init(&b->mu, NULL);
    /* Its deadline on the monotonic clock: a clock step (or a Ctrl-Z) must not stretch or cut it. */
    pthread_condattr_t ca;
    int mono = pthread_condattr_init(&ca) == 0 && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    pthread_cond_init(&b->cv, mono ? &ca : NULL);
    if (mono) pthread_condattr_destroy(&ca);
    b->refs = 1;
    b->ndone = b->next = b->abandoned = 0;
    b->n = n;
    pthread_attr_t attr;
    int attr_ok = pthread_attr_init(&attr) == 0 && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0;
    /* The threads take no signal (they inherit this mask): a child's SIGCHLD or a Ctrl-C landing
     * on a lookup thread did not wake the controller's loop. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < n; i++) {
        b->l[i] = (struct lookup){.name = text};
        text += strlen(strcpy(text, h[i].name)) + 1;
    }
    int started = 0;
    for (int k = 0; k < n && k < LOOKUP_THREADS; k++) {
        pthread_t th;
        pthread_mutex_lock(&b->mu);
        b->refs++;
        pthread_mutex_unlock(&b->mu);
        if (attr_ok && pthread_create(&th, &attr, lookup_run, b) == 0) {
            started++;
            continue;
        }
        pthread_mutex_lock(&b->mu);
        b->refs--;
        pthread_mutex_unlock(&b->mu);
        break;
    }
    if (!started) {
        /* No thread at all: every name is left out, as one that does not resolve. */
        pthread_mutex_lock(&b->mu);
        for (int i = 0; i < n; i++) b->l[i].done = 1;
        b->ndone = b->next = n;
        pthread_mutex_unlock(&b->mu);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (attr_ok) pthread_attr_destroy(&attr);
    clockid_t clock = mono ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    struct timespec end;
    clock_gettime(clock, &end);
    double deadline = (double)end.tv_sec + end.tv_nsec / 1e9 + t2__host_lookup_deadline(n);
    int rc = T2_OK;
    pthread_mutex_lock(&b->mu);
    while (b->ndone < n) {
        if (stop && *stop) {
            rc = t2_seterr(T2_ESTOPPED, "stopped while looking up the hostfile's hosts: nothing was recorded");
            break;
        }
        struct timespec now;
        clock_gettime(clock, &now);
        double t = (double)now.tv_sec + now.tv_nsec / 1e9;
        if (t >= deadline) break;
        t += 0.1; /* a signal does not wake the condition: look at *stop ten times a second */
        if (t > deadline) t = deadline;
        struct timespec wake = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - (double)(time_t)t) * 1e9)};
        pthread_cond_timedwait(&b->cv, &b->mu, &wake);
    }
    for (int i = 0; i < n && !rc; i++)
        if (b->l[i].done) {
            v[i].n = b->l[i].naddr;
            memcpy(v[i].addr, b->l[i].addr, sizeof v[i].addr);
        }
    b->abandoned = 1;
    pthread_mutex_unlock(&b->mu);
    batch_leave(b);
    return rc;
}

static int same(const host_addrs *a, const host_addrs *b)
{
    if (a->local || b->local) return a->local && b->local;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (a->addr[i] == b->addr[j]) return 1;
    return 0;
}

int t2__pool_check_aliases(t2__host *h, int n, const char *what, const volatile sig_atomic_t *stop)
{
    host_addrs *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "resources.hostfile: out of memory");
    int rc = resolve_all(h, n, v, stop);
    if (rc) {
        free(v);
        return rc;
    }
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0) ifs = NULL; /* then loopback alone is this machine */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < v[i].n; k++) v[i].local |= is_local(v[i].addr[k], ifs);
        /* Kept for the controller's listening address (route.h), which then looks nothing up. */
        struct in_addr a = {htonl(v[i].addr[0])};
        if (!v[i].n || !inet_ntop(AF_INET, &a, h[i].ipv4, sizeof h[i].ipv4)) h[i].ipv4[0] = '\0';
    }
    if (ifs) freeifaddrs(ifs);
    /* Quadratic in the hosts: a pool is tens of hosts, and this runs once a create or resume. A
     * Slurm allocation (what NULL) names distinct nodes by construction: its names are looked up
     * for their addresses only (a search domain's wildcard would have made them "one host"). */
    for (int i = 0; what && i < n && !rc; i++)
        for (int j = i + 1; j < n && !rc && v[i].n; j++)
            if (v[j].n && same(&v[i], &v[j])) {
                char addr[INET_ADDRSTRLEN] = "";
                struct in_addr a = {htonl(v[j].addr[0])};
                inet_ntop(AF_INET, &a, addr, sizeof addr);
                rc = t2_seterr(T2_EINVAL,
                               "%s: %s and %s are one host (%s), which Open MPI takes as one node "
                               "with two slot counts and refuses at launch: list it once, with its slots added up "
                               "(slots=%lld)",
                               what, h[i].name, h[j].name, v[i].local ? "this machine" : addr,
                               (long long)h[i].slots + h[j].slots);
            }
    free(v);
    return rc;
}
