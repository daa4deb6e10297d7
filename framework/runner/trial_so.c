/* trial_so.c — dlopen a user's trial and validate what it exports. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <string.h>
#include "trial_so.h"
#include "user_so.h"

int t2__trial_so_open(const char *path, t2__trial_so *out)
{
    memset(out, 0, sizeof *out);
    const void *sym = NULL;
    int rc = t2__user_so_open(path, "trial object", "t2_trial", "define the trial with T2_TRIAL(...) from <t2exp.h>",
                              &out->handle, &sym, out->path, sizeof out->path);
    if (rc) return rc;
    out->def = sym;
    if (out->def->abi_version != T2_TRIAL_ABI_VERSION) {
        int v = out->def->abi_version;
        t2__trial_so_close(out);
        return t2_seterr(T2_EUNSUPPORTED, "trial object %s: built for trial ABI version %d, this t2exp needs "
                         "version %d (rebuild it against this t2exp's headers)", path, v, T2_TRIAL_ABI_VERSION);
    }
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
        t->handle = NULL;
        t->def = NULL;
    }
}
