/* trial_so.c — dlopen a user's trial and validate what it exports. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "trial_so.h"

int t2__trial_so_open(const char *path, t2__trial_so *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (!path || stat(path, &st) != 0)
        return t2_seterr(T2_ENOTFOUND, "trial object %s: no such file", path ? path : "(null)");
    if (!S_ISREG(st.st_mode)) return t2_seterr(T2_EFORMAT, "trial object %s: not a regular file", path);
    /* dlopen searches the library path for names without a slash; a trial is always a file. */
    if (!strchr(path, '/')) snprintf(out->path, sizeof out->path, "./%s", path);
    else snprintf(out->path, sizeof out->path, "%s", path);
    dlerror();
    out->handle = dlopen(out->path, RTLD_NOW | RTLD_LOCAL);
    if (!out->handle) {
        const char *why = dlerror();
        return t2_seterr(T2_EFORMAT, "trial object %s: cannot be loaded as a shared object: %s", path,
                         why ? why : "unknown reason");
    }
    out->def = (const t2_trial_def *)dlsym(out->handle, "t2_trial");
    if (!out->def) {
        t2__trial_so_close(out);
        return t2_seterr(T2_ENOTFOUND, "trial object %s: does not export the symbol t2_trial (define the trial "
                         "with T2_TRIAL(...) from <t2exp.h>)", path);
    }
    if (out->def->abi_version != T2_TRIAL_ABI_VERSION) {
        int v = out->def->abi_version;
        t2__trial_so_close(out);
        return t2_seterr(T2_EUNSUPPORTED, "trial object %s: built for trial ABI version %d, this t2exp needs "
                         "version %d (rebuild it against this t2exp's headers)", path, v, T2_TRIAL_ABI_VERSION);
    }
    /* Every missing callback is named at once: a user fixing one should not meet the next only
     * on the following build. */
    const struct { int set; const char *name; } need[] = {
        {out->def->build_model != NULL, "build_model"},
        {out->def->build_training_loader != NULL, "build_training_loader"},
        {out->def->build_validation_loader != NULL, "build_validation_loader"},
        {out->def->train_batch != NULL, "train_batch"},
        {out->def->evaluate_batch != NULL, "evaluate_batch"},
    };
    char missing[160] = "";
    int nmissing = 0;
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        if (need[i].set) continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s.%s", nmissing ? ", " : "", need[i].name);
        nmissing++;
    }
    if (nmissing) {
        t2__trial_so_close(out);
        return t2_seterr(T2_EINVAL, "trial object %s: the trial does not set %s", path, missing);
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
