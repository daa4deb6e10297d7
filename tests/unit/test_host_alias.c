/* test_host_alias.c — a pool's names are looked up side by side on a bounded number of threads
 * (host_alias.c): every name of a 1,000-host pool is looked up once and gets its address, two
 * names of one address are still refused, and no more than 256 lookups run at once (a thread per
 * host before: hundreds at once for a large pool); the wait grows with the rounds of 256 that a
 * resolver taking its whole timeout on each name needs. getaddrinfo is interposed here (the
 * library calls it through the dynamic linker): it counts the lookups in flight, holds each
 * 20 ms, and passes on to the real one. The names are dotted addresses: no resolver is asked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "controller/slot_pool.h"

static atomic_int in_flight, most, calls;
static int (*real)(const char *, const char *, const struct addrinfo *, struct addrinfo **); /* set by main */

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res)
{
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    for (int m = atomic_load(&most); now > m && !atomic_compare_exchange_weak(&most, &m, now);) {
    }
    atomic_fetch_add(&calls, 1);
    nanosleep(&(struct timespec){0, 20000000}, NULL);
    int rc = real ? real(node, service, hints, res) : EAI_FAIL;
    atomic_fetch_sub(&in_flight, 1);
    return rc;
}

#define N 1000

int main(void)
{
    *(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo"); /* before any thread calls it */
    static t2__host h[N];
    for (int i = 0; i < N; i++) {
        snprintf(h[i].name, sizeof h[i].name, "10.77.%d.%d", i / 200, i % 200 + 1);
        h[i].slots = 1;
    }
    CHECK_OK(t2__pool_check_aliases(h, N, "resources.hostfile test", NULL));
    int resolved = 0;
    for (int i = 0; i < N; i++) resolved += strcmp(h[i].ipv4, h[i].name) == 0;
    CHECK(resolved == N);
    CHECK(atomic_load(&calls) == N);
    int peak = atomic_load(&most);
    printf("test_host_alias: %d names, %d lookups, at most %d at once\n", N, atomic_load(&calls), peak);
    CHECK(peak >= 2 && peak <= 256);
    CHECK(t2__host_lookup_deadline(1) == 12.0 && t2__host_lookup_deadline(256) == 12.0 &&
          t2__host_lookup_deadline(257) == 24.0 && t2__host_lookup_deadline(1000) == 48.0);

    /* The last name is the first one's address again: refused, naming both. */
    snprintf(h[N - 1].name, sizeof h[N - 1].name, "%s", h[0].name);
    CHECK(t2__pool_check_aliases(h, N, "resources.hostfile test", NULL) == T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "10.77.0.1 and 10.77.0.1 are one host") != NULL);
    return check_report("test_host_alias");
}
