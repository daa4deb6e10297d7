/* trial_proc.h — starting a local trial runner as a forked child and reaping it (internal). */
#ifndef T2_CONTROLLER_TRIAL_PROC_H
#define T2_CONTROLLER_TRIAL_PROC_H

#include <sys/types.h>
#include "runner/runner.h"

/* Forks a child that writes its stdout/stderr to log_path (appending), closes the descriptors in
 * close_fds[0..nclose) it inherited, and runs t2__runner_run(args) with args->fd set to its end of
 * a fresh socketpair. *pid gets the child, *fd the controller's end. T2_EIO if fork or the
 * socketpair fails, or the log cannot be opened. */
int t2__trial_proc_start(const t2__runner_args *args, const char *log_path, const int *close_fds, int nclose,
                         pid_t *pid, int *fd);

/* Describes a wait status: "exited with status 1", "killed by signal 11 (Segmentation fault)". */
const char *t2__wait_status_str(int status, char *buf, size_t len);

#endif
