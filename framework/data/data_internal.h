/* data_internal.h — the dataset vtable and helpers shared by the framework/data sources. */
#ifndef T2_DATA_INTERNAL_H
#define T2_DATA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/data.h"
#include "t2exp/error.h"
#include "t2exp/rng.h"

/* Every dimension of an IDX file or cache must lie in 1..T2__MAX_DIM: far above any real image
 * size or class count, small enough that products of two dimensions cannot overflow. */
#define T2__MAX_DIM 65536
/* Sample counts stay below 2^31 so indices fit uint32 and products with small sizes fit size_t. */
#define T2__MAX_SAMPLES 0x7fffffffLL

enum { T2__PIX_NONE = 0, T2__PIX_U8 = 1, T2__PIX_F32 = 2 };

struct t2__dataset_ops {
    const char *kind;
    /* Writes sample i's floats, targets (target_width floats; target may be NULL) and label
     * (label may be NULL). Only called for datasets without an array view (see below); must be
     * safe to call from several threads at once. */
    int (*get)(const t2_dataset *ds, uint32_t i, float *x, float *target, int32_t *label);
    /* Frees what the implementation owns (not ds itself). */
    void (*destroy)(t2_dataset *ds);
};

struct t2_dataset {
    const struct t2__dataset_ops *ops;
    uint32_t n;
    int ndim;              /* 1 or 3 */
    int shape[3];
    size_t numel;          /* floats per sample */
    int num_classes;       /* 0 if unlabelled */
    /* Array view: every built-in dataset is a flat array, which lets the loader convert pixels
     * straight into the batch without a per-sample call. pix_type NONE means "use ops->get". */
    int pix_type;
    const void *pixels;    /* n * numel elements of pix_type */
    const int32_t *labels32; /* n labels, or NULL */
    const uint8_t *labels8;  /* n labels (IDX), or NULL */
    int target_width;        /* float targets per sample (0 = none) */
    const float *targets;    /* array view: n * target_width floats (NULL: ops->get gives them) */
    /* A split view: sample i is sample map[i] of parent (never itself a view). Views have no
     * array view of their own; t2__dataset_resolve maps through to the parent's. */
    const t2_dataset *parent;
    const uint32_t *map;
    void *impl;
};

/* The dataset that really holds sample *i (mapping *i through a split view). */
static inline const t2_dataset *t2__dataset_resolve(const t2_dataset *ds, uint32_t *i)
{
    if (ds->map) {
        *i = ds->map[*i];
        return ds->parent;
    }
    return ds;
}

/* Sample i of ds, any kind (views, array views, ops->get): x gets numel floats, target (may be
 * NULL) target_width floats, label (may be NULL) the label or -1. */
int t2__dataset_read(const t2_dataset *ds, uint32_t i, float *x, float *target, int32_t *label);

/* Decoded IDX content held in memory: `buf` owns the bytes, `data` points at the payload. */
typedef struct t2__idx {
    uint8_t *buf;
    const uint8_t *data;
    int ndim;
    uint32_t dims[3];
    size_t count;          /* payload bytes (product of dims) */
} t2__idx;

/* Decodes an IDX file image held in memory (raw or gzip, told apart by the first two bytes):
 * validates magic (type ubyte, `want_ndim` dims), dimensions and payload length. `name` is used
 * in error messages. On success the caller frees out->buf with free(). */
int t2__idx_decode(const char *name, const uint8_t *file, size_t len, int want_ndim, t2__idx *out);

/* Builds a dataset from decoded images ([N, H, W]) and labels ([N]), taking both buffers on
 * success (and freeing them on failure). */
int t2__idx_dataset(t2_dataset **out, t2__idx *images, t2__idx *labels, const char *images_name,
                    const char *labels_name);

/* Writes data[0..len) to path as a gzip file (used by tests to make compressed IDX files). */
int t2__gzip_write_file(const char *path, const void *data, size_t len);

/* Allocates a dataset with ops and fills the common fields (checks shape and n). */
int t2__dataset_new(t2_dataset **out, const struct t2__dataset_ops *ops, int64_t n, int ndim,
                    const int *shape);

/* dst[j] = src[j] / 255.0f: pixels as [0, 1] floats, exactly as PyTorch's ToTensor divides. */
void t2__u8_to_unit(float *dst, const uint8_t *src, size_t n);

/* Label of sample i (-1 if unlabelled). */
static inline int32_t t2__dataset_label(const t2_dataset *ds, uint32_t i)
{
    if (ds->labels32) return ds->labels32[i];
    if (ds->labels8) return ds->labels8[i];
    return -1;
}

/* Per-sample transform plan shared by all loader threads (read-only once built). */
typedef struct t2__xform {
    int crop_padding;
    float hflip_prob;
    int normalize;               /* any affine map other than identity */
    float scale[T2_LOADER_MAX_CHANNELS];  /* y = x * scale[c] + shift[c] */
    float shift[T2_LOADER_MAX_CHANNELS];
    int per_channel;             /* 0: channel 0's map for all channels */
    float *lut;                  /* uint8 datasets: [C or 1][256] value after scale and map */
    float *std_mean, *std_div;   /* per-element standardisation (numel each), or NULL */
} t2__xform;

int t2__xform_init(t2__xform *xf, const t2_dataset *ds, const t2_loader_params *p);
void t2__xform_free(t2__xform *xf);

/* Writes sample `index` of ds, transformed with draws from `sample_seed`, into dst (numel floats),
 * its label into *label and its targets into target (target_width floats; NULL when none). scratch
 * holds numel floats, used only for datasets without an array view. */
int t2__xform_sample(const t2__xform *xf, const t2_dataset *ds, uint32_t index,
                     uint64_t sample_seed, float *dst, int32_t *label, float *target, float *scratch);

/* Seed of the stream for (seed, epoch) and of a sample within it. */
static inline uint64_t t2__epoch_seed(uint64_t seed, int64_t epoch)
{
    return t2_hash64(t2_hash64(seed) ^ t2_hash64((uint64_t)epoch + 0x5851f42d4c957f2dULL));
}
static inline uint64_t t2__sample_seed(uint64_t epoch_seed, uint32_t index)
{
    return t2_hash64(epoch_seed ^ t2_hash64((uint64_t)index + 0x14057b7ef767814fULL));
}

#endif
