/* config_sections.c — the resources, checkpoint_storage, optimizations and reproducibility
 * sections (the searcher's is config_searcher.c). Each walks its map in file order so that
 * warnings come out in the order a user reads the file. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_internal.h"
#include "internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)

/* ---------- resources ---------- */

const char *const t2__cfg_resources_keys[] = {"slots_per_trial", "max_slots", "max_threads_per_trial", "hostfile",
                                              "slurm", "controller_address", "isolation", "resource_pool", "priority",
                                              "weight", "shm_size", "devices", "native_parallel", "is_single_node",
                                              "agent_label", "slots", NULL};

int t2__cfg_resources(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    char path[T2__PATH_MAX];
    int rc;
    T2__UNUSED(kmark);
    if ((rc = t2__want_map(n, "resources"))) return rc;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        t2__path_join(path, sizeof path, "resources", key);
        if (KEY_IS("slots_per_trial")) {
            int64_t slots = cfg->resources.slots_per_trial;
            rc = t2__get_int(v, path, 0, &slots);
            /* 0 is Determined's CPU-only trial; here every slot is a CPU core, so it is one slot. */
            if (!rc && slots == 0) {
                slots = 1;
                rc = t2__cfg_warn(cfg, &v->mark, "%s: 0 (Determined's CPU-only value) runs each trial on 1 slot", path);
            }
            cfg->resources.slots_per_trial = slots;
            /* Kept for the slot check after the load (create's, preview's), which has no tree. */
            char where[T2__PATH_MAX + 32];
            t2__ymark_format(&v->mark, where, sizeof where);
            free(cfg->resources.slots_per_trial_at);
            if (!rc && !(cfg->resources.slots_per_trial_at = strdup(where)))
                rc = t2_seterr(T2_ENOMEM, "config: out of memory");
        } else if (KEY_IS("max_slots")) rc = t2__get_int(v, path, 1, &cfg->resources.max_slots);
        else if (KEY_IS("max_threads_per_trial")) {
            rc = t2__get_int(v, path, 1, &cfg->resources.max_threads_per_trial);
            /* t2_set_num_threads's range: a trial never runs on more. */
            if (!rc && cfg->resources.max_threads_per_trial > 64)
                rc = t2__cfg_err(&v->mark, path, "must be at most 64, got %lld",
                                 (long long)cfg->resources.max_threads_per_trial);
        }
        else if (KEY_IS("hostfile")) rc = t2__get_string(v, path, &cfg->resources.hostfile);
        else if (KEY_IS("slurm")) {
            static const char *const modes[] = {"auto", "off", NULL};
            rc = t2__get_enum(v, path, modes, &cfg->resources.slurm_off);
        }
        else if (KEY_IS("controller_address")) {
            rc = t2__get_string(v, path, &cfg->resources.controller_address);
            struct in_addr a;
            if (!rc && cfg->resources.controller_address && inet_pton(AF_INET, cfg->resources.controller_address, &a) != 1)
                rc = t2__cfg_err(&v->mark, path, "expected an IPv4 address of this machine, got \"%s\"",
                                 cfg->resources.controller_address);
        }
        else if (KEY_IS("isolation")) {
            static const char *const names[] = {"worker", "process_per_trial", NULL};
            int found = -1;
            for (int i = 0; names[i] && v->kind == T2__Y_SCALAR; i++)
                if (!strcmp(v->text, names[i])) found = i;
            rc = T2_OK;
            if (found < 0) {
                char buf[128], hint[96];
                rc = t2__cfg_err(&v->mark, path, "must be worker or process_per_trial, got %s%s",
                                 t2__ydesc(v, buf, sizeof buf), t2__cfg_value_hint(v, names, hint, sizeof hint));
            } else cfg->resources.isolation = found;
        } else if (KEY_IS("resource_pool") || KEY_IS("priority") || KEY_IS("weight") || KEY_IS("shm_size") ||
                 KEY_IS("devices") || KEY_IS("native_parallel") || KEY_IS("is_single_node") ||
                 KEY_IS("agent_label") || KEY_IS("slots"))
            rc = t2__cfg_ignored(cfg, &n->key_marks[k], path, "t2exp has no cluster scheduler");
        else rc = t2__cfg_unknown(cfg, &n->key_marks[k], path, t2__cfg_resources_keys);
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}

/* ---------- checkpoint_storage ---------- */

const char *const t2__cfg_checkpoint_storage_keys[] = {
    "type", "host_path", "storage_path", "save_experiment_best", "save_trial_best", "save_trial_latest", "compression",
    "propagation", "container_path", "checkpoint_path", "tensorboard_path", NULL};

/* The next component of a path at p (its length in *len, 0 at the end), skipping empty and "."
 * components: "a//./b/" is a, b. */
static const char *path_component(const char *p, size_t *len)
{
    for (;;) {
        while (*p == '/') p++;
        size_t l = strcspn(p, "/");
        if (l == 1 && p[0] == '.') {
            p++;
            continue;
        }
        *len = l;
        return p;
    }
}

static int has_dotdot(const char *p)
{
    size_t l;
    for (p = path_component(p, &l); l; p = path_component(p + l, &l))
        if (l == 2 && p[0] == '.' && p[1] == '.') return 1;
    return 0;
}

/* 1 when the absolute path sp is host or under it, component by component (neither resolved:
 * a '..' in host matches nothing, since sp has none). */
static int path_under(const char *sp, const char *host)
{
    size_t la, lb;
    for (;;) {
        host = path_component(host, &lb);
        if (!lb) return 1;
        sp = path_component(sp, &la);
        if (la != lb || memcmp(sp, host, la)) return 0;
        sp += la;
        host += lb;
    }
}

/* host_path and storage_path, once both are read (in either order), as Determined's shared_fs
 * checks them (_full_storage_path: host_path must be absolute; normpath(host_path/storage_path)
 * must stay under host_path). An empty value is refused rather than taken as set: host_path ""
 * made the directory /<store id>/experiment-N at the filesystem root. A '..' component is refused
 * anywhere in storage_path (the directory is made and written, so it may not climb out of its
 * base); an absolute storage_path must be host_path or under it when host_path is given (without
 * host_path it is the base itself, t2exp's extension). */
static int storage_paths(t2__config *cfg, const t2__ynode *n)
{
    const t2__ynode *hp = t2__ymap_get(n, "host_path", NULL), *sp = t2__ymap_get(n, "storage_path", NULL);
    char buf[128], buf2[128];
    int rc = T2_OK;
    if (hp && (t2__ynull(hp) || hp->kind != T2__Y_SCALAR)) hp = NULL; /* null: the default; else already refused */
    if (sp && (t2__ynull(sp) || sp->kind != T2__Y_SCALAR)) sp = NULL;
    if (hp) {
        if (!hp->text[0])
            rc = t2__cfg_err(&hp->mark, "checkpoint_storage.host_path",
                             "expected an absolute path, got an empty string (leave host_path out, or null, for "
                             "the default: the t2exp home)");
        else if (hp->text[0] != '/')
            rc = t2__cfg_err(&hp->mark, "checkpoint_storage.host_path",
                             "expected an absolute path (as Determined's shared_fs requires), got %s",
                             t2__ydesc(hp, buf, sizeof buf));
        if (rc) {
            if ((rc = t2__cfg_collect(cfg, rc))) return rc;
            hp = NULL; /* storage_path is still checked, alone */
        }
    }
    if (!sp) return T2_OK;
    if (!sp->text[0])
        return t2__cfg_err(&sp->mark, "checkpoint_storage.storage_path",
                           "expected a directory under host_path, got an empty string (leave storage_path out, or "
                           "null, to use host_path itself)");
    if (has_dotdot(sp->text))
        return t2__cfg_err(&sp->mark, "checkpoint_storage.storage_path",
                           "has a '..' component, got %s: storage_path is a directory under host_path (or the t2exp "
                           "home), never above it (Determined: the storage path must be a subdirectory of the host "
                           "path)",
                           t2__ydesc(sp, buf, sizeof buf));
    if (hp && sp->text[0] == '/' && !path_under(sp->text, hp->text))
        return t2__cfg_err(t2__cfg_blame(&sp->mark, &hp->mark), "checkpoint_storage.storage_path",
                           "%s is not under host_path %s: an absolute storage_path must be host_path or a directory "
                           "under it (as in Determined)",
                           t2__ydesc(sp, buf, sizeof buf), t2__ydesc(hp, buf2, sizeof buf2));
    return T2_OK;
}

int t2__cfg_checkpoint_storage(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    char path[T2__PATH_MAX];
    int rc;
    T2__UNUSED(kmark);
    if ((rc = t2__want_map(n, "checkpoint_storage"))) return rc;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        t2__path_join(path, sizeof path, "checkpoint_storage", key);
        if (KEY_IS("type")) {
            if (!t2__ynull(v) && (v->kind != T2__Y_SCALAR || strcmp(v->text, "shared_fs") != 0)) {
                static const char *const types[] = {"shared_fs", NULL};
                char buf[128], hint[96];
                rc = t2__cfg_err(&v->mark, path, "only shared_fs is supported, got %s%s", t2__ydesc(v, buf, sizeof buf),
                                 t2__cfg_value_hint(v, types, hint, sizeof hint));
            } else rc = T2_OK;
        } else if (KEY_IS("host_path")) rc = t2__get_string(v, path, &cfg->checkpoint_storage.host_path);
        else if (KEY_IS("storage_path")) rc = t2__get_string(v, path, &cfg->checkpoint_storage.storage_path);
        else if (KEY_IS("save_experiment_best")) rc = t2__get_int(v, path, 0, &cfg->checkpoint_storage.save_experiment_best);
        else if (KEY_IS("save_trial_best")) rc = t2__get_int(v, path, 0, &cfg->checkpoint_storage.save_trial_best);
        else if (KEY_IS("save_trial_latest")) rc = t2__get_int(v, path, 0, &cfg->checkpoint_storage.save_trial_latest);
        else if (KEY_IS("compression")) {
            static const char *const names[] = {"none", "gzip", "zstd", NULL};
            int found = -1;
            for (int i = 0; names[i] && v->kind == T2__Y_SCALAR; i++)
                if (!strcmp(v->text, names[i])) found = i;
            rc = T2_OK;
            if (found < 0) {
                char buf[128], hint[96];
                rc = t2__cfg_err(&v->mark, path, "must be none, gzip or zstd, got %s%s", t2__ydesc(v, buf, sizeof buf),
                                 t2__cfg_value_hint(v, names, hint, sizeof hint));
            } else cfg->checkpoint_storage.compression = found;
        } else if (KEY_IS("propagation") || KEY_IS("container_path"))
            rc = t2__cfg_ignored(cfg, &n->key_marks[k], path, "there are no containers");
        else if (KEY_IS("checkpoint_path") || KEY_IS("tensorboard_path"))
            rc = t2__cfg_ignored(cfg, &n->key_marks[k], path, "checkpoints go under host_path[/storage_path]");
        else rc = t2__cfg_unknown(cfg, &n->key_marks[k], path, t2__cfg_checkpoint_storage_keys);
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return t2__cfg_collect(cfg, storage_paths(cfg, n));
}

/* ---------- optimizations ---------- */

const char *const t2__cfg_clipping_keys[] = {"type", "max", NULL};
const char *const t2__cfg_optimizations_keys[] = {
    "gradient_clipping", "aggregation_frequency", "average_aggregated_gradients", "average_training_metrics",
    "mixed_precision", "gradient_compression", "tensor_fusion_threshold", "tensor_fusion_cycle_time",
    "auto_tune_tensor_fusion", "grad_updates_size_file", NULL};

static int gradient_clipping(t2__config *cfg, const t2__ynode *v, const t2__ymark *kmark)
{
    static const char *const kinds[] = {"norm", "value", NULL};
    const char *path = "optimizations.gradient_clipping";
    char sub[T2__PATH_MAX];
    int rc, kind = -1, have_type = 0, have_max = 0;
    if (t2__ynull(v)) return T2_OK;
    if ((rc = t2__want_map(v, path))) return rc;
    for (size_t k = 0; k < v->n; k++) {
        const char *key = v->keys[k];
        t2__path_join(sub, sizeof sub, path, key);
        if (KEY_IS("type")) {
            rc = t2__get_enum(v->items[k], sub, kinds, &kind);
            have_type = !t2__ynull(v->items[k]);
        } else if (KEY_IS("max")) {
            double d = 0;
            rc = t2__get_number(v->items[k], sub, &d);
            if (!rc && !(d > 0))
                rc = t2__cfg_err(&v->items[k]->mark, sub, "expected a positive number, got %s", v->items[k]->text);
            cfg->optimizations.clip_max = d;
            have_max = !t2__ynull(v->items[k]);
        } else {
            rc = t2__cfg_unknown(cfg, &v->key_marks[k], sub, t2__cfg_clipping_keys);
        }
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    if (!have_type) return t2__cfg_missing(kmark, path, "type");
    if (!have_max) return t2__cfg_missing(kmark, path, "max");
    if (kind < 0 || !(cfg->optimizations.clip_max > 0)) return T2_OK; /* already reported */
    cfg->optimizations.clip = kind == 0 ? T2__CLIP_NORM : T2__CLIP_VALUE;
    return T2_OK;
}

int t2__cfg_optimizations(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    char path[T2__PATH_MAX];
    int rc;
    T2__UNUSED(kmark);
    if ((rc = t2__want_map(n, "optimizations"))) return rc;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        const t2__ynode *v = n->items[k];
        const t2__ymark *km = &n->key_marks[k];
        t2__path_join(path, sizeof path, "optimizations", key);
        if (KEY_IS("gradient_clipping")) {
            rc = gradient_clipping(cfg, v, km);
        } else if (KEY_IS("aggregation_frequency")) {
            /* Read, checked, and then ignored unless it is what t2exp does: every batch is one
             * optimizer step (the docs promised accumulation that nothing did; probe_M). */
            rc = t2__get_int(v, path, 1, &cfg->optimizations.aggregation_frequency);
            if (!rc && cfg->optimizations.aggregation_frequency != 1)
                rc = t2__cfg_ignored(cfg, km, path, "t2exp steps the optimizer every batch (no gradient aggregation)");
        } else if (KEY_IS("average_aggregated_gradients")) {
            rc = t2__get_bool(v, path, &cfg->optimizations.average_aggregated_gradients);
            if (!rc && !cfg->optimizations.average_aggregated_gradients)
                rc = t2__cfg_ignored(cfg, km, path, "t2exp aggregates no gradients over batches");
        } else if (KEY_IS("average_training_metrics")) {
            rc = t2__get_bool(v, path, &cfg->optimizations.average_training_metrics);
            if (!rc && !cfg->optimizations.average_training_metrics)
                rc = t2__cfg_ignored(cfg, km, path, "training metrics are always averaged across ranks");
        } else if (KEY_IS("mixed_precision")) {
            rc = T2_OK;
            if (!t2__ynull(v) && !(v->kind == T2__Y_SCALAR && strcmp(v->text, "O0") == 0))
                rc = t2__cfg_ignored(cfg, km, path, "t2exp always trains in float32 (O0)");
        } else if (KEY_IS("gradient_compression") || KEY_IS("tensor_fusion_threshold") ||
                   KEY_IS("tensor_fusion_cycle_time") || KEY_IS("auto_tune_tensor_fusion") ||
                   KEY_IS("grad_updates_size_file")) {
            rc = t2__cfg_ignored(cfg, km, path, "gradients are reduced in one flat buffer with no fusion tuning");
        } else {
            rc = t2__cfg_unknown(cfg, km, path, t2__cfg_optimizations_keys);
        }
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}

/* ---------- reproducibility ---------- */

const char *const t2__cfg_reproducibility_keys[] = {"experiment_seed", NULL};

int t2__cfg_reproducibility(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark)
{
    char path[T2__PATH_MAX];
    int rc;
    T2__UNUSED(kmark);
    if ((rc = t2__want_map(n, "reproducibility"))) return rc;
    for (size_t k = 0; k < n->n; k++) {
        const char *key = n->keys[k];
        t2__path_join(path, sizeof path, "reproducibility", key);
        if (KEY_IS("experiment_seed")) {
            int64_t seed = -1;
            rc = t2__get_int(n->items[k], path, 0, &seed);
            if (!rc && seed >= 0) {
                cfg->experiment_seed = (uint64_t)seed;
                cfg->experiment_seed_set = 1;
            }
        } else {
            rc = t2__cfg_unknown(cfg, &n->key_marks[k], path, t2__cfg_reproducibility_keys);
        }
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    return T2_OK;
}
