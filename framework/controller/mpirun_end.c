/* mpirun_end.c — what a distributed trial's mpirun leaves behind when it is ended, cleared once it
 * is reaped: the launcher processes it started (proc_tree.c says why they outlive it) and its Open
 * MPI session directory (8 MB of shared-memory segments that a killed mpirun cannot remove). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include "ctl.h"
#include "trial_proc.h"

void t2__ctl_mpirun_note(t2__ctl_trial *t)
{
    if (!t->session_dir || t->pid <= 0) return; /* not an mpirun (a local trial's process, a worker) */
    if (!t->tree && !(t->tree = calloc(1, sizeof *t->tree))) return; /* out of memory: as before, nothing noted */
    t2__proc_tree_note(t->tree, t->pid);
}

void t2__ctl_mpirun_gone(t2__ctl_trial *t)
{
    if (t->tree) t2__proc_tree_end(t->tree);
    free(t->tree);
    t->tree = NULL;
    if (t->session_dir) t2__mpi_session_remove(t->session_dir);
    free(t->session_dir);
    t->session_dir = NULL;
}
