/* user_so.c — dlopen a user's shared object and find what it exports (user_so.h). */
#define _POSIX_C_SOURCE 200809L
#include "user_so.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "t2exp/error.h"

int t2__user_so_open(const char *path, const char *what, const char *symbol, const char *define, void **handle,
                     const void **sym, char *opened, size_t opened_size)
{
    *handle = NULL;
    *sym = NULL;
    struct stat st;
    if (!path || stat(path, &st) != 0) return t2_seterr(T2_ENOTFOUND, "%s %s: no such file", what, path ? path : "(null)");
    if (!S_ISREG(st.st_mode)) return t2_seterr(T2_EFORMAT, "%s %s: not a regular file", what, path);
    char full[4096];
    /* dlopen searches the library path for names without a slash; the user named a file. */
    snprintf(full, sizeof full, "%s%s", strchr(path, '/') ? "" : "./", path);
    if (opened) snprintf(opened, opened_size, "%s", full);
    dlerror();
    void *h = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return t2_seterr(T2_EFORMAT, "%s %s: cannot be loaded as a shared object: %s", what, path,
                         why ? why : "unknown reason");
    }
    const void *s = dlsym(h, symbol);
    if (!s) {
        dlclose(h);
        return t2_seterr(T2_ENOTFOUND, "%s %s: does not export the symbol %s (%s)", what, path, symbol, define);
    }
    *handle = h;
    *sym = s;
    return T2_OK;
}

int t2__user_so_missing(const char *what, const char *path, const char *noun, const t2__user_cb *cb, size_t n)
{
    char missing[256] = "";
    int nmissing = 0;
    for (size_t i = 0; i < n; i++) {
        if (cb[i].set) continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s.%s", nmissing ? ", " : "", cb[i].name);
        nmissing++;
    }
    return nmissing ? t2_seterr(T2_EINVAL, "%s %s: the %s does not set %s", what, path, noun, missing) : T2_OK;
}
