/* user_so.h — loading a user's shared object (a trial, a searcher) and finding the one symbol it
 * exports (internal). */
#ifndef T2_COMMON_USER_SO_H
#define T2_COMMON_USER_SO_H

#include <stddef.h>

/* dlopens path (RTLD_NOW, so a missing symbol fails here, not mid-run) into *handle and finds
 * `symbol` into *sym: a data object of min_size bytes at least. `what` names the object in errors
 * ("trial object"), `define` says how the user defines the symbol. A path without a slash is a
 * file in the current directory (dlopen would search the library path). The path dlopen got to
 * `opened` (may be NULL). T2_ENOTFOUND (no such file; no such symbol), T2_EFORMAT (not a regular
 * file, not loadable: with dlerror's reason; the symbol a function or a smaller object). */
int t2__user_so_open(const char *path, const char *what, const char *symbol, const char *define, size_t min_size,
                     void **handle, const void **sym, char *opened, size_t opened_size);

/* Names every callback whose flag is 0 ("T2_EINVAL: OBJECT PATH: the NOUN does not set a.x, a.y"),
 * all at once: a user fixing one should not meet the next only on the following build. T2_OK when
 * none is missing. */
typedef struct t2__user_cb {
    int set;
    const char *name;
} t2__user_cb;
int t2__user_so_missing(const char *what, const char *path, const char *noun, const t2__user_cb *cb, size_t n);

#endif
