/* test_slurm_alloc.c — a Slurm allocation read as the slot pool: compact node lists expanded
 * ("node[01-03,07]", several brackets, zero padding kept), per-node counts ("2(x3),1") matched
 * to the nodes, the environment read (SLURM_TASKS_PER_NODE before SLURM_JOB_CPUS_PER_NODE), and
 * every malformed value refused naming the variable and the column. */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "controller/slurm_alloc.h"
#include "controller/slot_pool.h"

static t2__host *hosts;
static int nhosts;

static int expand(const char *list)
{
    free(hosts);
    hosts = NULL;
    return t2__slurm_nodelist(list, "SLURM_JOB_NODELIST", &hosts, &nhosts);
}

/* The names, space-separated, for comparing a whole expansion at once. */
static const char *names(void)
{
    static char buf[4096];
    size_t n = 0;
    buf[0] = '\0';
    for (int h = 0; h < nhosts && n + 300 < sizeof buf; h++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", h ? " " : "", hosts[h].name);
    return buf;
}

/* The call must fail with T2_EINVAL and a message containing `want`. */
#define REFUSED(expr, want)                                                                        \
    do {                                                                                           \
        CHECK_RC(expr, T2_EINVAL);                                                                 \
        if (!strstr(t2_errmsg(), want)) {                                                          \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, t2_errmsg(), want); \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

static void test_nodelist(void)
{
    CHECK_OK(expand("vm"));
    CHECK_STR(names(), "vm");
    CHECK(nhosts == 1 && hosts[0].slots == 0 && hosts[0].used == 0 && hosts[0].dead == 0);
    CHECK_OK(expand("node[01-03,07]"));
    CHECK_STR(names(), "node01 node02 node03 node07");
    CHECK_OK(expand("a[8-10],login,b[098-100]-ib,c[5]"));
    CHECK_STR(names(), "a8 a9 a10 login b098-ib b099-ib b100-ib c5");
    /* Several brackets: a cartesian product, the leftmost outermost. */
    CHECK_OK(expand("r[1-2]n[1-2]"));
    CHECK_STR(names(), "r1n1 r1n2 r2n1 r2n2");
    CHECK_OK(expand("[1-2]x"));
    CHECK_STR(names(), "1x 2x");
    CHECK_OK(expand("gpu-node.example.org,10.0.0.7"));
    CHECK(nhosts == 2 && !strcmp(hosts[1].name, "10.0.0.7"));

    REFUSED(expand(""), "SLURM_JOB_NODELIST: an empty node list");
    REFUSED(expand("node[01-03"), "\"node[01-03\" at column 5: a '[' without its ']'");
    REFUSED(expand("node01-03]"), "at column 10: a ']' without its '['");
    REFUSED(expand("n[1-[2]]"), "at column 5: a '[' inside brackets");
    REFUSED(expand("n[]"), "an empty range list");
    REFUSED(expand("n[3-1]"), "at column 5: a range that ends below its start");
    REFUSED(expand("n[1-]"), "at column 5: a range needs a number here");
    REFUSED(expand("n[a]"), "at column 3: a range needs a number here");
    REFUSED(expand("n[1;2]"), "at column 4: a range holds only digits");
    REFUSED(expand("n[1,]"), "a ',' with no range after it");
    REFUSED(expand("a,,b"), "at column 3: an empty host name");
    REFUSED(expand("a,"), "a ',' with no host after it");
    REFUSED(expand("-rf"), "host name \"-rf\" must start with a letter");
    REFUSED(expand("root@n1"), "host name \"root@n1\" has a character");
    REFUSED(expand("n 1"), "has a character");
    REFUSED(expand("n[0-999999999]"), "more than 100000 hosts");
    REFUSED(expand("n[1234567890123456789]"), "more than 18 digits");
    CHECK(hosts == NULL && nhosts == 0);
    char longname[300];
    memset(longname, 'a', 260);
    longname[260] = '\0';
    REFUSED(expand(longname), "longer than 253 characters");
    memcpy(longname + 252, "[8-10]", 7); /* 252 a: a8 and a9 fit in 253 characters, a10 does not */
    REFUSED(expand(longname), "longer than 253 characters");
}

static void test_counts(void)
{
    int c[8];
    CHECK_OK(t2__slurm_counts("2(x3),1", "SLURM_TASKS_PER_NODE", c, 4));
    CHECK(c[0] == 2 && c[1] == 2 && c[2] == 2 && c[3] == 1);
    CHECK_OK(t2__slurm_counts("16", "X", c, 1));
    CHECK(c[0] == 16);
    CHECK_OK(t2__slurm_counts("1,2,3", "X", c, 3));
    CHECK(c[0] == 1 && c[1] == 2 && c[2] == 3);
    REFUSED(t2__slurm_counts("2(x3),1", "SLURM_TASKS_PER_NODE", c, 3),
            "SLURM_TASKS_PER_NODE: \"2(x3),1\" gives counts for more than the 3 node(s)");
    REFUSED(t2__slurm_counts("2(x2)", "X", c, 3), "gives counts for 2 node(s), the node list has 3");
    REFUSED(t2__slurm_counts("", "X", c, 1), "at column 1: expected a count");
    REFUSED(t2__slurm_counts("0", "X", c, 1), "expected a count from 1 to 2147483647");
    REFUSED(t2__slurm_counts("2147483648", "X", c, 1), "expected a count from 1 to 2147483647");
    REFUSED(t2__slurm_counts("2(3)", "X", c, 3), "at column 2: expected a repeat \"(xN)\"");
    REFUSED(t2__slurm_counts("2(x", "X", c, 3), "expected a repeat");
    REFUSED(t2__slurm_counts("2(x0)", "X", c, 3), "expected a repeat");
    REFUSED(t2__slurm_counts("2;1", "X", c, 2), "at column 2: expected ',' between counts");
    REFUSED(t2__slurm_counts("2,", "X", c, 2), "at column 3: expected a count");
}

static void clear_env(void)
{
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_JOB_NODELIST");
    unsetenv("SLURM_NODELIST");
    unsetenv("SLURM_TASKS_PER_NODE");
    unsetenv("SLURM_JOB_CPUS_PER_NODE");
    unsetenv("SLURM_STEP_ID");
}

static void test_env(void)
{
    t2__slot_pool p;
    clear_env();
    /* Outside a job, or with the allocation turned off, the pool is empty (trials run here). */
    CHECK_OK(t2__pool_load(&p, NULL, 1, NULL));
    CHECK(p.nhosts == 0 && p.hosts == NULL && p.origin[0] == '\0');
    setenv("SLURM_JOB_ID", "42", 1);
    setenv("SLURM_JOB_NODELIST", "n[1-3]", 1);
    setenv("SLURM_TASKS_PER_NODE", "2(x2),1", 1);
    setenv("SLURM_JOB_CPUS_PER_NODE", "8(x3)", 1);
    CHECK_OK(t2__pool_load(&p, NULL, 0, NULL));
    CHECK(p.nhosts == 0);
    CHECK_OK(t2__pool_load(&p, NULL, 1, NULL));
    CHECK(p.nhosts == 3 && p.total == 5);
    if (p.nhosts == 3)
        CHECK(!strcmp(p.hosts[2].name, "n3") && p.hosts[0].slots == 2 && p.hosts[2].slots == 1);
    CHECK_STR(p.origin, "Slurm job 42: SLURM_JOB_NODELIST=n[1-3], SLURM_TASKS_PER_NODE=2(x2),1");
    t2__pool_free(&p);
    /* Inside a step of the job (srun), SLURM_TASKS_PER_NODE is the step's: refused, saying where to
     * run instead (it mixed with the job's node list; probe_N). The batch script's step is fine. */
    setenv("SLURM_STEP_ID", "0", 1);
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "Slurm job 42: t2exp runs inside its step 0 (srun)");
    CHECK(p.hosts == NULL && p.nhosts == 0);
    setenv("SLURM_STEP_ID", "4294967289", 1); /* the last number a user's step may have */
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "inside its step 4294967289 (srun)");
    /* Slurm's own steps: the batch script's (4294967294 before Slurm 20.11, 4294967291 since), the
     * interactive one of salloc (4294967290), the extern one. */
    static const char *const own[] = {"4294967294", "4294967291", "4294967290", "4294967292", "4294967295"};
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++) {
        setenv("SLURM_STEP_ID", own[k], 1);
        CHECK_OK(t2__pool_load(&p, NULL, 1, NULL));
        CHECK(p.nhosts == 3 && p.total == 5);
        t2__pool_free(&p);
    }
    unsetenv("SLURM_STEP_ID");
    /* Without tasks per node, the CPUs; without SLURM_JOB_NODELIST, the older SLURM_NODELIST. */
    unsetenv("SLURM_TASKS_PER_NODE");
    unsetenv("SLURM_JOB_NODELIST");
    setenv("SLURM_NODELIST", "n[1-3]", 1);
    CHECK_OK(t2__pool_load(&p, NULL, 1, NULL));
    CHECK(p.nhosts == 3 && p.total == 24);
    CHECK_STR(p.origin, "Slurm job 42: SLURM_NODELIST=n[1-3], SLURM_JOB_CPUS_PER_NODE=8(x3)");
    t2__pool_free(&p);
    /* A malformed or missing variable stops the run, naming it and the way out. */
    setenv("SLURM_JOB_CPUS_PER_NODE", "8(x2)", 1);
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "Slurm job 42: SLURM_JOB_CPUS_PER_NODE: \"8(x2)\" gives counts for 2");
    CHECK(strstr(t2_errmsg(), "resources.slurm: off") != NULL);
    CHECK(p.hosts == NULL && p.nhosts == 0);
    unsetenv("SLURM_JOB_CPUS_PER_NODE");
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "SLURM_TASKS_PER_NODE (or SLURM_JOB_CPUS_PER_NODE) is not set");
    setenv("SLURM_TASKS_PER_NODE", "1", 1);
    unsetenv("SLURM_NODELIST");
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "SLURM_JOB_NODELIST (or SLURM_NODELIST) is not set");
    setenv("SLURM_JOB_NODELIST", "n[1", 1);
    REFUSED(t2__pool_load(&p, NULL, 1, NULL), "Slurm job 42: SLURM_JOB_NODELIST: \"n[1\" at column 2");
    clear_env();
}

int main(void)
{
    test_nodelist();
    test_counts();
    test_env();
    free(hosts);
    return check_report("test_slurm_alloc");
}
