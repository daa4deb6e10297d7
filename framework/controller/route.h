/* route.h — which local address the controller listens on for remote ranks (internal). */
#ifndef T2_CONTROLLER_ROUTE_H
#define T2_CONTROLLER_ROUTE_H

#include <stddef.h>

/* The local IPv4 address this machine uses to reach `host` (a name or an address): the source
 * address the kernel picks for a route to it, found by connecting a UDP socket (which sends
 * nothing). T2_ENOTFOUND naming the host if it does not resolve to IPv4, T2_EIO if no route. */
int t2__route_source(const char *host, char *out, size_t len);

/* Whether the IPv4 address ipv4 is this machine's: 1 (a loopback address, or one a route to
 * starts from itself), 0 (reached over the network), -1 (no address, or no route: unknown). A
 * local lookup, no packet sent. */
int t2__route_is_local(const char *ipv4);

/* The address to listen on for a trial's ranks: `configured` (resources.controller_address) if
 * set, else $T2EXP_CONTROLLER_ADDR if set, else the address that routes to the first of the
 * hostfile's hosts that is not this machine's loopback, else 127.0.0.1 (every host is local, or
 * there is no hostfile). Never the wildcard 0.0.0.0: the port would be open on every interface.
 * hosts[h] NULL: no address known for that host, left out. */
int t2__controller_bind_address(const char *configured, const char *const *hosts, int nhosts, char *out, size_t len);

/* T2_EINVAL naming `what` (the key) unless addr is an IPv4 address of one interface of this
 * machine: not 0.0.0.0, broadcast or multicast, and a socket can be bound to it. Create and
 * resume ask before anything is recorded or started. */
int t2__controller_address_check(const char *addr, const char *what);

#endif
