/* launch_env.c — the environment an mpirun is started with (a trial's, a host probe's): this
 * process's, with some variables set. Built before fork and handed to execve: the children set
 * them with setenv after fork, which takes malloc and the environment's lock in the child of a
 * threaded controller (review R11), and the probe and the launch each split
 * environment_variables their own way. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "t2exp/error.h"
#include "trial_proc.h"

extern char **environ;

/* Whether a and b ("NAME=value" or "NAME") name the same variable. */
static int same_name(const char *a, const char *b)
{
    size_t la = strcspn(a, "="), lb = strcspn(b, "=");
    return la == lb && memcmp(a, b, la) == 0;
}

static int set_later(const char *const *set, size_t nset, size_t from, const char *v)
{
    for (size_t k = from; k < nset; k++)
        if (set[k] && strchr(set[k], '=') && same_name(set[k], v)) return 1;
    return 0;
}

int t2__launch_env(const char *const *set, size_t nset, char ***out)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++) n++;
    char **env = calloc(n + nset + 1, sizeof *env);
    if (!env) return t2_seterr(T2_ENOMEM, "controller: out of memory");
    size_t k = 0;
    int oom = 0;
    /* This process's variables but those set here; then the set ones, the last of a name winning
     * as with setenv one after another (entries without '=' are no assignment: left out). */
    for (char **e = environ; e && *e && !oom; e++)
        if (!set_later(set, nset, 0, *e)) oom = !(env[k++] = strdup(*e));
    for (size_t i = 0; i < nset && !oom; i++)
        if (set[i] && strchr(set[i], '=') && !set_later(set, nset, i + 1, set[i])) oom = !(env[k++] = strdup(set[i]));
    if (oom) {
        t2__launch_env_free(env);
        return t2_seterr(T2_ENOMEM, "controller: out of memory");
    }
    *out = env;
    return T2_OK;
}

void t2__launch_env_free(char **env)
{
    for (size_t k = 0; env && env[k]; k++) free(env[k]);
    free(env);
}
