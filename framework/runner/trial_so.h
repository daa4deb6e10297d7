/* trial_so.h — loading a trial shared object and checking its vtable (internal). */
#ifndef T2_RUNNER_TRIAL_SO_H
#define T2_RUNNER_TRIAL_SO_H

#include "t2exp/trial.h"

typedef struct t2__trial_so {
    void *handle;
    /* The object's vtable as this t2exp's version (a copy: an older ABI's shorter one padded
     * with NULL callbacks), so the runner may read every member. */
    const t2_trial_def *def;
    char path[4096];
} t2__trial_so;

/* dlopens path (RTLD_NOW, so a missing symbol fails here, not mid-training) and finds `t2_trial`.
 * Errors name the path and the problem: T2_ENOTFOUND (no such file; no t2_trial symbol),
 * T2_EFORMAT (not a loadable shared object, with dlerror's reason), T2_EUNSUPPORTED (an ABI
 * version other than 1 and 2), T2_EINVAL (a required callback is missing). */
int t2__trial_so_open(const char *path, t2__trial_so *out);
void t2__trial_so_close(t2__trial_so *t);

#endif
