/* comm_mpi.c — the MPI back end of the communicator (built with T2EXP_WITH_MPI only; the glob
 * build without MPI compiles this file to nothing and comm_single.c provides stubs).
 *
 * The collectives run on a private duplicate of MPI_COMM_WORLD, so a trial that makes MPI calls of
 * its own can never match one of ours by accident. Errors return (MPI_ERRORS_RETURN) and become
 * T2_EIO with MPI_Error_string's text: the library never aborts the job itself. */
#ifdef T2EXP_HAVE_MPI
#include <limits.h>
#include <stdio.h>
#include <mpi.h>
#include "comm.h"
#include "t2exp/error.h"

static MPI_Comm world = MPI_COMM_NULL;
static int we_initialised; /* finalise only what we initialised */

int t2__comm_have_mpi(void) { return 1; }

static int mpi_fail(int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error %d", code);
    return t2_seterr(T2_EIO, "%s: %s", what, text);
}

int t2__comm_init_mpi(t2__comm *c, int *argc, char ***argv)
{
    if (!c) return t2_seterr(T2_EINVAL, "comm: NULL communicator");
    t2__comm_init_single(c);
    int initialised = 0, finalised = 0, provided = 0, rc;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    if (finalised) return t2_seterr(T2_ESTATE, "MPI was already finalised in this process");
    if (!initialised) {
        /* FUNNELED: only the training thread calls MPI; the numeric pool and the loader's
         * prefetch threads never do, and nothing stronger (and slower) is needed. */
        if ((rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided)) != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Init_thread");
        we_initialised = 1;
    } else if ((rc = MPI_Query_thread(&provided)) != MPI_SUCCESS) {
        return mpi_fail(rc, "MPI_Query_thread");
    }
    if (provided < MPI_THREAD_FUNNELED)
        return t2_seterr(T2_EUNSUPPORTED, "the MPI library gives thread level %d, below MPI_THREAD_FUNNELED", provided);
    if ((rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
        return mpi_fail(rc, "MPI_Comm_set_errhandler");
    if (world == MPI_COMM_NULL) {
        if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &world)) != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_dup");
        if ((rc = MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN)) != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Comm_set_errhandler");
    }
    int rank, size;
    if ((rc = MPI_Comm_rank(world, &rank)) != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_rank");
    if ((rc = MPI_Comm_size(world, &size)) != MPI_SUCCESS) return mpi_fail(rc, "MPI_Comm_size");
    c->rank = rank;
    c->size = size;
    c->mpi = 1;
    return T2_OK;
}

int t2__comm_finalize(t2__comm *c)
{
    int rc = MPI_SUCCESS, finalised = 0;
    if (c) t2__comm_init_single(c);
    MPI_Finalized(&finalised);
    if (finalised) return T2_OK;
    if (world != MPI_COMM_NULL) rc = MPI_Comm_free(&world);
    world = MPI_COMM_NULL;
    if (we_initialised) {
        int rc2 = MPI_Finalize();
        if (rc == MPI_SUCCESS) rc = rc2;
        we_initialised = 0;
    }
    return rc == MPI_SUCCESS ? T2_OK : mpi_fail(rc, "MPI_Finalize");
}

static int ready(const char *what)
{
    return world == MPI_COMM_NULL ? t2_seterr(T2_ESTATE, "%s: MPI is not initialised (or already finalised)", what)
                                  : T2_OK;
}

/* MPI counts are int: larger buffers go in pieces of at most max_count elements. */
static size_t piece(const t2__comm *c)
{
    return c->max_count > 0 && c->max_count < (size_t)INT_MAX ? c->max_count : (size_t)INT_MAX;
}

int t2__mpi_allreduce(t2__comm *c, void *buf, size_t n, t2__comm_dtype type, t2__comm_op op)
{
    int rc = ready("allreduce");
    if (rc) return rc;
    MPI_Datatype dt = type == T2__COMM_F32 ? MPI_FLOAT : type == T2__COMM_F64 ? MPI_DOUBLE : MPI_UINT64_T;
    size_t esz = type == T2__COMM_F32 ? sizeof(float) : 8;
    MPI_Op mop = op == T2__COMM_SUM ? MPI_SUM : MPI_MIN;
    size_t step = piece(c);
    for (size_t off = 0; off < n; off += step) {
        size_t k = n - off < step ? n - off : step;
        if ((rc = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + off * esz, (int)k, dt, mop, world)) != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Allreduce");
    }
    return T2_OK;
}

int t2__mpi_bcast(t2__comm *c, void *buf, size_t bytes)
{
    int rc = ready("broadcast");
    if (rc) return rc;
    size_t step = piece(c);
    for (size_t off = 0; off < bytes; off += step) {
        size_t k = bytes - off < step ? bytes - off : step;
        if ((rc = MPI_Bcast((char *)buf + off, (int)k, MPI_BYTE, 0, world)) != MPI_SUCCESS)
            return mpi_fail(rc, "MPI_Bcast");
    }
    return T2_OK;
}

int t2__mpi_barrier(t2__comm *c)
{
    (void)c;
    int rc = ready("barrier");
    if (rc) return rc;
    return (rc = MPI_Barrier(world)) == MPI_SUCCESS ? T2_OK : mpi_fail(rc, "MPI_Barrier");
}
#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int t2__comm_mpi_not_built;
#endif
