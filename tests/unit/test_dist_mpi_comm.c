/* test_dist_mpi_comm.c — the MPI communicator's collectives, run by ctest under
 * `mpirun -np 2` and `mpirun -np 3` (odd world size): odd and large buffer sizes, buffers split
 * into several MPI calls, the weighted metric reduction with unequal shards, min/max, byte
 * broadcasts, the rank-0 message relay (none, empty, large), agreement checks, timing, and MPI
 * errors coming back as T2_EIO with MPI's text instead of aborting the job. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "dist/comm.h"

static t2__comm c;

/* Mean of integers: exact in float, so every element must match exactly. */
static void mean_exact(size_t n, size_t max_count)
{
    float *b = malloc(n * sizeof *b);
    if (!b) { CHECK(!"out of memory"); return; }
    for (size_t i = 0; i < n; i++) b[i] = (float)((c.rank + 1) * (int)(i % 97 + 1));
    c.max_count = max_count;
    CHECK_OK(t2__comm_allreduce_mean(&c, b, n));
    c.max_count = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += b[i] != (float)(i % 97 + 1) * (float)(c.size + 1) / 2.0f;
    if (bad) fprintf(stderr, "rank %d: mean of %zu floats (pieces of %zu): %zu wrong\n", c.rank, n, max_count, bad);
    CHECK(bad == 0);
    free(b);
}

/* Mean of arbitrary floats against a double reference. */
static void mean_rounded(size_t n)
{
    float *b = malloc(n * sizeof *b);
    if (!b) { CHECK(!"out of memory"); return; }
    for (size_t i = 0; i < n; i++) b[i] = (float)sin(0.37 * (double)i + c.rank);
    CHECK_OK(t2__comm_allreduce_mean(&c, b, n));
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double want = 0.0;
        for (int r = 0; r < c.size; r++) want += (float)sin(0.37 * (double)i + r);
        want /= c.size;
        worst = fmax(worst, fabs(b[i] - want));
    }
    CHECK(worst < 1e-6);
    /* Every rank must hold bit-identical results (replicas must not drift apart). */
    CHECK_OK(t2__comm_agree(&c, b, n * sizeof *b, "the averaged buffer"));
    free(b);
}

static void sums_and_metrics(void)
{
    int S = c.size, r = c.rank;
    double d[5];
    for (int i = 0; i < 5; i++) d[i] = r + 0.5 * i;
    CHECK_OK(t2__comm_allreduce_sum_double(&c, d, 5));
    for (int i = 0; i < 5; i++) CHECK(d[i] == S * 0.5 * i + S * (S - 1) / 2.0);

    /* Validation accuracy over unequal shards: rank r saw 2r+9 samples and got r+5 right. The
     * answer is total correct / total samples, not the mean of the ranks' accuracies. */
    double sum[2] = {r + 5.0, (r + 5.0) * 0.25}, weight[2] = {2.0 * r + 9.0, 2.0 * r + 9.0};
    CHECK_OK(t2__comm_allreduce_weighted(&c, sum, weight, 2));
    double correct = 0, seen = 0;
    for (int k = 0; k < S; k++) correct += k + 5, seen += 2 * k + 9;
    CHECK(sum[0] == correct && weight[0] == seen && weight[1] == seen);
    CHECK_NEAR(sum[0] / weight[0], correct / seen, 1e-15);

    double mn[3], mx[3];
    for (int i = 0; i < 3; i++) mn[i] = r - i, mx[i] = r + i;
    CHECK_OK(t2__comm_allreduce_minmax(&c, mn, mx, 3));
    for (int i = 0; i < 3; i++) CHECK(mn[i] == -i && mx[i] == S - 1 + i);
    double only_max[1] = {-(double)r};
    CHECK_OK(t2__comm_allreduce_minmax(&c, NULL, only_max, 1));
    CHECK(only_max[0] == 0.0);
}

static void broadcasts(void)
{
    static const size_t sizes[] = {1, 3, 4097, 1000003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *b = malloc(n);
        if (!b) { CHECK(!"out of memory"); return; }
        for (size_t i = 0; i < n; i++) b[i] = c.rank == 0 ? (unsigned char)(i * 31 + 7) : 0;
        c.max_count = k == 2 ? 5 : 0; /* 4097 bytes in pieces of 5: 820 MPI calls */
        CHECK_OK(t2__comm_broadcast(&c, b, n));
        c.max_count = 0;
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += b[i] != (unsigned char)(i * 31 + 7);
        CHECK(bad == 0);
        free(b);
    }
}

static void relay(const char *text, size_t len)
{
    char *msg = c.rank == 0 ? (char *)text : (char *)"stale";
    size_t n = c.rank == 0 ? len : 99;
    CHECK_OK(t2__comm_broadcast_msg(&c, &msg, &n));
    if (!text) {
        CHECK(msg == NULL && (c.rank == 0 || n == 0));
        return;
    }
    CHECK(msg && n == len && memcmp(msg, text, len) == 0);
    if (c.rank != 0) {
        CHECK(msg && msg[len] == '\0');
        free(msg);
    }
}

static void messages(void)
{
    relay(NULL, 0);
    relay("", 0);
    relay("{\"type\":\"train\",\"length\":100}", 29);
    size_t big = 100001;
    char *t = malloc(big);
    if (!t) { CHECK(!"out of memory"); return; }
    for (size_t i = 0; i < big; i++) t[i] = (char)('a' + i % 26);
    relay(t, big);
    free(t);
}

static void agreement(void)
{
    CHECK_OK(t2__comm_agree(&c, "loss,accuracy", 13, "metric names"));
    CHECK_OK(t2__comm_agree(&c, NULL, 0, "nothing"));
    const char *mine = c.rank == c.size - 1 ? "loss,acc" : "loss,accuracy";
    CHECK_RC(t2__comm_agree(&c, mine, strlen(mine), "metric names"), T2_ESTATE);
    CHECK(strstr(t2_errmsg(), "metric names") != NULL);
}

/* MPI errors return: a broadcast whose receivers expect fewer bytes than the root sends is
 * truncated, and that must come back as T2_EIO naming MPI's error, on the receivers only. Only
 * with 2 ranks: with more, the broadcast is a tree and a receiver that failed does not forward,
 * so the ranks below it would wait forever (which is why the runner must stop on any error). */
static void mpi_error(void)
{
    char buf[64] = {0};
    c.max_count = 0;
    int rc = t2__mpi_bcast(&c, buf, c.rank == 0 ? sizeof buf : 8);
    if (c.rank == 0) {
        CHECK_OK(rc);
    } else {
        CHECK_RC(rc, T2_EIO);
        CHECK(strstr(t2_errmsg(), "MPI_Bcast") != NULL && strstr(t2_errmsg(), "truncat") != NULL);
        printf("rank %d: provoked MPI error -> %s\n", c.rank, t2_errmsg());
    }
}

int main(int argc, char **argv)
{
    int rc = t2__comm_init_auto(&c, &argc, &argv);
    if (rc) {
        fprintf(stderr, "test_dist_mpi_comm: init: %s\n", t2_errmsg());
        return 1;
    }
    if (!c.mpi || c.size < 2) {
        fprintf(stderr, "test_dist_mpi_comm: run me with mpirun -np 2 or more (got %d rank%s)\n", c.size,
                c.size == 1 ? "" : "s");
        t2__comm_finalize(&c);
        return 1;
    }
    static const size_t sizes[] = {1, 2, 3, 7, 1000, 1199882, 1048577};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) mean_exact(sizes[k], 0);
    mean_exact(1000, 7);   /* 143 pieces, the last one short */
    mean_exact(1001, 1000); /* one full piece and a piece of one */
    mean_rounded(12345);
    CHECK_OK(t2__comm_allreduce_mean(&c, NULL, 0));
    CHECK(c.seconds > 0.0);
    sums_and_metrics();
    broadcasts();
    messages();
    agreement();
    CHECK_OK(t2__comm_barrier(&c));
    if (c.size == 2) mpi_error();
    CHECK_OK(t2__comm_barrier(&c));

    /* Every rank's verdict decides the exit status of each (mpirun fails if any rank fails). */
    double failures = check_failures;
    CHECK_OK(t2__comm_allreduce_sum_double(&c, &failures, 1));
    int rank = c.rank, size = c.size;
    t2__comm stale = c;
    CHECK_OK(t2__comm_finalize(&c));
    CHECK(c.mpi == 0 && c.size == 1);
    /* After finalisation a collective is a clear error, never a crash. */
    float f = 1.0f;
    CHECK_RC(t2__comm_allreduce_mean(&stale, &f, 1), T2_ESTATE);
    if (failures > 0 && !check_failures) check_failures = 1;
    if (rank != 0) return check_failures ? 1 : 0;
    printf("%d ranks\n", size);
    return check_report("test_dist_mpi_comm");
}
