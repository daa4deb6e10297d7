/* store_resolve.c — the one place that turns what a user types into a trial or a checkpoint:
 * "EXP.N" or a trial id for trials; a path, "EXP", "EXP.N", "model:NAME[:VERSION]" or a uuid for
 * checkpoints. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "store.h"
#include "t2exp/error.h"

/* A positive decimal integer filling s[0..n) exactly. */
static int parse_pos(const char *s, size_t n, int64_t *out, int allow_zero)
{
    if (n == 0 || n > 18) return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v == 0 && !allow_zero) return -1;
    *out = v;
    return 0;
}

/* "EXP" (trial_ordinal -1) or "EXP.N"; -1 for any other text. */
static int parse_ref(const char *ref, int64_t *exp, int64_t *ordinal)
{
    const char *dot = strchr(ref, '.');
    *ordinal = -1;
    if (!dot) return parse_pos(ref, strlen(ref), exp, 0);
    if (parse_pos(ref, (size_t)(dot - ref), exp, 0)) return -1;
    return parse_pos(dot + 1, strlen(dot + 1), ordinal, 1);
}

int t2__store_resolve_trial(t2__store *st, const char *ref, int64_t *trial_id)
{
    if (!st || !ref || !trial_id) return t2_seterr(T2_EINVAL, "store: resolve_trial: NULL argument");
    int64_t a, ord;
    if (parse_ref(ref, &a, &ord))
        return t2_seterr(T2_EINVAL, "not a trial: %s (expected EXPERIMENT.N, e.g. 3.0, or a trial id)", ref);
    if (ord >= 0) return t2__store_trial_id(st, a, ord, trial_id);
    /* A plain number is a trial's store id, as `t2exp trials` lists it. */
    t2__trial_row r;
    int rc = t2__store_get_trial(st, a, &r);
    if (rc == T2_ENOTFOUND) return t2_seterr(T2_ENOTFOUND, "store %s: no trial with id %s", t2__store_path(st), ref);
    if (!rc) *trial_id = a;
    t2__trial_row_free(&r);
    return rc;
}

/* ref as the store's: model:NAME[:V], EXP, EXP.N or a uuid. */
static int from_store(t2__store *st, const char *ref, t2__checkpoint_row *out)
{
    int64_t exp, ord, trial = 0;
    int rc;
    if (!strncmp(ref, "model:", 6)) { /* model:NAME (its latest version) or model:NAME:VERSION */
        char name[256];
        const char *colon = strchr(ref + 6, ':');
        int64_t version = 0;
        size_t n = colon ? (size_t)(colon - ref - 6) : strlen(ref + 6);
        if (n == 0 || n >= sizeof name || (colon && parse_pos(colon + 1, strlen(colon + 1), &version, 0)))
            return t2_seterr(T2_EINVAL, "checkpoint %s: expected model:NAME or model:NAME:VERSION", ref);
        memcpy(name, ref + 6, n);
        name[n] = '\0';
        return t2__store_model_checkpoint(st, name, version, out);
    }
    if (!parse_ref(ref, &exp, &ord)) {
        if (ord >= 0 && (rc = t2__store_trial_id(st, exp, ord, &trial))) return rc;
        t2__experiment_row e;
        if ((rc = t2__store_get_experiment(st, exp, &e)))
            return rc == T2_ENOTFOUND ? t2_seterr(rc, "checkpoint %s: no such file, and no experiment %" PRId64 " in the store",
                                                  ref, exp)
                                      : rc;
        t2__experiment_row_free(&e);
        return t2__store_best_checkpoint(st, exp, trial, out);
    }
    rc = t2__store_checkpoint_by_uuid(st, ref, out);
    if (rc == T2_ENOTFOUND)
        rc = t2_seterr(T2_ENOTFOUND, "checkpoint %s: not a file, EXPERIMENT, EXPERIMENT.N, nor the uuid of an "
                       "active checkpoint in %s", ref, t2__store_path(st));
    return rc;
}

/* 1 with *out the row when the regular file at ref (sb its stat) is a checkpoint this store
 * recorded: named <uuid>.tar[...], and that uuid's row names the same file. Else 0, *out empty. */
static int known_file(t2__store *st, const char *ref, const struct stat *sb, t2__checkpoint_row *out)
{
    const char *base = strrchr(ref, '/');
    base = base ? base + 1 : ref;
    char uuid[64];
    size_t n = strcspn(base, ".");
    struct stat rb;
    if (n >= sizeof uuid) return 0;
    memcpy(uuid, base, n);
    uuid[n] = '\0';
    if (t2__store_checkpoint_by_uuid(st, uuid, out) != T2_OK) {
        t2_clearerr();
        memset(out, 0, sizeof *out);
        return 0;
    }
    if (out->path && stat(out->path, &rb) == 0 && rb.st_dev == sb->st_dev && rb.st_ino == sb->st_ino) return 1;
    t2__checkpoint_row_free(out);
    memset(out, 0, sizeof *out);
    return 0;
}

int t2__store_resolve_checkpoint(t2__store *st, const char *ref, t2__checkpoint_row *out)
{
    if (!ref || !out) return t2_seterr(T2_EINVAL, "store: resolve_checkpoint: NULL argument");
    memset(out, 0, sizeof *out);
    struct stat sb;
    if (!ref[0] || stat(ref, &sb) != 0) {
        if (!st) return t2_seterr(T2_ENOTFOUND, "checkpoint %s: no such file, and no store to look it up in", ref);
        return from_store(st, ref, out);
    }
    /* A path that exists is the checkpoint (what every older t2exp accepted), unless the store
     * reads it too: a results folder named "1" beside the user must not hide experiment 1, and a
     * file named "1.0" that is also trial 1.0's best is ambiguous (./1.0 says the file). */
    if (st && from_store(st, ref, out) == T2_OK) {
        if (!S_ISREG(sb.st_mode)) return T2_OK;
        t2_seterr(T2_EINVAL, "checkpoint %s: both a file here and the store's checkpoint %s; write ./%s for the file, "
                  "or the uuid for the store's", ref, out->uuid ? out->uuid : "", ref);
        t2__checkpoint_row_free(out);
        memset(out, 0, sizeof *out);
        return T2_EINVAL;
    }
    t2_clearerr();
    t2__checkpoint_row_free(out);
    memset(out, 0, sizeof *out);
    /* The store's own file, by the path `t2exp checkpoints` lists (or another name for it): that
     * checkpoint, uuid and all, so `model register NAME PATH` takes it as it takes the uuid. */
    if (st && S_ISREG(sb.st_mode) && known_file(st, ref, &sb, out)) return T2_OK;
    if (!(out->path = strdup(ref))) return t2_seterr(T2_ENOMEM, "store: out of memory");
    return T2_OK;
}
