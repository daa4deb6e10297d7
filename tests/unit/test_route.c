/* test_route.c — the controller's listening address: configured, from the environment, or the
 * interface that routes to the hostfile's hosts (those that resolve); always one of this
 * machine's, never the wildcard. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "configs/config.h"
#include "controller/route.h"
#include "t2exp.h"
#include "test_config_util.h"

int main(void)
{
    char a[64];
    unsetenv("T2EXP_CONTROLLER_ADDR");
    /* Loopback routes over loopback. */
    CHECK(t2__route_source("127.0.0.1", a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.1");
    CHECK(t2__route_source("localhost", a, sizeof a) == T2_OK);
    CHECK(strncmp(a, "127.", 4) == 0);
    CHECK(t2__route_source("no-such-host.invalid", a, sizeof a) == T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "no-such-host.invalid") != NULL);
    CHECK(t2__route_source("127.0.0.1", a, 4) == T2_EINVAL);

    /* No hostfile, or only this machine in it: loopback, not 0.0.0.0. */
    CHECK(t2__controller_bind_address(NULL, NULL, 0, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.1");
    const char *local[] = {"localhost", "127.0.0.1"};
    CHECK(t2__controller_bind_address(NULL, local, 2, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.1");
    /* The config wins, then the environment; each must be an address of this machine (all of
     * 127/8 is), never the wildcard, broadcast, multicast or another machine's. */
    CHECK(t2__controller_bind_address("127.0.0.3", local, 2, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.3");
    setenv("T2EXP_CONTROLLER_ADDR", "127.0.0.2", 1);
    CHECK(t2__controller_bind_address(NULL, local, 2, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.2");
    CHECK(t2__controller_bind_address("127.0.0.3", NULL, 0, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.3");
    setenv("T2EXP_CONTROLLER_ADDR", "not-an-address", 1);
    CHECK(t2__controller_bind_address(NULL, NULL, 0, a, sizeof a) == T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "T2EXP_CONTROLLER_ADDR") != NULL);
    setenv("T2EXP_CONTROLLER_ADDR", "0.0.0.0", 1);
    CHECK(t2__controller_bind_address(NULL, NULL, 0, a, sizeof a) == T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "T2EXP_CONTROLLER_ADDR: 0.0.0.0 is not an address of one interface") != NULL);
    unsetenv("T2EXP_CONTROLLER_ADDR");
    static const char *const refused[] = {"0.0.0.0", "255.255.255.255", "224.0.0.1", "192.0.2.1", "10.1.2.3"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        CHECK(t2__controller_address_check(refused[k], "resources.controller_address") == T2_EINVAL);
        CHECK(strstr(t2_errmsg(), "resources.controller_address: ") != NULL && strstr(t2_errmsg(), refused[k]) != NULL);
        CHECK(t2__controller_bind_address(refused[k], NULL, 0, a, sizeof a) == T2_EINVAL);
    }
    CHECK(t2__controller_address_check("127.0.0.1", "resources.controller_address") == T2_OK);
    /* A host that does not resolve (now) is passed over: its own launch fails later and the host
     * leaves the pool; the address comes from the others. */
    const char *bad[] = {"no-such-host.invalid"};
    CHECK(t2__controller_bind_address(NULL, bad, 1, a, sizeof a) == T2_OK);
    CHECK_STR(a, "127.0.0.1");

    /* A remote host: the address of the interface on its route (a machine with a non-loopback
     * route only; the address must be one of ours, i.e. not the host's own). */
    if (t2__route_source("192.0.2.77", a, sizeof a) == T2_OK) {
        const char *remote[] = {"localhost", "192.0.2.77"};
        char b[64];
        CHECK(t2__controller_bind_address(NULL, remote, 2, b, sizeof b) == T2_OK);
        CHECK_STR(b, a);
        CHECK(strcmp(b, "192.0.2.77") != 0 && strcmp(b, "0.0.0.0") != 0);
        printf("route to 192.0.2.77 leaves from %s\n", b);
    } else {
        printf("no route to 192.0.2.77 here: the remote case is not exercised\n");
    }

    /* resources.controller_address in a config: an IPv4 address, else a located error. */
    t2__config *cfg = NULL;
    CHECK(t2__config_load_string(MINIMAL "resources:\n  controller_address: 10.0.0.5\n", "c.yaml", NULL, 0, &cfg) == T2_OK);
    if (cfg) CHECK_STR(cfg->resources.controller_address, "10.0.0.5");
    t2__config_free(cfg);
    cfg = NULL;
    CHECK(t2__config_load_string(MINIMAL "resources:\n  controller_address: eth0\n", "c.yaml", NULL, 0, &cfg) != T2_OK);
    CHECK(strstr(t2_errmsg(), "c.yaml:9:") != NULL);
    CHECK(strstr(t2_errmsg(), "resources.controller_address") != NULL);
    t2__config_free(cfg);
    return check_report("test_route");
}
