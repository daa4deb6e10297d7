/* comm_single.c — the one-rank communicator: collectives are identities. */
#include "comm.h"
#include "t2exp/error.h"

void t2__comm_init_single(t2__comm *c)
{
    c->rank = 0;
    c->size = 1;
    c->seconds = 0.0;
}

int t2__comm_allreduce_mean(t2__comm *c, float *buf, size_t n)
{
    (void)buf, (void)n;
    return c->size == 1 ? T2_OK : t2_seterr(T2_EUNSUPPORTED, "allreduce: %d ranks need the MPI communicator", c->size);
}

int t2__comm_allreduce_sum_double(t2__comm *c, double *buf, size_t n)
{
    (void)buf, (void)n;
    return c->size == 1 ? T2_OK : t2_seterr(T2_EUNSUPPORTED, "allreduce: %d ranks need the MPI communicator", c->size);
}

int t2__comm_broadcast(t2__comm *c, void *buf, size_t bytes)
{
    (void)buf, (void)bytes;
    return c->size == 1 ? T2_OK : t2_seterr(T2_EUNSUPPORTED, "broadcast: %d ranks need the MPI communicator", c->size);
}
