/* test_mode.h — `t2exp create --test` (test_mode.c; internal, used by main.c). */
#ifndef T2_CLI_TEST_MODE_H
#define T2_CLI_TEST_MODE_H

#include <stdint.h>
#include <stdio.h>
#include "configs/config.h"
#include "framework/store/store.h"

/* The --config overrides of a test run of cfg: the user's nuser (borrowed), then a random searcher of
 * one trial of 1 batch on cfg's metric, validation after every batch, no restarts, and the name
 * marked "[test-mode]". *ovr and the entries past nuser are malloc'd: free with
 * t2__test_mode_overrides_free. T2_ENOMEM. */
int t2__test_mode_overrides(const t2__config *cfg, const char *const *user, int nuser, char ***ovr, int *n);
void t2__test_mode_overrides_free(char **ovr, int n, int nuser);

/* After the test experiment exp_id ran (run_rc: what t2__experiment_create returned) with config
 * cfg: its one trial must have completed and checkpointed, and that checkpoint, restored into a
 * fresh model of trial_path's trial in this process, must validate as the trial did. Prints the
 * verdict to out; passed, the experiment is deleted, else kept. 0 passed, 1 failed. */
int t2__test_mode_finish(t2__store *st, const t2__config *cfg, int64_t exp_id, int run_rc, const char *trial_path,
                         FILE *out);

#endif
