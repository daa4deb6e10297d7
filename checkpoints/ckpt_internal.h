/* ckpt_internal.h — the checkpoint object shared by the writer, the reader and the metadata
 * codec (internal to checkpoints/). The writer fills one from its contents and serialises its
 * metadata; the reader parses metadata into one and attaches the entries' bytes. */
#ifndef T2_CHECKPOINTS_CKPT_INTERNAL_H
#define T2_CHECKPOINTS_CKPT_INTERNAL_H

#include "ckpt.h"

enum { E_META, E_PARAMS, E_BUFFERS, E_OPT, E_USER, E_COUNT };

/* Entry names in archive order. */
extern const char *const t2__ckpt_entry_name[E_COUNT];

typedef struct t2__ckpt_entry {
    int declared;              /* present in the archive (metadata.json always) */
    uint64_t size;             /* bytes */
    uint32_t crc;              /* CRC-32C of the bytes (not kept for metadata.json) */
    const unsigned char *data; /* the bytes (NULL when size is 0) */
    unsigned char *own;        /* malloc'd when data is a copy; NULL when it aliases the file */
} t2__ckpt_entry;

typedef struct t2__ckpt_tensor {
    t2_param_info info;
    uint32_t crc;
} t2__ckpt_tensor;

typedef struct t2__ckpt_named_rng {
    char name[T2__CKPT_MAX_NAME + 1];
    t2_rng state;
} t2__ckpt_named_rng;

struct t2_checkpoint {
    char *path;                /* for messages */
    int lazy;                  /* the float arrays' CRCs are left to restore (t2__ckpt_open_for_restore) */
    unsigned char *file;       /* the archive bytes, kept while entries alias them or are unread */
    size_t file_len;
    size_t file_mapped;        /* > 0: file is an mmap of this many bytes; 0: malloc'd */
    int fd;                    /* >= 0: the archive is streamed from this file (no file bytes) */
    void *ar;                  /* struct archive *, non-NULL while the entries after metadata.json
                                * are still to be read (t2__ckpt_read_entries) */
    int failed;                /* reading the entries failed: nothing more can be read */
    int last;                  /* the last entry read, -1 before any */
    unsigned seen;             /* bit k: entry k was read */
    t2__ckpt_entry e[E_COUNT];

    int format_version;
    char version[32];
    char uuid[T2__UUID_LEN + 1];
    int64_t experiment_id, trial_id, created, batches, epoch;
    char *hparams_json;

    size_t num_params, num_buffers; /* floats */
    int ntensors;
    t2__ckpt_tensor *tensors;

    int has_opt;
    int nopt;                  /* optimizers (1 unless raw buffers have their own); opt[0] is "the" one */
    struct t2__ckpt_opt {
        int kind;
        size_t size;           /* parameters the optimizer was created for */
        size_t floats;         /* state buffer length */
        int64_t steps;
        int has_lr;            /* lr: the rate its last step used (absent in older checkpoints) */
        double lr;
    } opt[T2__CKPT_MAX_OPTS];
    size_t opt_floats;         /* all optimizers' state floats: optimizer.bin */
    float *staged[2];          /* writer: params.bin, optimizer.bin gathered into one piece (malloc'd) */

    int has_lr;
    t2_lr_state lr;
    int has_loader;
    t2_loader_state loader;

    int nrngs;
    t2__ckpt_named_rng *rngs;
    int nstrings;
    char **keys, **values;
};

/* A byte range to checksum and, when dst is set, copy. tensor says what it is for messages:
 * an index into ck->tensors, or -1 - k for the whole entry k. */
typedef struct t2__ckpt_span {
    const unsigned char *src;
    unsigned char *dst;
    size_t len;
    uint32_t crc; /* out, when checksummed */
    int tensor;
} t2__ckpt_span;

/* One pass over all spans, split over the thread pool: CRC-32C of each (want_crc) and the copy
 * to dst where set. T2_ENOMEM only. */
int t2__ckpt_spans(t2__ckpt_span *spans, int n, int want_crc);

/* Writes into out (room for ck->ntensors + 1) the spans that check entry k of an open
 * checkpoint: one per tensor for params/buffers, so a mismatch names the tensor; one otherwise.
 * Returns how many. */
int t2__ckpt_entry_spans(const t2__ckpt *ck, int k, t2__ckpt_span *out);

/* Reads the entries after metadata.json of a checkpoint opened without them: those whose bit
 * (1 << k) is set in keep are kept in memory (checked as at open, the float arrays left to
 * restore when ck->lazy), the others are checksummed as they stream past and dropped. Each
 * entry's size was checked against the budget at open (and against the model by restore before
 * it calls this); decoding never goes past it. T2_OK at once when there is nothing to read. */
int t2__ckpt_read_entries(t2__ckpt *ck, unsigned keep);

/* T2_OK when entry k's bytes are in memory (or it is absent or empty); T2_ESTATE naming the
 * checkpoint otherwise. */
int t2__ckpt_have(const t2__ckpt *ck, int k);

/* Checksums the entries whose bits (1 << k) are set in entries, in one pass, and compares them
 * with metadata.json (t2__ckpt_check_spans). */
int t2__ckpt_verify(const t2__ckpt *ck, unsigned entries);

/* Compares checksummed spans with metadata.json: each tensor's CRC, and for params/buffers whose
 * tensors are all among the spans, the entry's CRC as their combination. T2_EFORMAT naming the
 * tensor or entry, T2_ENOMEM. */
int t2__ckpt_check_spans(const t2__ckpt *ck, const t2__ckpt_span *s, int n);

/* T2_EFORMAT with "checkpoint PATH: [WHERE: ]MESSAGE" (the reader's and the metadata codec's). */
int t2__ckpt_bad(const t2__ckpt *ck, const char *where, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Serialises ck's metadata (everything but the entries' bytes) as compact JSON (malloc'd). */
int t2__ckpt_meta_to_json(const t2__ckpt *ck, char **out, size_t *len);

/* Parses and validates metadata.json into ck: the fields above, which entries to expect and
 * their sizes and CRCs, a tensor table that tiles params/buffers exactly. T2_EUNSUPPORTED for
 * another format version, T2_EFORMAT naming ck->path otherwise. */
int t2__ckpt_meta_from_json(t2__ckpt *ck, const char *text, size_t len);

/* Checks a name for RNGs and string-map keys: 1..T2__CKPT_MAX_NAME printable ASCII bytes. */
int t2__ckpt_name_ok(const char *s);

/* Frees what the metadata owns (tensors, rngs, strings, hparams). */
void t2__ckpt_meta_clear(t2__ckpt *ck);

#endif
