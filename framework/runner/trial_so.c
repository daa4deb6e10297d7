/* trial_so.c — dlopen a user's trial and validate what it exports. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "trial_so.h"
#include "user_so.h"

int t2__trial_so_open(const char *path, t2__trial_so *out)
{
    memset(out, 0, sizeof *out);
    const void *sym = NULL;
    /* ABI 1's vtable is the shortest a trial may export. */
    int rc = t2__user_so_open(path, "trial object", "t2_trial", "define the trial with T2_TRIAL(...) from <t2exp.h>",
                              offsetof(t2_trial_def, evaluate_end), &out->handle, &sym, out->path, sizeof out->path);
    if (rc) return rc;
    const t2_trial_def *theirs = sym;
    int v = theirs->abi_version;
    if (v != 1 && v != T2_TRIAL_ABI_VERSION) {
        t2__trial_so_close(out);
        return t2_seterr(T2_EUNSUPPORTED, "trial object %s: built for trial ABI version %d, this t2exp takes "
                         "versions 1 and %d (rebuild it against this t2exp's headers)", path, v, T2_TRIAL_ABI_VERSION);
    }
    /* Version 1's vtable ends before evaluate_end: only its own bytes are read. */
    t2_trial_def *mine = calloc(1, sizeof *mine);
    if (!mine) {
        t2__trial_so_close(out);
        return t2_seterr(T2_ENOMEM, "trial object %s: out of memory", path);
    }
    memcpy(mine, theirs, v == 1 ? offsetof(t2_trial_def, evaluate_end) : sizeof *mine);
    out->def = mine;
    const t2__user_cb need[] = {
        {out->def->build_model != NULL, "build_model"},
        {out->def->build_training_loader != NULL, "build_training_loader"},
        {out->def->build_validation_loader != NULL, "build_validation_loader"},
        {out->def->train_batch != NULL, "train_batch"},
        {out->def->evaluate_batch != NULL, "evaluate_batch"},
    };
    if ((rc = t2__user_so_missing("trial object", path, "trial", need, sizeof need / sizeof *need))) {
        t2__trial_so_close(out);
        return rc;
    }
    return T2_OK;
}

void t2__trial_so_close(t2__trial_so *t)
{
    if (t && t->handle) dlclose(t->handle);
    if (t) {
        free((void *)t->def);
        t->handle = NULL;
        t->def = NULL;
    }
}
