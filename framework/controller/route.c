/* route.c — the controller's listening address: the interface the pool's hosts can reach. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "route.h"
#include "t2exp/error.h"

int t2__route_source(const char *host, char *out, size_t len)
{
    if (!host || !out || len < INET_ADDRSTRLEN) return t2_seterr(T2_EINVAL, "route: bad arguments");
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *ai = NULL;
    int g = getaddrinfo(host, "9", &hints, &ai);
    if (g != 0 || !ai)
        return t2_seterr(T2_ENOTFOUND, "host %s: no IPv4 address (%s)", host, g ? gai_strerror(g) : "none");
    int rc = T2_OK;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me;
    socklen_t ml = sizeof me;
    if (s < 0) rc = t2_seterr(T2_EIO, "route to %s: socket: %s", host, strerror(errno));
    else if (connect(s, ai->ai_addr, ai->ai_addrlen) != 0)
        rc = t2_seterr(T2_EIO, "no route to host %s: %s", host, strerror(errno));
    else if (getsockname(s, (struct sockaddr *)&me, &ml) != 0 || !inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)len))
        rc = t2_seterr(T2_EIO, "route to %s: %s", host, strerror(errno));
    if (s >= 0) close(s);
    freeaddrinfo(ai);
    return rc;
}

int t2__route_is_local(const char *ipv4)
{
    if (!ipv4 || !ipv4[0]) return -1;
    if (!strncmp(ipv4, "127.", 4)) return 1;
    char src[INET_ADDRSTRLEN];
    if (t2__route_source(ipv4, src, sizeof src) != T2_OK) {
        t2_clearerr();
        return -1;
    }
    /* A route to one of this machine's own addresses starts from that address. */
    return !strncmp(src, "127.", 4) || !strcmp(src, ipv4);
}

int t2__controller_address_check(const char *addr, const char *what)
{
    struct in_addr a;
    if (!addr || inet_pton(AF_INET, addr, &a) != 1)
        return t2_seterr(T2_EINVAL, "%s: not an IPv4 address: %s", what, addr ? addr : "(null)");
    uint32_t h = ntohl(a.s_addr);
    /* The wildcard would open the port on every interface (and tell remote ranks to call back to
     * themselves); broadcast and multicast are no address to listen on. */
    if (h == INADDR_ANY || h == INADDR_BROADCAST || (h >> 28) == 0xE)
        return t2_seterr(T2_EINVAL, "%s: %s is not an address of one interface of this machine (%s)", what, addr,
                         h == INADDR_ANY ? "0.0.0.0 would listen on all of them" : h == INADDR_BROADCAST ? "broadcast" : "multicast");
    /* One of this machine's: binding a socket to it says so, as the listen will need. */
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) return t2_seterr(T2_EIO, "%s: socket: %s", what, strerror(errno));
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = 0, .sin_addr = a};
    int ok = bind(s, (struct sockaddr *)&sin, sizeof sin) == 0, err = errno;
    close(s);
    if (!ok)
        return t2_seterr(T2_EINVAL, "%s: %s is not an address of this machine (%s)", what, addr, strerror(err));
    return T2_OK;
}

int t2__controller_bind_address(const char *configured, const char *const *hosts, int nhosts, char *out, size_t len)
{
    const char *env = getenv("T2EXP_CONTROLLER_ADDR");
    const char *given = configured && *configured ? configured : env && *env ? env : NULL;
    if (given) {
        int rc = t2__controller_address_check(given, given == configured ? "resources.controller_address"
                                                                         : "T2EXP_CONTROLLER_ADDR");
        if (rc) return rc;
        snprintf(out, len, "%s", given);
        return T2_OK;
    }
    for (int h = 0; h < nhosts; h++) {
        char src[INET_ADDRSTRLEN];
        if (!hosts[h]) continue; /* no address known */
        /* A host that does not resolve now (a name service hiccup, an IPv6-only name) cannot say
         * the route: the next one can. Its own trial then fails to launch and the host leaves the
         * pool, as any unreachable host does; the experiment goes on. */
        if (t2__route_source(hosts[h], src, sizeof src) != T2_OK) {
            t2_clearerr();
            continue;
        }
        /* A host reached over loopback is this machine: look further for a remote one. */
        if (strncmp(src, "127.", 4) != 0) {
            snprintf(out, len, "%s", src);
            return T2_OK;
        }
    }
    snprintf(out, len, "127.0.0.1");
    return T2_OK;
}
