/* comm_single.c — the communicator's front end: argument checks, timing, the single-rank case
 * (identities) and the collectives built from the back end's three primitives (allreduce,
 * broadcast, barrier). The MPI back end is comm_mpi.c; a build without MPI gets stubs here that
 * say so, so callers need no #ifdef. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "comm.h"
#include "t2exp/error.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void t2__comm_init_single(t2__comm *c)
{
    memset(c, 0, sizeof *c);
    c->rank = 0;
    c->size = 1;
}

static int env_size(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v > 0 && v < (1L << 24) ? (int)v : 0;
}

int t2__comm_launched_size(void)
{
    int n = env_size("OMPI_COMM_WORLD_SIZE");
    return n ? n : env_size("PMI_SIZE");
}

int t2__comm_init_auto(t2__comm *c, int *argc, char ***argv)
{
    if (!c) return t2_seterr(T2_EINVAL, "comm: NULL communicator");
    t2__comm_init_single(c);
    int n = t2__comm_launched_size();
    if (n == 0) return T2_OK;
    /* A one-rank mpirun without MPI support still works; more ranks would silently train S
     * independent copies of the trial, so that is refused. */
    if (!t2__comm_have_mpi())
        return n == 1 ? T2_OK
                      : t2_seterr(T2_EUNSUPPORTED, "started by mpirun with %d ranks, but this t2exp was built "
                                  "without MPI (configure with -DT2EXP_WITH_MPI=ON)", n);
    return t2__comm_init_mpi(c, argc, argv);
}

/* 1: go to MPI; 0: this is one rank and the collective is the identity; <0: an error. */
static int route(const t2__comm *c, const char *what)
{
    if (!c) return t2_seterr(T2_EINVAL, "%s: NULL communicator", what);
    if (c->mpi) return 1;
    return c->size == 1 ? 0 : t2_seterr(T2_EUNSUPPORTED, "%s: %d ranks need the MPI communicator", what, c->size);
}

int t2__comm_allreduce_mean(t2__comm *c, float *buf, size_t n)
{
    int r = route(c, "allreduce");
    if (r <= 0 || n == 0) return r < 0 ? r : T2_OK;
    if (!buf) return t2_seterr(T2_EINVAL, "allreduce: NULL buffer");
    double t0 = now();
    int rc = t2__mpi_allreduce(c, buf, n, T2__COMM_F32, T2__COMM_SUM);
    /* Every rank divides the same sums by the same size: the ranks' parameters stay identical. */
    const float s = (float)c->size;
    for (size_t i = 0; !rc && i < n; i++) buf[i] /= s;
    c->seconds += now() - t0;
    return rc;
}

int t2__comm_allreduce_sum_double(t2__comm *c, double *buf, size_t n)
{
    int r = route(c, "allreduce");
    if (r <= 0 || n == 0) return r < 0 ? r : T2_OK;
    if (!buf) return t2_seterr(T2_EINVAL, "allreduce: NULL buffer");
    double t0 = now();
    int rc = t2__mpi_allreduce(c, buf, n, T2__COMM_F64, T2__COMM_SUM);
    c->seconds += now() - t0;
    return rc;
}

/* Packs two arrays into one buffer so that a metric reduction is a single MPI call. */
static int packed_reduce(t2__comm *c, double *a, double *b, double fill, double sign_b, size_t n, t2__comm_op op)
{
    if (n > SIZE_MAX / (2 * sizeof(double))) return t2_seterr(T2_EINVAL, "allreduce: %zu metrics", n);
    double *t = malloc(2 * n * sizeof *t);
    if (!t) return t2_seterr(T2_ENOMEM, "allreduce: out of memory for %zu metrics", n);
    for (size_t i = 0; i < n; i++) {
        t[i] = a ? a[i] : fill;
        t[n + i] = b ? sign_b * b[i] : fill;
    }
    double t0 = now();
    int rc = t2__mpi_allreduce(c, t, 2 * n, T2__COMM_F64, op);
    c->seconds += now() - t0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (a) a[i] = t[i];
        if (b) b[i] = sign_b * t[n + i];
    }
    free(t);
    return rc;
}

int t2__comm_allreduce_weighted(t2__comm *c, double *sum, double *weight, size_t n)
{
    int r = route(c, "metric allreduce");
    if (r <= 0 || n == 0) return r < 0 ? r : T2_OK;
    if (!sum || !weight) return t2_seterr(T2_EINVAL, "metric allreduce: NULL array");
    return packed_reduce(c, sum, weight, 0.0, 1.0, n, T2__COMM_SUM);
}

int t2__comm_allreduce_minmax(t2__comm *c, double *min, double *max, size_t n)
{
    int r = route(c, "metric allreduce");
    if (r <= 0 || n == 0 || (!min && !max)) return r < 0 ? r : T2_OK;
    /* max(x) = -min(-x): one MPI_MIN covers both halves. */
    return packed_reduce(c, min, max, INFINITY, -1.0, n, T2__COMM_MIN);
}

int t2__comm_broadcast(t2__comm *c, void *buf, size_t bytes)
{
    int r = route(c, "broadcast");
    if (r <= 0 || bytes == 0) return r < 0 ? r : T2_OK;
    if (!buf) return t2_seterr(T2_EINVAL, "broadcast: NULL buffer");
    double t0 = now();
    int rc = t2__mpi_bcast(c, buf, bytes);
    c->seconds += now() - t0;
    return rc;
}

int t2__comm_barrier(t2__comm *c)
{
    int r = route(c, "barrier");
    return r <= 0 ? r : t2__mpi_barrier(c);
}

int t2__comm_broadcast_msg(t2__comm *c, char **msg, size_t *len)
{
    int r = route(c, "message broadcast");
    if (r < 0) return r;
    if (!msg || !len) return t2_seterr(T2_EINVAL, "message broadcast: NULL argument");
    if (r == 0) return T2_OK;
    /* -1 stands for "no message", so a closed channel on rank 0 reaches every rank. */
    int64_t n = c->rank == 0 ? (*msg ? (int64_t)*len : -1) : 0;
    int rc = t2__mpi_bcast(c, &n, sizeof n);
    if (rc) return rc;
    if (c->rank != 0) {
        *msg = NULL;
        *len = 0;
    }
    if (n < 0) return T2_OK;
    char *copy = c->rank != 0 ? malloc((size_t)n + 1) : NULL;
    /* All ranks learn whether every copy was allocated before the bytes move, so a rank short of
     * memory fails the op on every rank instead of leaving the others blocked in the broadcast. */
    uint64_t ok = c->rank == 0 || copy;
    if ((rc = t2__mpi_allreduce(c, &ok, 1, T2__COMM_U64, T2__COMM_MIN))) {
        free(copy);
        return rc;
    }
    if (!ok) {
        free(copy);
        return t2_seterr(T2_ENOMEM, "message broadcast: a rank could not allocate %lld bytes", (long long)n);
    }
    if (c->rank == 0) return n ? t2__mpi_bcast(c, *msg, (size_t)n) : T2_OK;
    if (n && (rc = t2__mpi_bcast(c, copy, (size_t)n))) {
        free(copy);
        return rc;
    }
    copy[n] = '\0';
    *msg = copy;
    *len = (size_t)n;
    return T2_OK;
}

int t2__comm_allgather_u64(t2__comm *c, const uint64_t *mine, size_t n, uint64_t *all)
{
    int r = route(c, "allgather");
    if (r < 0) return r;
    if ((!mine || !all) && n) return t2_seterr(T2_EINVAL, "allgather: NULL buffer");
    if (n == 0) return T2_OK;
    if (r == 0) {
        memcpy(all, mine, n * sizeof *all);
        return T2_OK;
    }
    /* Each rank fills its own row and zeros the rest; a sum of integers over zeros is exact. */
    memset(all, 0, (size_t)c->size * n * sizeof *all);
    memcpy(all + (size_t)c->rank * n, mine, n * sizeof *all);
    double t0 = now();
    int rc = t2__mpi_allreduce(c, all, (size_t)c->size * n, T2__COMM_U64, T2__COMM_SUM);
    c->seconds += now() - t0;
    return rc;
}

int t2__comm_agree(t2__comm *c, const void *buf, size_t bytes, const char *what)
{
    int r = route(c, "agree");
    if (r <= 0) return r;
    if (!buf && bytes) return t2_seterr(T2_EINVAL, "agree: NULL buffer");
    /* FNV-1a over the bytes and their length; min(h) == max(h) iff all ranks hashed alike, and
     * max(h) = ~min(~h), so one MPI_MIN over {h, ~h} answers it. */
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = buf;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 1099511628211ull;
    h = (h ^ (uint64_t)bytes) * 1099511628211ull;
    uint64_t v[2] = {h, ~h};
    int rc = t2__mpi_allreduce(c, v, 2, T2__COMM_U64, T2__COMM_MIN);
    if (rc) return rc;
    if (v[0] != ~v[1])
        return t2_seterr(T2_ESTATE, "the %d ranks disagree about %s (rank %d has hash %016llx)", c->size,
                         what ? what : "a value", c->rank, (unsigned long long)h);
    return T2_OK;
}

#ifndef T2EXP_HAVE_MPI
/* The build without MPI: the MPI entry points exist and say why they cannot work. */
int t2__comm_have_mpi(void) { return 0; }

int t2__comm_init_mpi(t2__comm *c, int *argc, char ***argv)
{
    (void)argc, (void)argv;
    if (c) t2__comm_init_single(c);
    return t2_seterr(T2_EUNSUPPORTED, "this t2exp was built without MPI (configure with -DT2EXP_WITH_MPI=ON)");
}

int t2__comm_finalize(t2__comm *c)
{
    if (c) t2__comm_init_single(c);
    return T2_OK;
}

static int no_mpi(void) { return t2_seterr(T2_EUNSUPPORTED, "this t2exp was built without MPI"); }
int t2__mpi_allreduce(t2__comm *c, void *buf, size_t n, t2__comm_dtype type, t2__comm_op op)
{
    (void)c, (void)buf, (void)n, (void)type, (void)op;
    return no_mpi();
}
int t2__mpi_bcast(t2__comm *c, void *buf, size_t bytes) { (void)c, (void)buf, (void)bytes; return no_mpi(); }
int t2__mpi_barrier(t2__comm *c) { (void)c; return no_mpi(); }
#endif
