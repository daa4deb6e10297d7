/* delete.c — `t2exp delete`: an experiment's checkpoint files, directory and rows. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "checkpoints/ckpt.h"
#include "internal.h"
#include "lifecycle.h"
#include "t2exp/error.h"

/* Only files the store recorded as this experiment's checkpoints, and only where the path check
 * (the one garbage collection uses) finds a checkpoint file name directly inside the recorded
 * checkpoint_dir: a store row can never make delete remove anything else. */
static int remove_checkpoints(t2__store *st, const t2__experiment_row *row)
{
    t2__checkpoint_row *rows = NULL;
    size_t n = 0;
    int rc = t2__store_list_checkpoints(st, row->id, 0, &rows, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        int chk = row->checkpoint_dir ? t2__ckpt_gc_path_check(row->checkpoint_dir, rows[i].path) : T2_EINVAL;
        if (chk == T2_ENOTFOUND) continue; /* already gone (garbage-collected) */
        if (chk) {
            fprintf(stderr, "t2exp delete: kept %s: %s\n", rows[i].path,
                    row->checkpoint_dir ? t2_errmsg() : "the experiment predates recorded checkpoint directories");
            continue;
        }
        if (unlink(rows[i].path) != 0 && errno != ENOENT)
            rc = t2_seterr(T2_EIO, "delete: %s: %s", rows[i].path, strerror(errno));
    }
    t2__checkpoint_rows_free(rows, n);
    /* The directory goes only when nothing else is left in it (a user's file, another store's). */
    if (!rc && row->checkpoint_dir && rmdir(row->checkpoint_dir) != 0 && errno != ENOENT && errno != ENOTEMPTY &&
        errno != EEXIST)
        rc = t2_seterr(T2_EIO, "delete: %s: %s", row->checkpoint_dir, strerror(errno));
    return rc;
}

int t2__delete_experiment(t2__store *st, int64_t exp_id)
{
    t2__experiment_row row;
    long pid = 0;
    char dir[PATH_MAX];
    int rc = t2__store_get_experiment(st, exp_id, &row);
    if (rc) return rc;
    int live = t2__store_controller(st, exp_id, &pid);
    if (live == 1)
        rc = t2_seterr(T2_ESTATE, "experiment %lld is running (controller pid %ld); pause or kill it first",
                       (long long)exp_id, pid);
    else if (live < 0)
        rc = live;
    char as[300];
    /* Its checkpoints DELETED first, with the check that none is a model version, in one
     * transaction: a `t2exp model register` after it finds them gone, never their files. */
    int reg = rc ? 0 : t2__store_retire_experiment_checkpoints(st, exp_id, as, sizeof as);
    if (reg < 0) rc = reg;
    else if (reg)
        rc = t2_seterr(T2_ESTATE, "experiment %lld has a checkpoint that is %s; delete that version's model first "
                       "(t2exp model delete NAME), or keep the experiment", (long long)exp_id, as);
    /* Files first, rows last: an interrupted delete leaves rows that a second delete finishes,
     * never files that no row names. */
    if (!rc) rc = remove_checkpoints(st, &row);
    if (!rc) rc = t2__store_experiment_dir(t2__store_home_of(st), exp_id, NULL, dir, sizeof dir);
    if (!rc) rc = t2__remove_tree(dir);
    if (!rc) rc = t2__store_delete_experiment(st, exp_id);
    t2__experiment_row_free(&row);
    return rc;
}
