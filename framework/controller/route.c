/* route.c — the controller's listening address: the interface the pool's hosts can reach. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
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

int t2__controller_bind_address(const char *configured, const char *const *hosts, int nhosts, char *out, size_t len)
{
    struct in_addr a;
    const char *env = getenv("T2EXP_CONTROLLER_ADDR");
    const char *given = configured && *configured ? configured : env && *env ? env : NULL;
    if (given) {
        if (inet_pton(AF_INET, given, &a) != 1)
            return t2_seterr(T2_EINVAL, "%s: not an IPv4 address: %s",
                             given == configured ? "resources.controller_address" : "T2EXP_CONTROLLER_ADDR", given);
        snprintf(out, len, "%s", given);
        return T2_OK;
    }
    for (int h = 0; h < nhosts; h++) {
        char src[INET_ADDRSTRLEN];
        int rc = t2__route_source(hosts[h], src, sizeof src);
        if (rc) return rc;
        /* A host reached over loopback is this machine: look further for a remote one. */
        if (strncmp(src, "127.", 4) != 0) {
            snprintf(out, len, "%s", src);
            return T2_OK;
        }
    }
    snprintf(out, len, "127.0.0.1");
    return T2_OK;
}
