/* config_environment.c — the `environment` section. Only environment_variables means something
 * without containers: the variables are set in every trial process. The rest of Determined's
 * section (image, pod_spec, ...) is accepted and reported once per key. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

/* "NAME=value" with a POSIX shell name: anything else would not reach a trial as written. */
static int env_entry_ok(const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || (s[0] >= '0' && s[0] <= '9')) return 0;
    for (const char *p = s; p < eq; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_')) return 0;
    return 1;
}

/* One list of "NAME=value" strings; a later NAME replaces an earlier one, as in a shell. */
static int env_list(t2__config *cfg, const t2__ynode *v, const char *path)
{
    char sub[T2__PATH_MAX], idx[24], buf[128];
    if (t2__ynull(v)) return T2_OK;
    if (v->kind != T2__Y_SEQ)
        return t2__cfg_err(&v->mark, path, "expected a list of \"NAME=value\" strings, got %s",
                           t2__ydesc(v, buf, sizeof buf));
    for (size_t k = 0; k < v->n; k++) {
        const t2__ynode *e = v->items[k];
        snprintf(idx, sizeof idx, "%zu", k);
        t2__path_join(sub, sizeof sub, path, idx);
        if (e->kind != T2__Y_SCALAR || t2__ynull(e) || !env_entry_ok(e->text)) {
            int rc = t2__cfg_collect(cfg, t2__cfg_err(&e->mark, sub, "expected \"NAME=value\" (NAME: letters, digits "
                                                                     "and _, not starting with a digit), got %s",
                                                      t2__ydesc(e, buf, sizeof buf)));
            if (rc) return rc;
            continue;
        }
        size_t nlen = (size_t)(strchr(e->text, '=') - e->text);
        size_t at = cfg->environment.nvars;
        for (size_t j = 0; j < cfg->environment.nvars; j++)
            if (!strncmp(cfg->environment.vars[j], e->text, nlen + 1)) at = j;
        char *copy = strdup(e->text);
        if (!copy) return t2_seterr(T2_ENOMEM, "config: out of memory");
        if (at < cfg->environment.nvars) {
            free(cfg->environment.vars[at]);
            cfg->environment.vars[at] = copy;
            continue;
        }
        char **vars = realloc(cfg->environment.vars, (at + 1) * sizeof *vars);
        if (!vars) {
            free(copy);
            return t2_seterr(T2_ENOMEM, "config: out of memory");
        }
        cfg->environment.vars = vars;
        vars[cfg->environment.nvars++] = copy;
    }
    return T2_OK;
}

/* A list, or Determined's per-device map {cpu: [...], cuda: [...], rocm: [...]}: trials here run on
 * CPUs, so cpu's list is the one taken. */
static int env_vars(t2__config *cfg, const t2__ynode *v, const char *path)
{
    static const char *const devices[] = {"cpu", "cuda", "rocm", "gpu", NULL};
    char sub[T2__PATH_MAX];
    if (v->kind != T2__Y_MAP) return env_list(cfg, v, path);
    for (size_t k = 0; k < v->n; k++) {
        const char *key = v->keys[k];
        int rc;
        t2__path_join(sub, sizeof sub, path, key);
        if (KEY_IS("cpu")) rc = env_list(cfg, v->items[k], sub);
        else if (KEY_IS("cuda") || KEY_IS("rocm") || KEY_IS("gpu"))
            rc = t2__ynull(v->items[k]) || (v->items[k]->kind == T2__Y_SEQ && v->items[k]->n == 0)
                     ? T2_OK
                     : t2__cfg_ignored(cfg, &v->key_marks[k], sub, "trials run on CPUs; the cpu list is used");
        else rc = t2__cfg_unknown(cfg, &v->key_marks[k], sub, devices);
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}

const char *const t2__cfg_environment_keys[] = {"environment_variables", "image", "force_pull_image", "registry_auth",
                                                "pod_spec", "ports", "proxy_ports", "add_capabilities",
                                                "drop_capabilities", NULL};

int t2__cfg_environment(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    char path[T2__PATH_MAX];
    int rc;
    (void)kmark;
    if ((rc = t2__want_map(n, "environment"))) return rc;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ymark *km = &n->key_marks[k];
        t2__path_join(path, sizeof path, "environment", key);
        if (KEY_IS("environment_variables")) rc = env_vars(cfg, n->items[k], path);
        else if (KEY_IS("image") || KEY_IS("force_pull_image") || KEY_IS("registry_auth") || KEY_IS("add_capabilities") ||
                 KEY_IS("drop_capabilities"))
            rc = t2__cfg_ignored(cfg, km, path, "trials run as processes on this machine, not in containers");
        else if (KEY_IS("pod_spec")) rc = t2__cfg_ignored(cfg, km, path, "t2exp does not run on Kubernetes");
        else if (KEY_IS("ports") || KEY_IS("proxy_ports"))
            rc = t2__cfg_ignored(cfg, km, path, "there is no master to proxy ports through");
        else rc = t2__cfg_unknown(cfg, km, path, t2__cfg_environment_keys);
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}
