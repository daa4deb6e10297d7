/* gc.c — which checkpoints garbage collection keeps: the union of save_experiment_best,
 * save_trial_best and save_trial_latest (Determined's checkpoint_storage semantics). A pure
 * function of the store's rows, so the controller decides and the policy is tested alone.
 * Also which files it may delete at all: checkpoint names inside the experiment's own
 * directory, never a path a store row or a trial's report happens to hold. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ckpt.h"
#include "t2exp/error.h"

int t2__ckpt_name_parse(const char *name, char uuid[T2__UUID_LEN + 1], t2__ckpt_compression *comp)
{
    if (!name || strlen(name) < T2__UUID_LEN) return 0;
    char u[T2__UUID_LEN + 1];
    memcpy(u, name, T2__UUID_LEN);
    u[T2__UUID_LEN] = '\0';
    if (!t2__uuid_valid(u)) return 0;
    static const t2__ckpt_compression all[] = {T2__CKPT_COMPRESS_NONE, T2__CKPT_COMPRESS_GZIP,
                                               T2__CKPT_COMPRESS_ZSTD};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name + T2__UUID_LEN, t2__ckpt_extension(all[i])) != 0) continue;
        if (uuid) memcpy(uuid, u, sizeof u);
        if (comp) *comp = all[i];
        return 1;
    }
    return 0;
}

/* ckpt_write.c's temporary names: "<path>.tmp-<pid>-<n>", both numbers decimal. */
int t2__ckpt_temp_name(const char *name)
{
    const char *t = name ? strstr(name, ".tmp-") : NULL;
    if (!t || (size_t)(t - name) >= 256) return 0;
    char base[256];
    memcpy(base, name, (size_t)(t - name));
    base[t - name] = '\0';
    if (!t2__ckpt_name_parse(base, NULL, NULL)) return 0;
    const char *p = t + 5;
    size_t d1 = strspn(p, "0123456789");
    if (d1 == 0 || p[d1] != '-') return 0;
    p += d1 + 1;
    size_t d2 = strspn(p, "0123456789");
    return d2 > 0 && p[d2] == '\0';
}

int t2__ckpt_gc_path_check(const char *dir, const char *path)
{
    if (!dir || !*dir || !path) return t2_seterr(T2_EINVAL, "checkpoint gc: NULL argument");
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--; /* "d/" and "d" are the same directory */
    const char *name = strncmp(path, dir, n) == 0 && path[n] == '/' ? path + n + 1 : NULL;
    if (!name || !t2__ckpt_name_parse(name, NULL, NULL))
        return t2_seterr(T2_EINVAL, "checkpoint gc: refusing to delete %s: not a checkpoint file "
                         "name (<uuid>.tar[.gz|.zst]) directly inside this experiment's checkpoint "
                         "directory %.*s", path, (int)n, dir);
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? T2_ENOTFOUND
                               : t2_seterr(T2_EIO, "checkpoint gc: %s: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return t2_seterr(T2_EINVAL, "checkpoint gc: refusing to delete %s: a %s, not a regular "
                         "checkpoint file", path, S_ISLNK(sb.st_mode) ? "symbolic link" : "non-file");
    return T2_OK;
}

typedef struct rank_item {
    double key;    /* metric, negated when larger is better: ascending = best first */
    int64_t trial;
    int64_t order;
    size_t idx;
} rank_item;

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* Best first; equal metrics: the newer first. */
static int by_metric(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return -cmp_i64(a->order, b->order);
}

static int by_trial_metric(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    int c = cmp_i64(a->trial, b->trial);
    return c ? c : by_metric(pa, pb);
}

static int by_trial_newest(const void *pa, const void *pb)
{
    const rank_item *a = pa, *b = pb;
    int c = cmp_i64(a->trial, b->trial);
    return c ? c : -cmp_i64(a->order, b->order);
}

/* Marks the first `per_group` items of each trial (all items as one group if !per_trial). */
static void keep_firsts(const rank_item *r, size_t m, int64_t count, int per_trial, unsigned char *keep)
{
    int64_t taken = 0;
    for (size_t i = 0; i < m; i++) {
        if (per_trial && i > 0 && r[i].trial != r[i - 1].trial) taken = 0;
        if (taken < count) {
            keep[r[i].idx] = 1;
            taken++;
        }
    }
}

int t2__ckpt_gc_select(const t2__ckpt_gc_item *items, size_t n, const t2__ckpt_gc_params *p,
                       unsigned char *keep)
{
    if (!p || (n && (!items || !keep))) return t2_seterr(T2_EINVAL, "checkpoint gc: NULL argument");
    if (p->save_experiment_best < 0 || p->save_trial_best < 0 || p->save_trial_latest < 0)
        return t2_seterr(T2_EINVAL, "checkpoint gc: negative save_* count (%lld, %lld, %lld)",
                         (long long)p->save_experiment_best, (long long)p->save_trial_best,
                         (long long)p->save_trial_latest);
    if (n == 0) return T2_OK;
    memset(keep, 0, n);
    rank_item *r = malloc(n * sizeof *r);
    if (!r) return t2_seterr(T2_ENOMEM, "checkpoint gc: out of memory for %zu checkpoints", n);
    size_t m = 0; /* the ones with a metric, for the two "best" policies */
    for (size_t i = 0; i < n; i++) {
        if (isnan(items[i].metric)) continue;
        r[m++] = (rank_item){p->smaller_is_better ? items[i].metric : -items[i].metric, items[i].trial_id,
                             items[i].order, i};
    }
    qsort(r, m, sizeof *r, by_metric);
    keep_firsts(r, m, p->save_experiment_best, 0, keep);
    qsort(r, m, sizeof *r, by_trial_metric);
    keep_firsts(r, m, p->save_trial_best, 1, keep);
    for (size_t i = 0; i < n; i++) r[i] = (rank_item){0, items[i].trial_id, items[i].order, i};
    qsort(r, n, sizeof *r, by_trial_newest);
    keep_firsts(r, n, p->save_trial_latest, 1, keep);
    free(r);
    return T2_OK;
}
