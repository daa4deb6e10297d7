/* test_dist_single.c — the communicator without mpirun (every build): a single rank's
 * collectives are identities, launcher detection reads the environment, init_auto picks the
 * single rank when no launcher started us, and misuse is an error rather than a hang. The MPI
 * collectives themselves are tested under mpirun by test_dist_mpi_comm.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dist/comm.h"

static void identities(void)
{
    t2__comm c;
    t2__comm_init_single(&c);
    CHECK(c.rank == 0 && c.size == 1 && c.mpi == 0 && c.seconds == 0.0);
    float f[3] = {1.5f, -2.0f, 3.25f};
    CHECK_OK(t2__comm_allreduce_mean(&c, f, 3));
    CHECK(f[0] == 1.5f && f[1] == -2.0f && f[2] == 3.25f);
    double d[2] = {4.0, 5.0}, w[2] = {2.0, 1.0}, mn[2] = {1.0, 2.0}, mx[2] = {3.0, 4.0};
    CHECK_OK(t2__comm_allreduce_sum_double(&c, d, 2));
    CHECK(d[0] == 4.0 && d[1] == 5.0);
    CHECK_OK(t2__comm_allreduce_weighted(&c, d, w, 2));
    CHECK(d[0] == 4.0 && w[0] == 2.0 && d[1] == 5.0 && w[1] == 1.0);
    CHECK_OK(t2__comm_allreduce_minmax(&c, mn, mx, 2));
    CHECK(mn[0] == 1.0 && mx[1] == 4.0);
    char bytes[5] = "abcd";
    CHECK_OK(t2__comm_broadcast(&c, bytes, 4));
    CHECK(strcmp(bytes, "abcd") == 0);
    CHECK_OK(t2__comm_barrier(&c));
    char *msg = "op";
    size_t len = 2;
    CHECK_OK(t2__comm_broadcast_msg(&c, &msg, &len));
    CHECK(strcmp(msg, "op") == 0 && len == 2);
    CHECK_OK(t2__comm_agree(&c, "x", 1, "x"));
    /* Empty buffers are no-ops, even with NULL pointers. */
    CHECK_OK(t2__comm_allreduce_mean(&c, NULL, 0));
    CHECK_OK(t2__comm_broadcast(&c, NULL, 0));
    CHECK_OK(t2__comm_finalize(&c));
    CHECK(c.size == 1 && c.mpi == 0);
}

static void misuse(void)
{
    t2__comm c;
    t2__comm_init_single(&c);
    float f = 1.0f;
    CHECK_RC(t2__comm_allreduce_mean(NULL, &f, 1), T2_EINVAL);
    CHECK_RC(t2__comm_broadcast_msg(&c, NULL, NULL), T2_EINVAL);
    /* A communicator claiming several ranks without MPI must refuse, not pretend. */
    c.size = 2;
    CHECK_RC(t2__comm_allreduce_mean(&c, &f, 1), T2_EUNSUPPORTED);
    CHECK(strstr(t2_errmsg(), "MPI") != NULL);
    CHECK_RC(t2__comm_broadcast(&c, &f, 4), T2_EUNSUPPORTED);
    CHECK_RC(t2__comm_barrier(&c), T2_EUNSUPPORTED);
}

static void launcher_detection(void)
{
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    CHECK(t2__comm_launched_size() == 0);
    t2__comm c;
    CHECK_OK(t2__comm_init_auto(&c, NULL, NULL));
    CHECK(c.size == 1 && c.mpi == 0);
    setenv("PMI_SIZE", "3", 1);
    CHECK(t2__comm_launched_size() == 3);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    CHECK(t2__comm_launched_size() == 4);
    setenv("OMPI_COMM_WORLD_SIZE", "4x", 1);
    CHECK(t2__comm_launched_size() == 3);
    setenv("PMI_SIZE", "", 1);
    CHECK(t2__comm_launched_size() == 0);
    if (!t2__comm_have_mpi()) {
        /* Several ranks asked for, no MPI: an error that says how to fix it. */
        setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
        CHECK_RC(t2__comm_init_auto(&c, NULL, NULL), T2_EUNSUPPORTED);
        CHECK(strstr(t2_errmsg(), "T2EXP_WITH_MPI") != NULL);
        CHECK_RC(t2__comm_init_mpi(&c, NULL, NULL), T2_EUNSUPPORTED);
    }
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
}

int main(void)
{
    identities();
    misuse();
    launcher_detection();
    printf("MPI in this build: %s\n", t2__comm_have_mpi() ? "yes" : "no");
    return check_report("test_dist_single");
}
