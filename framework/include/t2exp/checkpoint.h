/* t2exp/checkpoint.h — reading t2exp checkpoints from a user's own program.
 *
 * An experiment writes each checkpoint as one tar archive (optionally gzip- or zstd-compressed):
 * metadata.json (versions, ids, hparams, training position, the tensor table with shapes and
 * CRC-32C checksums), params.bin and buffers.bin (the net's flat parameter and batchnorm arrays,
 * little-endian float32), optimizer.bin and user_state.bin. This header is the read side a user
 * needs for inference: open a checkpoint (every size and checksum is verified; nothing is
 * extracted to disk), look at its metadata, and copy its weights into a net built with the same
 * layers. Writing, and restoring optimizer and training state, is the experiment runner's job.
 *
 *     t2_net *net;  ... build the same layers ...;  t2_net_init(net, &rng);
 *     if (t2_checkpoint_load_model("ckpt.tar", net)) fprintf(stderr, "%s\n", t2_errmsg());
 */
#ifndef T2EXP_CHECKPOINT_H
#define T2EXP_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_checkpoint t2_checkpoint;

/* The checkpoint's metadata. Strings belong to the checkpoint (valid until t2_checkpoint_free). */
typedef struct t2_checkpoint_info {
    int format_version;        /* archive format version (this build writes 2, reads 1 and 2) */
    const char *t2exp_version; /* t2_version() of the writer */
    const char *uuid;          /* RFC 4122 text */
    int64_t experiment_id;     /* 0 outside an experiment */
    int64_t trial_id;
    int64_t created_unix;      /* seconds since the epoch, when written */
    int64_t batches_trained;
    int64_t epoch;
    const char *hparams_json;  /* the trial's hyperparameters, compact JSON ("{}" if none) */
    size_t num_params;         /* floats in params.bin */
    size_t num_buffers;        /* floats in buffers.bin */
    int num_tensors;           /* entries of the tensor table (parameters and buffers) */
    int has_optimizer;         /* optimizer.bin present */
    int optimizer_kind;        /* t2_optim_kind, 0 without optimizer */
    int64_t optimizer_steps;
    int has_lr_schedule;
    int has_loader_state;
    int has_user_state;
    size_t user_state_bytes;
} t2_checkpoint_info;

/* Reads the whole archive at path into memory and validates it: entry names and kinds, sizes
 * against the metadata, every checksum, the tensor table. The sizes metadata.json declares are
 * checked before anything else is decoded: all entries together at most 1032 times the file's
 * size or 64 MiB, whichever is larger (docs/checkpoints.md). T2_ENOTFOUND if the file does not
 * exist, T2_EINVAL if it is not a regular file (a FIFO is refused without waiting), T2_EIO if it
 * cannot be read, T2_EFORMAT naming the path and the entry for anything malformed (truncated,
 * corrupt, checksum mismatch, unexpected entry, over the size budget), T2_EUNSUPPORTED for a
 * format version this build does not read, T2_ENOMEM. *out is NULL on failure. */
int t2_checkpoint_open(t2_checkpoint **out, const char *path);

/* Frees a checkpoint. Accepts NULL. */
void t2_checkpoint_free(t2_checkpoint *ck);

/* Fills *info. T2_EINVAL for NULL arguments. */
int t2_checkpoint_get_info(const t2_checkpoint *ck, t2_checkpoint_info *info);

/* Entry i (0..num_tensors-1) of the checkpoint's tensor table, in the same form as
 * t2_net_tensor_info. T2_EINVAL if i is out of range. */
int t2_checkpoint_tensor_info(const t2_checkpoint *ck, int i, t2_param_info *info);

/* The value of key in the checkpoint's free-form string map, or NULL if absent. */
const char *t2_checkpoint_user_value(const t2_checkpoint *ck, const char *key);

/* Copies the checkpoint's parameters and batchnorm buffers into net, which must be initialised
 * (t2_net_init) with the same layers. Every tensor is matched by name and shape first; on a
 * mismatch nothing is copied and T2_ESHAPE names the tensor and both shapes (or the tensor that
 * one side lacks). Raw buffers the trial also wrapped (t2_wrap_params: parameter tensors after the
 * net's) are not the net's and are left out; read them with t2_checkpoint_restore_params. T2_ESTATE for a net that is not initialised, T2_EINVAL for NULL arguments. */
int t2_checkpoint_restore_model(const t2_checkpoint *ck, t2_net *net);

/* t2_checkpoint_open + t2_checkpoint_restore_model + t2_checkpoint_free: loads the weights of the
 * checkpoint at path into net for inference. Errors as those two, except that the tensor table is
 * checked against net before the entries are decoded, so a checkpoint that does not fit the
 * model costs nothing but its metadata. */
int t2_checkpoint_load_model(const char *path, t2_net *net);

/* Raw parameter buffers (t2_wrap_params) are tensor table entries of the params array named as
 * they were wrapped, shape [n]. Copies the tensor called name into dst[0..n): it is found by name
 * and must hold exactly n floats. T2_ENOTFOUND naming the checkpoint and the name if there is no
 * such tensor, T2_ESHAPE naming both sizes, T2_EINVAL for NULL arguments. Works for a net's
 * tensors too: its parameters ("0.dense.weight") and its buffers ("1.batchnorm.running_mean"). */
int t2_checkpoint_restore_params(const t2_checkpoint *ck, const char *name, float *dst, size_t n);

/* t2_checkpoint_open + t2_checkpoint_restore_params + t2_checkpoint_free for one buffer; the
 * tensor table is checked before params.bin is decoded. Errors as those. */
int t2_checkpoint_load_params(const char *path, const char *name, float *dst, size_t n);

#ifdef __cplusplus
}
#endif
#endif
