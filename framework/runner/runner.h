/* runner.h — the trial runner: one trial's training loop inside its own process (internal).
 *
 * The controller starts a runner per trial (a forked child for local single-slot trials) and
 * talks to it over a channel (channel.h):
 *   runner -> controller  {"type":"ready","batches_per_epoch":N,"params":P}
 *   controller -> runner  {"type":"train","length":L}   L in searcher.max_length units, total
 *   runner -> controller  {"type":"metrics","kind":"training"|"validation","batches":B,"epoch":E,
 *                          "values":{...}, timing fields for training}
 *   runner -> controller  {"type":"done","batches":B}    the train op is complete (validated)
 *   controller -> runner  {"type":"exit"}
 *   runner -> controller  {"type":"error","where":CALLBACK,"message":TEXT}  then the runner exits 1 */
#ifndef T2_RUNNER_RUNNER_H
#define T2_RUNNER_RUNNER_H

#include <stdint.h>
#include "configs/config.h"
#include "t2exp/trial.h"

typedef struct t2__runner_args {
    const t2__config *cfg;
    const t2_trial_def *def;
    const t2__val *hparams;
    int64_t trial_id;
    uint64_t seed;
    int threads; /* numeric-core threads for this trial */
    int fd;      /* the channel to the controller */
} t2__runner_args;

/* Runs the trial until the controller sends exit or closes the channel. Returns 0 on success and
 * 1 when the trial failed (after telling the controller why). */
int t2__runner_run(const t2__runner_args *a);

/* Converts a length in `unit` to batches for a trial with the given global batch size and
 * batches per epoch (ceil for records). */
int64_t t2__length_to_batches(t2__unit unit, int64_t n, int64_t global_batch, int64_t batches_per_epoch);

#endif
