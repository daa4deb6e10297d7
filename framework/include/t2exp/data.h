/* t2exp/data.h — datasets (in-memory, IDX files, memory-mapped caches) and the data loader.
 *
 * A t2_dataset is a read-only, indexable set of samples: each sample is a float32 array of the
 * dataset's sample shape ({C, H, W} for images, {F} for feature vectors) with values in [0, 1]
 * for image data, plus an optional int32 class label and optional float targets (a fixed number
 * per sample: regression values, several outputs). Datasets come from IDX files, caches, memory,
 * CSV files, or any source of your own (t2_dataset_define). Datasets are safe to read from
 * several threads at once.
 *
 * A t2_loader turns a dataset into a stream of t2_batch: per-epoch shuffling from (seed, epoch),
 * sharding across data-parallel ranks, per-sample transforms that are random per
 * (seed, epoch, sample index), and optional prefetch worker threads. The batch sequence depends
 * only on the dataset and the parameters — never on the number of workers — and the loader's
 * position can be saved and restored so a resumed trial sees exactly the batches it would have. */
#ifndef T2EXP_DATA_H
#define T2EXP_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "t2exp/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct t2_dataset t2_dataset;
typedef struct t2_loader t2_loader;

/* ---- datasets ------------------------------------------------------------------------------ */

/* Number of samples in ds (0 for NULL). */
int64_t t2_dataset_len(const t2_dataset *ds);

/* The shape of one sample without the batch dimension: *ndim is 3 with shape = {C, H, W} for
 * images, or 1 with shape = {F, 1, 1} for feature vectors (the form t2_net_create takes).
 * T2_EINVAL if any argument is NULL. */
int t2_dataset_sample_shape(const t2_dataset *ds, int *ndim, int shape[3]);

/* Number of classes (max label + 1), or 0 if the dataset has no labels. */
int t2_dataset_num_classes(const t2_dataset *ds);

/* Floats per sample in the dataset's float targets; 0 when the dataset has none (or ds is NULL). */
int t2_dataset_target_width(const t2_dataset *ds);

/* Copies sample i, untransformed, into x (t2_dataset_sample_shape's element count of floats) and
 * its label into *label (label may be NULL; it gets -1 for an unlabelled dataset). T2_EINVAL for
 * an index out of range. Thread-safe. */
int t2_dataset_get(const t2_dataset *ds, int64_t i, float *x, int32_t *label);

/* As t2_dataset_get, also copying its float targets into target (t2_dataset_target_width floats;
 * target may be NULL, and is left alone for a dataset without targets). */
int t2_dataset_get_sample(const t2_dataset *ds, int64_t i, float *x, float *target, int32_t *label);

/* Materialises the whole dataset as one float32 tensor x of shape [N, ...sample shape] (free it
 * with t2_tensor_free) and, if labels is not NULL, its labels as a malloc'd array of N int32 (free
 * with free(); NULL for an unlabelled dataset). Values are as t2_dataset_get gives them. Converts on
 * up to 8 threads (the machine's cores). Float targets are not included (read them with
 * t2_dataset_get_sample). T2_ENOMEM; or the error of a failing sample read. */
int t2_dataset_to_tensor(const t2_dataset *ds, t2_tensor *x, int32_t **labels);

/* Frees the dataset and whatever it owns (memory, mappings). Accepts NULL. A dataset must outlive
 * every loader that borrows it. */
void t2_dataset_free(t2_dataset *ds);

/* An in-memory dataset over x ([N, C, H, W] images or [N, F] feature vectors) and labels (N
 * int32 class labels >= 0, or NULL for an unlabelled dataset). With copy = 1 the data is copied
 * and the caller may free its buffers at once; with copy = 0 the dataset borrows x->data and
 * labels, which must stay valid and unchanged until t2_dataset_free. Values are used as they are
 * (not rescaled). T2_EINVAL for a NULL/empty tensor, ndim other than 2 or 4, or a negative label;
 * T2_ENOMEM if the copy cannot be allocated. */
int t2_dataset_from_tensor(t2_dataset **out, const t2_tensor *x, const int32_t *labels, int copy);

/* An in-memory dataset with float targets: x as for t2_dataset_from_tensor, targets [N, W] (the
 * same N, W >= 1 floats per sample, all finite), labels optional (N int32 >= 0, or NULL). copy as
 * for t2_dataset_from_tensor (with copy = 0 targets->data is borrowed too). T2_EINVAL naming the
 * problem (shapes, the first non-finite target), T2_ENOMEM. */
int t2_dataset_from_tensor_targets(t2_dataset **out, const t2_tensor *x, const t2_tensor *targets,
                                   const int32_t *labels, int copy);

/* ---- your own data source ------------------------------------------------------------------ */

/* A dataset whose samples come from your code: a file format t2exp does not read, data generated
 * on the fly, a database. Fill one in and hand it to t2_dataset_define. */
typedef struct t2_dataset_source {
    const char *name;       /* used in error messages ("dataset 'NAME': sample 17: ...") */
    int64_t len;            /* number of samples, 1..2^31-1 */
    int ndim;               /* 1: feature vectors shape = {F}; 3: images shape = {C, H, W} */
    int shape[3];
    int target_width;       /* floats of target per sample (0 = no float targets) */
    int num_classes;        /* labels lie in 0..num_classes-1 (0 = no labels) */
    /* Writes sample i (0 <= i < len) into x (the sample's element count of floats), its targets
     * into target (target_width floats) and its label into *label. target and label are NULL
     * when the caller does not want them; check before writing. Return 0, or a negative T2_E...
     * code (set a message with t2_seterr) to fail the read: t2_loader_next then fails with a
     * message naming the sample index. Called from loader worker threads at once when
     * num_workers > 0, so it must be thread-safe (reading shared, unchanging data is). */
    int (*get)(void *user, int64_t i, float *x, float *target, int32_t *label);
    /* Called once by t2_dataset_free (also when t2_dataset_define fails); may be NULL. */
    void (*destroy)(void *user);
} t2_dataset_source;

/* Makes a dataset over src (copied; name is copied too) and user (passed to get and destroy).
 * The loader shuffles, shards, prefetches, transforms and resumes it as any other dataset. A
 * label outside 0..num_classes-1 or a non-finite target from get is an error naming the sample.
 * T2_EINVAL naming the bad field (length, shape, widths, NULL get); src->destroy(user) has then
 * been called. */
int t2_dataset_define(t2_dataset **out, const t2_dataset_source *src, void *user);

/* ---- CSV files, splits, statistics ----------------------------------------------------------- */

/* How t2_dataset_csv_open reads a file. Columns are named by their header names (has_header) or
 * by 0-based decimal indices ("0", "3"); with a header a name that matches no column but is all
 * digits is taken as an index. */
typedef struct t2_csv_params {
    char delimiter;                     /* default ',' */
    int has_header;                     /* default 1: first row names the columns */
    const char *const *feature_columns; /* names (with a header) or decimal indices; NULL = every column that is not a target/label */
    int nfeatures;
    const char *const *target_columns;  /* float target columns (regression / multi-output) */
    int ntargets;
    const char *label_column;           /* or: one integer class-label column (NULL = none) */
} t2_csv_params;

/* Defaults: ',' delimiter, a header row, every column a feature, no targets, no label. */
t2_csv_params t2_csv_params_default(void);

/* Reads a CSV file (parsed by libcsv: quoted fields, "" escapes, CRLF, blank lines skipped) into
 * an in-memory dataset of feature vectors {F} with float targets and/or an int32 label. Every
 * selected cell must be a finite decimal number (spaces around it are ignored); a label cell a
 * non-negative integer. Errors are located: "file:LINE:COL (column 'NAME'): ..." with 1-based
 * line and column numbers, for a non-numeric, non-finite or empty cell, a bad label, a row whose
 * field count differs from the first row's, or a malformed quote (T2_EFORMAT); a column name that
 * does not exist lists the columns there are (T2_ENOTFOUND); a column selected twice (T2_EINVAL).
 * Refuses anything but a regular file (FIFOs, directories: T2_EIO) and files of more than 2^28
 * selected values, 65536 columns or a field over 1 MiB (T2_EFORMAT). T2_ENOTFOUND for a missing file, T2_ENOMEM. */
int t2_dataset_csv_open(t2_dataset **out, const char *path, const t2_csv_params *p);

/* Splits ds into two views that borrow it (ds must outlive both; free each with
 * t2_dataset_free): a random subset of round(fraction * len) samples goes to *first, the rest to
 * *second, each in ds's order. The subset depends only on (len, fraction, seed). T2_EINVAL for a
 * fraction outside [0, 1] or a part that would be empty. */
int t2_dataset_split(t2_dataset *ds, double fraction, uint64_t seed, t2_dataset **first,
                     t2_dataset **second);

/* Per-element mean and population standard deviation (divided by N) of ds's inputs: mean and std
 * each hold the sample's element count of floats. Computed in double precision in two passes.
 * Give them to t2_loader_params.standardize_mean/std. Errors of a failing sample read. */
int t2_dataset_feature_stats(const t2_dataset *ds, float *mean, float *std);

/* Opens an IDX image/label pair of the MNIST family: images_path is idx3 ubyte (magic 0x803,
 * [N, H, W]), labels_path idx1 ubyte (magic 0x801, [N]). Each file may be raw or gzip-compressed
 * (detected from its first bytes, decompressed through libdeflate). The whole content is checked:
 * magic, every dimension in 1..65536, the payload exactly as long as the header says (no
 * truncation, no trailing bytes), equal counts. Pixels stay uint8 in memory (a quarter of the
 * float size) and become floats in [0, 1] (v / 255) when a sample is read; samples are {1, H, W}.
 * Errors name the file and the problem: T2_ENOTFOUND (no such file), T2_EIO (read error),
 * T2_EFORMAT (bad magic, absurd dimensions, truncated or corrupt data, count mismatch), T2_ENOMEM. */
int t2_dataset_idx_open(t2_dataset **out, const char *images_path, const char *labels_path);

/* Most source files a cache records (t2_dataset_cache_write_sources). */
#define T2_DATASET_CACHE_MAX_SOURCES 8

/* Writes ds to a flat cache file at path: a 4096-byte header (magic, version, sample count and
 * shape, pixel type, label presence, class count, file size, source files), the pixels (uint8 if
 * ds stores uint8, else float32) and the int32 labels. The file is written under a temporary name
 * in the same directory, fsynced and renamed over path, so readers never see a half-written
 * cache; it is private to the user (mode 0600). T2_EIO on any write failure (the temporary file
 * is removed). Caches hold inputs and labels only: a dataset with float targets is refused
 * (T2_EUNSUPPORTED); keep such data (a CSV file is read fast) in memory. */
int t2_dataset_cache_write(const t2_dataset *ds, const char *path);

/* As t2_dataset_cache_write, recording in the header the identity of the nsources (0..8) files
 * ds was made from: each one's absolute path (as a hash), size, modification time, inode and
 * device, taken now. T2_ENOTFOUND if a source does not exist. */
int t2_dataset_cache_write_sources(const t2_dataset *ds, const char *path, const char *const *sources,
                                   int nsources);

/* Opens a cache written by t2_dataset_cache_write by mapping it read-only (MAP_SHARED), so all
 * trials reading the same cache share one copy in the page cache; nothing is copied. Refused
 * (T2_EIO, "refused" in the message) unless it is a regular file, not a symbolic link, owned by
 * this user and writable by no one else: a cache another user could write could be poisoned. The
 * header is validated against the file's real size and every label against the class count.
 * T2_ENOTFOUND, T2_EIO, or T2_EFORMAT (not a cache, other version or byte order, inconsistent
 * sizes) with the path in the message. The file must not be truncated while mapped. This does
 * not look at the sources the cache records; t2_dataset_cache_open_sources does. */
int t2_dataset_cache_open(t2_dataset **out, const char *path);

/* As t2_dataset_cache_open, and the cache must record exactly these source files, each as it is
 * now (same absolute path, size, modification time, inode, device): T2_ESTATE, naming the file
 * that differs, for a cache made from other files or before they changed. T2_ENOTFOUND if a
 * source does not exist (the cache is never trusted without its sources). */
int t2_dataset_cache_open_sources(t2_dataset **out, const char *path, const char *const *sources,
                                  int nsources);

/* The default directory for dataset caches, written to buf: $T2EXP_HOME/cache when T2EXP_HOME is
 * set, else $XDG_CACHE_HOME/t2exp, else $HOME/.cache/t2exp. T2_ENOTFOUND if none is set,
 * T2_EINVAL if buf is too short. */
int t2_dataset_cache_dir(char *buf, size_t len);

/* An IDX pair (as t2_dataset_idx_open) through a cache: the one call a trial needs. The cache is
 * cache_dir/<images file name>-<hash of both absolute paths>.t2c (cache_dir NULL or "":
 * t2_dataset_cache_dir()); missing directories are created private (0700). When that cache
 * records these two files as they are now and passes t2_dataset_cache_open's checks, it is mapped;
 * otherwise (missing, stale, damaged, refused) the IDX files are decoded and the cache written
 * again (0600) and mapped. The IDX files must exist even when a cache does: T2_ENOTFOUND
 * otherwise. Errors as t2_dataset_idx_open and t2_dataset_cache_write. Safe to call from several
 * processes at once (each rebuild renames a complete file into place). */
int t2_dataset_idx_cached(t2_dataset **out, const char *images_path, const char *labels_path,
                          const char *cache_dir);

/* The Fashion-MNIST directory: $FASHION_MNIST_DIR if set and non-empty, else
 * "/usr/share/datasets/fashion-mnist" (where Debian's dataset-fashion-mnist installs it). */
const char *t2_fashion_mnist_dir(void);

/* Opens Fashion-MNIST's "train" (60000 samples) or "test" (10000) split from dir (NULL: the
 * directory of t2_fashion_mnist_dir()), preferring the *.gz files and falling back to
 * uncompressed ones. T2_ENOTFOUND, with a hint to `apt-get install dataset-fashion-mnist` or to
 * set FASHION_MNIST_DIR, if the files are absent; T2_EINVAL for another split name; otherwise as
 * t2_dataset_idx_open. */
int t2_dataset_fashion_mnist(t2_dataset **out, const char *split, const char *dir);

/* The same split through t2_dataset_idx_cached's verified cache in cache_dir (NULL: the
 * default): what prepare_data and the loaders of the example trials call. */
int t2_dataset_fashion_mnist_cached(t2_dataset **out, const char *split, const char *dir,
                                    const char *cache_dir);

/* ---- loader -------------------------------------------------------------------------------- */

#define T2_LOADER_MAX_CHANNELS 8

typedef struct t2_loader_params {
    int batch_size;   /* samples per batch on this rank (> 0) */
    int shuffle;      /* 1: a fresh permutation per epoch, from (seed, epoch) only */
    int drop_last;    /* 1: drop the short final global batch of an epoch */
    uint64_t seed;    /* shuffle and transform randomness */
    int rank;         /* this rank, 0..world_size-1 */
    int world_size;   /* data-parallel ranks sharing the dataset (>= 1) */
    int num_workers;  /* prefetch threads; 0 = batches built in the calling thread */
    int prefetch;     /* ready batches the queue may hold (>= 1; raised to num_workers) */
    int repeat;       /* 1: stream forever across epochs; 0: a NULL batch marks each epoch's end */
    int own_dataset;  /* 1: the loader takes ds (freed by t2_loader_free, or at once if create fails) */
    /* Transforms, applied in this order, each random per (seed, epoch, sample index):
     * random crop after zero padding, random horizontal flip, then normalisation. */
    int crop_padding;       /* 0 = off; else pad by this many pixels and crop back to H x W */
    float hflip_prob;       /* probability of a horizontal flip (0 = off) */
    int normalize_channels; /* 0 = off; 1 = mean[0]/std[0] for every channel; C = per channel */
    float mean[T2_LOADER_MAX_CHANNELS];
    float std[T2_LOADER_MAX_CHANNELS];
    /* Per-element standardisation after every transform above: x[j] = (x[j] - mean[j]) / std[j]
     * over the sample's element count. NULL = off; copied at t2_loader_create. A std of 0 (a
     * constant feature) divides by 1, as scikit-learn's StandardScaler does. Take them from the
     * training split only (t2_dataset_split, then t2_dataset_feature_stats on the train part) and
     * give the same arrays to the training and the validation loader. */
    const float *standardize_mean;
    const float *standardize_std;
} t2_loader_params;

/* Defaults: batch_size 32, no shuffle, keep the short batch, seed 0, rank 0 of 1, 0 workers,
 * prefetch 2, repeat 1, borrowed dataset, no transforms. */
t2_loader_params t2_loader_params_default(void);

/* The loader's position: the epoch and the index within it of the next batch t2_loader_next will
 * deliver. In repeat = 0 mode batch may equal the batches per epoch, meaning the end-of-epoch NULL
 * is due next. A plain value: store it in a checkpoint and give it back to t2_loader_restore. */
typedef struct t2_loader_state {
    int64_t epoch;
    int64_t batch;
} t2_loader_state;

/* Creates a loader over ds (borrowed unless p->own_dataset). Batching: each epoch's sample order
 * is the identity or, with shuffle, a permutation drawn from (seed, epoch). Global batch k is the
 * samples at positions [k*G, (k+1)*G) of that order, G = batch_size * world_size, and rank r gets
 * the r-th contiguous slice of batch_size of it, so the ranks' batches are disjoint and together
 * make up the single-rank batch of size G. A short final global batch of m < G samples is dropped
 * with drop_last; otherwise it is split as evenly as possible (rank r gets m / W samples, plus one
 * if r < m % W, in rank order), except that it is dropped if m < world_size, since some rank
 * would get nothing. Crop and flip need image samples (ndim 3). T2_EINVAL for bad parameters or
 * an epoch with no batch; T2_ENOMEM. No thread starts until the first t2_loader_next. */
int t2_loader_create(t2_loader **out, t2_dataset *ds, const t2_loader_params *p);

/* Delivers the next batch in *out: x is [n, ...sample shape], labels NULL for an unlabelled
 * dataset, targets [n, target_width] (NULL for a dataset without float targets). The batch and its buffers belong to the loader and stay valid until the next
 * t2_loader_next, t2_loader_restore or t2_loader_free. With repeat = 0, after the last batch of an
 * epoch one call sets *out = NULL (and returns 0); the call after it starts the next epoch. On an
 * error the position does not advance (a later call retries). T2_ENOMEM if a worker thread cannot
 * be started. */
int t2_loader_next(t2_loader *l, const t2_batch **out);

/* Batches per epoch on every rank (the same for all ranks). 0 for NULL. */
int64_t t2_loader_batches_per_epoch(const t2_loader *l);

/* Current position (see t2_loader_state). T2_EINVAL for NULL arguments. */
int t2_loader_state_get(const t2_loader *l, t2_loader_state *st);

/* Moves the loader to st: the next batch delivered is batch st->batch of epoch st->epoch, exactly
 * as an uninterrupted loader would have delivered it. Stops and discards prefetched work.
 * T2_EINVAL for a negative epoch or a batch index outside 0..batches per epoch (the end value is
 * only valid with repeat = 0). */
int t2_loader_restore(t2_loader *l, const t2_loader_state *st);

/* Stops the worker threads (waking any that wait), frees the batch buffers, and frees the dataset
 * if the loader owns it. Accepts NULL. */
void t2_loader_free(t2_loader *l);

#ifdef __cplusplus
}
#endif
#endif
