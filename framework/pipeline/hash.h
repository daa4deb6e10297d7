/* hash.h — the content hashes behind a pipeline's cache (internal).
 *
 * A stage is up to date when its hash matches the one its last successful run recorded. The hash
 * is SHA-256 over three parts, each also recorded on its own so `pipeline status` can say which
 * part changed: the definition (the stage's canonical JSON), the resolved values of its ${...}
 * references, and the contents of its inputs (an experiment stage's config file and trial object
 * count as inputs). */
#ifndef T2_PIPELINE_HASH_H
#define T2_PIPELINE_HASH_H

#include <signal.h>
#include <stddef.h>
#include "configs/value.h"
#include "flow.h"

/* Walking an input directory stops past these (a mistyped "/" as an input). */
#define T2__HASH_MAX_ENTRIES 1000000
#define T2__HASH_MAX_DEPTH 64

/* flag (NULL: none) is polled while inputs are hashed: once it is nonzero, t2__hash_path stops
 * within a few milliseconds with T2_ESTOPPED. `pipeline run` points it at its stop flag while its
 * signal handlers are in place. One setting for the process. */
void t2__hash_stop_on(const volatile sig_atomic_t *flag);

/* SHA-256 of bytes, as 64 lower-case hex digits. */
int t2__sha256_hex(const void *data, size_t len, char hex[65]);

/* The content hash of a file, or of a directory: every entry, recursively, in byte order of the
 * names, each with its name and kind (files with their contents, symlinks with their target,
 * never followed inside a directory). path itself may be a symlink (followed). A FIFO, socket or
 * device is refused (T2_EINVAL naming it), as is a file that reads more or fewer bytes than its
 * size (a /proc or /sys file, a file being written); T2_ESTOPPED when stopped (t2__hash_stop_on);
 * T2_ENOTFOUND when path does not exist; T2_EIO. */
int t2__hash_path(const char *path, char hex[65]);

typedef struct t2__stage_hash {
    char def[65];    /* the definition */
    char refs[65];   /* the resolved references ("" when the stage has none) */
    t2__val *inputs; /* map: input as written -> hex hash of its contents */
    char total[65];  /* over all three */
} t2__stage_hash;

/* Hashes stage i with its resolved argv/hparams (from t2__flow_resolve; ignored when the stage has
 * no references). On error h->inputs is NULL and the message names the stage and the input. */
int t2__stage_hash_compute(const t2__flow *f, size_t i, char *const *argv, const t2__val *hparams,
                           t2__stage_hash *h);
void t2__stage_hash_free(t2__stage_hash *h);

#endif
