/* user_so.c — dlopen a user's shared object and find what it exports (user_so.h). */
#define _GNU_SOURCE /* dl_iterate_phdr: the segment a symbol lies in */
#include "user_so.h"
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "t2exp/error.h"

/* The loaded segment holding addr: whether it is executable, and how many of its bytes lie at
 * and after addr. */
typedef struct seg_query {
    uintptr_t addr;
    int found, exec;
    size_t room;
} seg_query;

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    seg_query *q = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (q->addr < lo || q->addr >= hi) continue;
        q->found = 1;
        q->exec = (ph->p_flags & PF_X) != 0;
        q->room = hi - q->addr;
        return 1;
    }
    return 0;
}

int t2__user_so_open(const char *path, const char *what, const char *symbol, const char *define, size_t min_size,
                     void **handle, const void **sym, char *opened, size_t opened_size)
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
    /* The symbol is read as a struct of min_size bytes at least: a function of that name would be
     * read as one (misaligned, from its code). It must lie in a loaded segment that is data, not
     * code, with min_size bytes there, suitably aligned. */
    seg_query q = {.addr = (uintptr_t)s};
    dl_iterate_phdr(find_segment, &q);
    if (q.found && (q.exec || q.room < min_size || q.addr % sizeof(void *) != 0)) {
        dlclose(h);
        return t2_seterr(T2_EFORMAT, "%s %s: its symbol %s is %s, not the definition (%s)", what, path, symbol,
                         q.exec ? "code (a function?)" : "too small or misaligned for it", define);
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
