/* remote.h — a trial runner started by mpirun, one per rank (internal).
 *
 * `t2exp run-trial --connect HOST:PORT --trial ID` is what the controller asks mpirun to start on
 * every slot of a distributed trial. Rank 0 connects back to the controller, says hello with the
 * trial id, and receives the trial's spec (the config as stored, its overrides, the trial object,
 * hparams, seed, threads, checkpoint directory and restore point); it relays the spec to the other
 * ranks over MPI, and every rank then runs the ordinary runner loop with the MPI communicator. */
#ifndef T2_RUNNER_REMOTE_H
#define T2_RUNNER_REMOTE_H

#include <stdint.h>

/* The rank's whole life: MPI init, spec, runner, MPI finalize. Returns the process exit status
 * (0 ok, 1 the trial failed, 2 it could not start — with the reason on stderr). */
int t2__remote_main(const char *connect, int64_t trial_id, int *argc, char ***argv);

#endif
