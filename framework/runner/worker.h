/* worker.h — a long-lived trial worker (resources.isolation: worker; internal).
 *
 * The controller forks one per local slot (trial_proc.c) and hands it trial after trial over its
 * socketpair (protocol.h: assign ... finished), so a trial starts without a fork. What a trial
 * leaves in the process (globals of the trial object, the heap) stays for the next one: that is
 * the documented price of the mode (docs/performance.md#isolation). */
#ifndef T2_RUNNER_WORKER_H
#define T2_RUNNER_WORKER_H

#include "runner.h"

/* Serves trials on fd until the controller closes it. base holds what every trial shares (cfg,
 * def, experiment_id, ckpt_dir); each assign message gives the rest. Returns the worker's exit
 * status: 0 at the end of stream, 2 when the channel broke or carried something else. */
int t2__worker_serve(const t2__runner_args *base, int fd);

#endif
