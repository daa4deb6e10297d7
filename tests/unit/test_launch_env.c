/* test_launch_env.c — the environment an mpirun is started with (launch_env.c): this process's,
 * with the launch's variables set, the last of a name winning as setenv one after another did,
 * built before fork (the children called setenv after fork; review R11). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "controller/trial_proc.h"

static const char *get(char **env, const char *name)
{
    size_t n = strlen(name);
    const char *found = NULL;
    int count = 0;
    for (size_t k = 0; env[k]; k++)
        if (strncmp(env[k], name, n) == 0 && env[k][n] == '=') found = env[k] + n + 1, count++;
    return count == 1 ? found : count ? "(twice)" : NULL;
}

int main(void)
{
    CHECK(setenv("T2_LE_KEEP", "kept", 1) == 0);
    CHECK(setenv("T2_LE_OVER", "old", 1) == 0);
    CHECK(setenv("T2_LE_OVERX", "prefix", 1) == 0); /* a longer name with the same start stays */
    const char *set[] = {"T2_LE_OVER=new", "T2_LE_NEW=a=b", "T2_LE_TWICE=1", "T2_LE_TWICE=2", "NOEQUALS", NULL};
    char **env = NULL;
    CHECK(t2__launch_env(set, 6, &env) == T2_OK);
    CHECK(env != NULL);
    if (!env) return check_report("test_launch_env");
    CHECK(get(env, "T2_LE_KEEP") && strcmp(get(env, "T2_LE_KEEP"), "kept") == 0);
    CHECK(get(env, "T2_LE_OVER") && strcmp(get(env, "T2_LE_OVER"), "new") == 0);
    CHECK(get(env, "T2_LE_OVERX") && strcmp(get(env, "T2_LE_OVERX"), "prefix") == 0);
    CHECK(get(env, "T2_LE_NEW") && strcmp(get(env, "T2_LE_NEW"), "a=b") == 0);
    CHECK(get(env, "T2_LE_TWICE") && strcmp(get(env, "T2_LE_TWICE"), "2") == 0);
    for (size_t k = 0; env[k]; k++) CHECK(strcmp(env[k], "NOEQUALS") != 0);
    /* This process's own environment is untouched. */
    CHECK(strcmp(getenv("T2_LE_OVER"), "old") == 0);
    CHECK(getenv("T2_LE_NEW") == NULL);
    t2__launch_env_free(env);
    return check_report("test_launch_env");
}
