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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

static void resolve(const char *name, host_addrs *out, const struct ifaddrs *ifs)
{
    memset(out, 0, sizeof *out);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(name, NULL, &hints, &ai) != 0) return;
    for (struct addrinfo *p = ai; p && out->n < MAX_ADDRS; p = p->ai_next) {
        uint32_t a = ntohl(((struct sockaddr_in *)p->ai_addr)->sin_addr.s_addr);
        out->addr[out->n++] = a;
        out->local |= is_local(a, ifs);
    }
    freeaddrinfo(ai);
}

static int same(const host_addrs *a, const host_addrs *b)
{
    if (a->local || b->local) return a->local && b->local;
    for (int i = 0; i < a->n; i++)
        for (int j = 0; j < b->n; j++)
            if (a->addr[i] == b->addr[j]) return 1;
    return 0;
}

int t2__pool_check_aliases(const t2__host *h, int n, const char *path)
{
    host_addrs *v = calloc(n > 0 ? (size_t)n : 1, sizeof *v);
    if (!v) return t2_seterr(T2_ENOMEM, "resources.hostfile: out of memory");
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0) ifs = NULL; /* then loopback alone is this machine */
    for (int i = 0; i < n; i++) resolve(h[i].name, &v[i], ifs);
    if (ifs) freeifaddrs(ifs);
    int rc = T2_OK;
    /* Quadratic in the hosts: a pool is tens of hosts, and this runs once a create or resume. */
    for (int i = 0; i < n && !rc; i++)
        for (int j = i + 1; j < n && !rc && v[i].n; j++)
            if (v[j].n && same(&v[i], &v[j])) {
                char addr[INET_ADDRSTRLEN] = "";
                struct in_addr a = {htonl(v[j].addr[0])};
                inet_ntop(AF_INET, &a, addr, sizeof addr);
                rc = t2_seterr(T2_EINVAL,
                               "resources.hostfile %s: %s and %s are one host (%s), which Open MPI takes as one node "
                               "with two slot counts and refuses at launch: list it once, with its slots added up "
                               "(slots=%lld)",
                               path, h[i].name, h[j].name, v[i].local ? "this machine" : addr,
                               (long long)h[i].slots + h[j].slots);
            }
    free(v);
    return rc;
}
