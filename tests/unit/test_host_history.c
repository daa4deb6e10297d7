/* test_host_history.c — a trial's `hosts` history (controller/host_history.h): every placement
 * in order of first use, each once; a local run only after a pool run (probe_L finding 7). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "controller/host_history.h"
#include "t2exp.h"

/* history + run, or history itself when the run adds nothing (NULL: none). */
static char *add(const char *history, const char *run)
{
    char *out = (char *)"unset";
    CHECK_OK(t2__hosts_history_add(history, run, &out));
    if (out) return out;
    char *same = history ? strdup(history) : NULL;
    CHECK(!history || same);
    return same;
}

int main(void)
{
    /* The first run's hosts are the history; a restart on another host adds it (the netns
     * probe's trial showed only 10.78.0.1:1 after 10.78.0.2 died under it). */
    char *h = add(NULL, "10.78.0.2:1");
    CHECK_STR(h, "10.78.0.2:1");
    char *h2 = add(h, "10.78.0.1:1");
    CHECK_STR(h2, "10.78.0.2:1; 10.78.0.1:1");
    /* A placement used before is not repeated, nor is a prefix taken for it. */
    char *out = (char *)"unset";
    CHECK_OK(t2__hosts_history_add(h2, "10.78.0.2:1", &out));
    CHECK(out == NULL);
    CHECK_OK(t2__hosts_history_add(h2, "10.78.0.1:1", &out));
    CHECK(out == NULL);
    char *h3 = add(h2, "10.78.0.2:10");
    CHECK_STR(h3, "10.78.0.2:1; 10.78.0.1:1; 10.78.0.2:10");
    /* A multi-host run is one placement. */
    char *h4 = add(h3, "node1:2,node2:2");
    CHECK_STR(h4, "10.78.0.2:1; 10.78.0.1:1; 10.78.0.2:10; node1:2,node2:2");
    CHECK_OK(t2__hosts_history_add(h4, "node1:2", &out));
    CHECK(out != NULL);
    free(out);
    /* Local runs: nothing for a trial that only ran here (the column stays empty); after a pool
     * run (a Slurm experiment resumed outside its job), "local" says where it went on. */
    CHECK_OK(t2__hosts_history_add(NULL, T2__HOSTS_LOCAL, &out));
    CHECK(out == NULL);
    CHECK_OK(t2__hosts_history_add("", T2__HOSTS_LOCAL, &out));
    CHECK(out == NULL);
    char *s1 = add("vm:1", T2__HOSTS_LOCAL);
    CHECK_STR(s1, "vm:1; local");
    CHECK_OK(t2__hosts_history_add(s1, T2__HOSTS_LOCAL, &out));
    CHECK(out == NULL);
    /* Back on the pool in a new job: the pool host is listed already. */
    CHECK_OK(t2__hosts_history_add(s1, "vm:1", &out));
    CHECK(out == NULL);
    /* An empty history starts afresh; a missing run is refused. */
    char *e = add("", "a:1");
    CHECK_STR(e, "a:1");
    CHECK_RC(t2__hosts_history_add("a:1", "", &out), T2_EINVAL);
    CHECK_RC(t2__hosts_history_add("a:1", NULL, &out), T2_EINVAL);
    free(h), free(h2), free(h3), free(h4), free(s1), free(e);
    return check_report("test_host_history");
}
