/* ckpt.h — checkpoint archives: writing, reading, restoring, naming, garbage collection (internal).
 *
 * The runner's side of t2exp/checkpoint.h. A checkpoint is one tar archive (pax, via libarchive;
 * uncompressed by default, gzip or zstd on request) with these entries, in this order:
 *
 *   metadata.json    always first: see ckpt_meta.c for the document (format version 2)
 *   params.bin       the net's flat parameter array, little-endian float32
 *   buffers.bin      the net's flat buffer array (batchnorm running stats; may be empty)
 *   optimizer.bin    the optimizer's state buffer (present iff the checkpoint has an optimizer)
 *   user_state.bin   the trial's save_state bytes (present iff given)
 *
 * Integration (runner):
 *   at checkpoint time   fill a t2__ckpt_contents from the ctx (net, opt, sched, loader state,
 *                        {"trial", ctx->rng}, save_state bytes, ids, hparams JSON, batches, epoch)
 *                        and call t2__ckpt_write(t2__ckpt_path(...), &c, comp, &res); record
 *                        res.uuid / res.bytes in the store. On error the previous checkpoint is
 *                        untouched, so the store's latest stays valid.
 *   at restore time      t2__ckpt_open_for_restore(&ck, path); t2__ckpt_restore(ck, net, opt, sched);
 *                        t2__ckpt_loader_state -> t2_loader_restore; t2__ckpt_get_rng(ck, "trial", ..);
 *                        t2__ckpt_user_state -> load_state; batches/epoch from t2__ckpt_get_info.
 *   warm start           t2__ckpt_restore(ck, net, NULL, NULL): parameters and buffers only.
 *   garbage collection   t2__ckpt_gc_select over the store's checkpoint rows, unlink the rest.
 */
#ifndef T2_CHECKPOINTS_CKPT_H
#define T2_CHECKPOINTS_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/checkpoint.h"
#include "t2exp/data.h"
#include "t2exp/lr_schedule.h"
#include "t2exp/nn.h"
#include "t2exp/optim.h"
#include "t2exp/rng.h"

#define T2__CKPT_FORMAT_VERSION 2 /* 2: metadata.json checksums itself; 1 is still read */
#define T2__CKPT_MAX_META (16u << 20)                  /* metadata.json cap: 16 MiB */
#define T2__CKPT_MAX_ENTRY ((uint64_t)64 << 30)        /* any entry / file cap: 64 GiB */
/* The reader's budget (ckpt_read.c explains the numbers): the entries together may hold at most
 * T2__CKPT_MAX_RATIO times the archive's size, or T2__CKPT_RATIO_FLOOR whatever the size, and
 * user_state.bin at most T2__CKPT_USER_BASE plus 4 times params.bin (the writer refuses more). */
#define T2__CKPT_MAX_RATIO 1032u                       /* deflate's own maximum ratio */
#define T2__CKPT_RATIO_FLOOR ((uint64_t)64 << 20)      /* 64 MiB */
#define T2__CKPT_USER_BASE ((uint64_t)64 << 20)        /* 64 MiB */
#define T2__CKPT_MAX_NAME 63                           /* RNG names and string-map keys */
#define T2__UUID_LEN 36
#define T2__CKPT_MAX_OPTS 16                           /* optimizers in one checkpoint */

typedef struct t2_checkpoint t2__ckpt;

/* Compression of the whole archive. (Not T2__CKPT_NONE: configs/config.h uses that name.) */
typedef enum t2__ckpt_compression {
    T2__CKPT_COMPRESS_NONE = 0,
    T2__CKPT_COMPRESS_GZIP = 1,
    T2__CKPT_COMPRESS_ZSTD = 2,
} t2__ckpt_compression;

/* "none"/"gzip"/"zstd" -> *out; T2_EINVAL naming the text otherwise. */
int t2__ckpt_compression_parse(const char *s, t2__ckpt_compression *out);

/* File name extension for a compression: ".tar", ".tar.gz", ".tar.zst". */
const char *t2__ckpt_extension(t2__ckpt_compression comp);

/* Writes "<dir>/<uuid><extension>" into buf. T2_EINVAL if it does not fit. */
int t2__ckpt_path(char *buf, size_t len, const char *dir, const char *uuid, t2__ckpt_compression comp);

/* A named RNG state (the trial context's is "trial"; a trial may keep others). */
typedef struct t2__ckpt_rng {
    const char *name; /* 1..T2__CKPT_MAX_NAME bytes, unique within a checkpoint */
    t2_rng state;
} t2__ckpt_rng;

typedef struct t2__ckpt_kv {
    const char *key;  /* 1..T2__CKPT_MAX_NAME bytes, unique */
    const char *value;
} t2__ckpt_kv;

/* A raw parameter buffer (t2_wrap_params): saved after the net's parameters in params.bin, as a
 * tensor table entry named name with shape [n]. */
typedef struct t2__ckpt_raw {
    const char *name;  /* 1..47 printable bytes, unlike every other tensor name */
    float *data;
    size_t n;          /* 1..INT_MAX floats */
} t2__ckpt_raw;

/* What a checkpoint is restored into: the net's tensors and the raw buffers (either may be
 * absent, not both), and the optimizers in the order they were saved (none: parameters only). */
typedef struct t2__ckpt_model {
    t2_net *net;
    int net_alone;          /* a net loaded for inference (the public API): parameter tensors the
                               checkpoint holds after the net's (raw buffers of t2_wrap_params)
                               are left unread rather than a mismatch */
    const t2__ckpt_raw *raw;
    int nraw;
    t2_optim *const *opts;
    int nopts;
} t2__ckpt_model;

/* What goes into a checkpoint. Everything is borrowed for the duration of t2__ckpt_write only.
 * Zero-initialise and set what applies: NULL pointers and zero counts mean "absent". */
typedef struct t2__ckpt_contents {
    t2_net *net;                    /* initialised; NULL only with raw buffers */
    t2_optim *opt;                  /* NULL: no optimizer.bin (unless opts) */
    const t2__ckpt_raw *raw;        /* raw buffers, appended to params.bin in this order */
    int nraw;
    t2_optim *const *opts;          /* nopts > 0: several optimizers (opt ignored), covering the */
    int nopts;                      /* parameters in this order; their states follow each other */
    const t2_lr_schedule *sched;    /* NULL: no LR-schedule state */
    const t2_loader_state *loader;  /* NULL: no loader position */
    const t2__ckpt_rng *rngs;
    int n_rngs;
    const void *user_state;         /* NULL: no user_state.bin (non-NULL with len 0: empty entry) */
    size_t user_state_len;
    int64_t experiment_id, trial_id;
    const char *hparams_json;       /* any JSON value (checked); NULL: {} */
    int64_t batches_trained, epoch;
    const t2__ckpt_kv *strings;     /* free-form string map (e.g. the validation metric) */
    int n_strings;
    const char *uuid;               /* NULL: a fresh random one */
} t2__ckpt_contents;

typedef struct t2__ckpt_result {
    char uuid[T2__UUID_LEN + 1];
    uint64_t bytes;                 /* size of the archive file */
} t2__ckpt_result;

/* Writes the checkpoint atomically: to a temporary file in path's directory, fsync, rename over
 * path, fsync the directory. On any failure the temporary file is removed, nothing else is
 * touched (a previous file at path stays as it was) and T2_EIO names the path and errno's text
 * (ENOSPC, EFBIG under RLIMIT_FSIZE — ignore SIGXFSZ so that one is an error, not a signal).
 * T2_EINVAL for bad contents (missing/uninitialised net, bad names, invalid hparams JSON,
 * optimizer size unlike the net's, a user state over the reader's limit), T2_ENOMEM. res (may be NULL) gets the uuid and file size. */
int t2__ckpt_write(const char *path, const t2__ckpt_contents *c, t2__ckpt_compression comp,
                   t2__ckpt_result *res);

/* Reads and validates a checkpoint fully into memory (see t2_checkpoint_open for the errors).
 * Every open refuses a path that is not a regular file (a FIFO, a device: T2_EINVAL naming it,
 * without blocking), and checks the sizes metadata.json declares against the budget above
 * before any entry's data is decoded (T2_EFORMAT naming the entry and the limit). */
int t2__ckpt_open(t2__ckpt **out, const char *path);

/* Reads and checks metadata.json only: the info, tensor table, strings, RNGs, loader and
 * schedule getters work at once; the entries are read by t2__ckpt_restore, after it has checked
 * the tensor table (and optimizer) against the live model, so their size is bounded by the
 * model's and nothing big is decoded for a checkpoint that does not fit it. Until then
 * t2__ckpt_params and t2__ckpt_user_state say T2_ESTATE. Entries are fully checked before
 * restore changes anything. */
int t2__ckpt_open_info(t2__ckpt **out, const char *path);

/* As t2__ckpt_open_info, except that the checksums of the float arrays (params, buffers,
 * optimizer state) are left to t2__ckpt_restore, which computes them while it copies the arrays:
 * one pass over the bytes instead of two. The price: a checksum failure is found mid-copy, so the
 * model is left partly overwritten (every other check still comes first). For a restore into a
 * model that is discarded on failure, as the runner's is (the trial fails; a restart builds a new
 * one). */
int t2__ckpt_open_for_restore(t2__ckpt **out, const char *path);

/* Receives the bytes of a streamed entry, in order; non-zero (a T2_E* code with its message
 * set) stops reading. */
typedef int (*t2__ckpt_sink)(void *ctx, const void *data, size_t len);

/* Streams params.bin and then buffers.bin (a net's batchnorm statistics) to sink without holding
 * the archive or any entry in memory (the file is read in blocks; memory stays at a few MiB
 * whatever the checkpoint's size), checking every entry's checksum on the way. The caller must treat what the sink got as unchecked until this
 * returns T2_OK. *out gets the checkpoint's metadata (as t2__ckpt_open_info; free it with
 * t2__ckpt_free), NULL on failure. Errors as t2__ckpt_open, or the sink's. A NULL sink only verifies:
 * every checksum is checked and nothing is kept. */
int t2__ckpt_stream_params(t2__ckpt **out, const char *path, t2__ckpt_sink sink, void *ctx);

/* The same from bytes in memory (copied); name stands for the path in messages. */
int t2__ckpt_open_memory(t2__ckpt **out, const char *name, const void *data, size_t len);

void t2__ckpt_free(t2__ckpt *ck);

int t2__ckpt_get_info(const t2__ckpt *ck, t2_checkpoint_info *info);

/* Restores into a live model. net is required; opt NULL restores parameters only (warm start),
 * sched NULL leaves the schedule alone. Everything is checked before anything changes: tensor
 * names and shapes (T2_ESHAPE naming the tensor and both shapes), the optimizer's kind (T2_EINVAL)
 * and size (T2_ESHAPE), the schedule's kind and state (T2_EINVAL, from t2_lr_schedule_set_state).
 * T2_ENOTFOUND if opt/sched is given but the checkpoint has no optimizer/schedule state. From
 * t2__ckpt_open_for_restore, also T2_EFORMAT for a checksum failure, found while copying. */
int t2__ckpt_restore(t2__ckpt *ck, t2_net *net, t2_optim *opt, t2_lr_schedule *sched);

/* The same into a model with raw buffers and several optimizers (t2__ckpt_model). A raw buffer
 * that the checkpoint lacks or holds with another size is T2_ESHAPE naming it and both sizes; the
 * optimizers must match the saved ones in number, kind and size (T2_EINVAL / T2_ESHAPE naming
 * which). */
int t2__ckpt_restore_model(t2__ckpt *ck, const t2__ckpt_model *m, t2_lr_schedule *sched);

/* Getters for the rest of the training state; T2_ENOTFOUND when the checkpoint has none; for
 * the user state and params, T2_ESTATE while the entries are not read (t2__ckpt_open_info/
 * t2__ckpt_open_for_restore before t2__ckpt_restore, or a restore without an optimizer and then
 * one with: the skipped optimizer.bin is not kept). */
int t2__ckpt_loader_state(const t2__ckpt *ck, t2_loader_state *out);
int t2__ckpt_lr_state(const t2__ckpt *ck, t2_lr_state *out);
int t2__ckpt_get_rng(const t2__ckpt *ck, const char *name, t2_rng *out);
/* *data points into ck (valid until t2__ckpt_free); may be NULL when *len is 0. */
int t2__ckpt_user_state(const t2__ckpt *ck, const void **data, size_t *len);
/* The flat parameter array (num_params floats, little-endian, aligned), borrowed from ck like
 * the user state (for `t2exp export`). */
int t2__ckpt_params(const t2__ckpt *ck, const float **p, size_t *n);
/* NULL if absent. */
const char *t2__ckpt_string(const t2__ckpt *ck, const char *key);

/* Fills in the self checksum of a metadata.json text written by this format's writer (after any
 * padding: it covers all len bytes). T2_EINVAL if the text does not start with its place. */
int t2__ckpt_meta_seal(char *text, size_t len);

/* A random (version 4, RFC 4122) uuid as 36 lower-case characters plus NUL, from /dev/urandom.
 * T2_EIO if it cannot be read. */
int t2__uuid_v4(char out[T2__UUID_LEN + 1]);
/* 1 if s is a uuid as t2__uuid_v4 writes them (8-4-4-4-12 lower-case hex digits), else 0. */
int t2__uuid_valid(const char *s);

/* ---- garbage collection ---- */

/* 1 if name is a checkpoint file name as t2__ckpt_path makes them, "<uuid><extension>", with
 * *comp (may be NULL) set to its compression; 0 otherwise. uuid (may be NULL) gets the uuid. */
int t2__ckpt_name_parse(const char *name, char uuid[T2__UUID_LEN + 1], t2__ckpt_compression *comp);

/* 1 if name is one of t2__ckpt_write's temporary files, "<checkpoint name>.tmp-<pid>-<n>". */
int t2__ckpt_temp_name(const char *name);

/* The check before garbage collection deletes a file: path must be dir + "/" + a checkpoint file
 * name (no other component, so no "..", no absolute path elsewhere, no subdirectory) and, when it
 * exists, a regular file rather than a symlink. 0 if so (T2_ENOTFOUND: such a path, but no file
 * there), else T2_EINVAL naming the path and the directory. The controller never deletes a path
 * this refuses, whatever the store or a trial says. */
int t2__ckpt_gc_path_check(const char *dir, const char *path);

typedef struct t2__ckpt_gc_item {
    int64_t trial_id;
    int64_t batches;
    double metric;   /* the validation metric at the checkpoint, NaN if none */
    int64_t order;   /* creation order (store row id): larger is newer */
} t2__ckpt_gc_item;

typedef struct t2__ckpt_gc_params {
    int64_t save_experiment_best; /* keep the N best checkpoints with a metric over all trials */
    int64_t save_trial_best;      /* keep each trial's N best checkpoints with a metric */
    int64_t save_trial_latest;    /* keep each trial's N newest checkpoints */
    int smaller_is_better;
} t2__ckpt_gc_params;

/* Determined's policy as a pure function: keep[i] = 1 for the union of the three sets, 0 for the
 * checkpoints to delete. "Best" ranks by metric (ties: the newer wins), ignoring NaN metrics;
 * "latest" ranks by order. T2_EINVAL for NULL arguments (items may be NULL when n is 0) or a
 * negative count; T2_ENOMEM. */
int t2__ckpt_gc_select(const t2__ckpt_gc_item *items, size_t n, const t2__ckpt_gc_params *p,
                       unsigned char *keep);

#endif
