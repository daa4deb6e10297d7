/* resume_overrides.c — `t2exp resume --config`: which changes a resume can honour, and keeping
 * them for the resumes after it.
 *
 * A resume continues a search from what the store saved: each trial's hyperparameters, the
 * searcher's snapshot, the pruner's replay of the validations so far, the checkpoint directory, the
 * experiment's seed. A --config that would change what those were built from cannot take effect,
 * and would once have been ignored without a word (searcher.max_trials=6 over a snapshot of 4
 * trials still ran 4); it is refused now, naming the key and why, before anything is written. What
 * is read afresh by every run (resources, restarts, checkpoint policy, what the runners read) is
 * honoured, and stored after the earlier overrides so that the next resume applies it again. */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "internal.h"

/* why == NULL: a resume honours the key. Matched by the first entry whose key is the path or a
 * map above it, so the specific ones come first. A key no entry matches is refused: a new key is
 * refused until someone decides it can be honoured. */
typedef struct resume_rule {
    const char *key;
    const char *why;
} resume_rule;

static const char SEARCH_STATE[] = "the search continues from its saved state (the searcher's snapshot), which was "
                                   "built with the stored value";

static const resume_rule rules[] = {
    {"searcher.max_concurrent_trials", NULL},
    {"searcher.max_length", NULL}, /* unless max_length_why says otherwise */
    {"searcher.max_trials", "the searcher planned and drew its trials at create and continues from its saved "
                            "state (create a new experiment for a larger search)"},
    {"searcher", SEARCH_STATE},
    {"hyperparameters", "each trial's hyperparameters were drawn at create and are stored with it, and new trials "
                        "come from the searcher's saved state"},
    {"reproducibility", "the experiment's seed was fixed at create (t2exp describe shows it)"},
    {"records_per_epoch", "the lengths trained so far are counted in epochs of the stored length"},
    {"checkpoint_storage.host_path", "the checkpoint directory was decided at create (checkpoint_dir in t2exp "
                                     "describe) and holds the checkpoints the trials continue from"},
    {"checkpoint_storage.storage_path", "the checkpoint directory was decided at create (checkpoint_dir in t2exp "
                                        "describe) and holds the checkpoints the trials continue from"},
    {"checkpoint_storage", NULL},
    {"name", "it was recorded with the experiment at create"},
    {"description", "it was recorded with the experiment at create"},
    {"labels", "they were recorded with the experiment at create"},
    {"resources", NULL},
    {"max_restarts", NULL},
    {"min_validation_period", NULL},
    {"min_checkpoint_period", NULL},
    {"perform_initial_validation", NULL},
    {"scheduling_unit", NULL},
    {"checkpoint_policy", NULL},
    {"optimizations", NULL},
    {"data", NULL},
    {"environment", NULL},
};

/* Whether path is key (its first n bytes) or lies under it (key "a.b": "a.b", "a.b.c", not "a.bc"). */
static int under(const char *path, const char *key, size_t n)
{
    return strncmp(path, key, n) == 0 && (path[n] == '\0' || path[n] == '.');
}

/* searcher.max_length: the searchers that read it afresh at each decision (single, grid, random,
 * tpe: a trial is closed at its validation at max_length, and the controller gives each unfinished
 * trial without another op the new length) honour it, in the same unit. */
static const char *max_length_why(const t2__config *old, const t2__config *cfg)
{
    if (old->searcher.max_length.unit != cfg->searcher.max_length.unit)
        return "its unit cannot change: the lengths trained and the searcher's pending ones are counted in the "
               "stored unit";
    switch (cfg->searcher.name) {
    case T2__SEARCH_SINGLE:
    case T2__SEARCH_GRID:
    case T2__SEARCH_RANDOM:
    case T2__SEARCH_TPE:
        return cfg->searcher.pruner.on ? "searcher.pruner's rungs and its replay of the validations so far are "
                                         "lengths counted from it"
                                       : NULL;
    case T2__SEARCH_ADAPTIVE_ASHA:
        return "adaptive_asha's rungs are lengths derived from it, and its saved state ranks trials at them";
    case T2__SEARCH_PBT:
        return "pbt's rounds are lengths derived from it (num_rounds x length_per_round)";
    default:
        return SEARCH_STATE;
    }
}

/* NULL when a resume honours a change at path, else why not. */
static const char *refusal(const char *path, const t2__config *old, const t2__config *cfg)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (!under(path, rules[i].key, strlen(rules[i].key))) continue;
        if (!strcmp(rules[i].key, "searcher.max_length")) return max_length_why(old, cfg);
        return rules[i].why;
    }
    return "it is not among the keys a resume can change (config-reference.md, Overrides on resume)";
}

/* The resume's --config whose key is path, above it or below it (the one that made the change),
 * or NULL. */
static const char *override_of(const char *path, const char *const *extra, int nextra)
{
    for (int i = nextra - 1; i >= 0; i--) { /* the last one of a key wins */
        const char *eq = strchr(extra[i], '=');
        size_t n = eq ? (size_t)(eq - extra[i]) : strlen(extra[i]), plen = strlen(path);
        if (under(path, extra[i], n) || (plen < n && under(extra[i], path, plen))) return extra[i];
    }
    return NULL;
}

static int refuse(const char *path, const char *why, const char *const *extra, int nextra)
{
    const char *ovr = override_of(path, extra, nextra);
    if (ovr)
        return t2_seterr(T2_EINVAL, "--config %s: %s cannot change on resume: %s; nothing was changed", ovr, path, why);
    return t2_seterr(T2_EINVAL, "--config: %s cannot change on resume: %s; nothing was changed", path, why);
}

/* Each leaf of a that b lacks or holds otherwise, checked. */
static int check_leaves(const t2__val *a, const t2__val *b, const t2__config *old, const t2__config *cfg,
                        const char *const *extra, int nextra)
{
    for (size_t i = 0; i < a->n; i++) {
        const t2__val *other = t2__val_map_get(b, a->keys[i]);
        if (other && t2__val_equal(a->items[i], other)) continue;
        const char *why = refusal(a->keys[i], old, cfg);
        if (why) return refuse(a->keys[i], why, extra, nextra);
    }
    return T2_OK;
}

int t2__ctl_check_resume_overrides(const t2__config *old, const t2__config *cfg, const char *const *extra, int nextra)
{
    if (!old->tree || !cfg->tree || old->tree->kind != T2__VAL_MAP || cfg->tree->kind != T2__VAL_MAP)
        return t2_seterr(T2_EFORMAT, "resume: the stored config is not a map");
    t2__val *was = NULL, *now = NULL;
    int rc = t2__val_flatten(old->tree, &was);
    if (!rc) rc = t2__val_flatten(cfg->tree, &now);
    /* Both ways: a key changed or added, and a key an override took away (another unit of a
     * length replaces the stored one). */
    if (!rc) rc = check_leaves(now, was, old, cfg, extra, nextra);
    if (!rc) rc = check_leaves(was, now, old, cfg, extra, nextra);
    t2__val_free(was);
    t2__val_free(now);
    return rc;
}

int t2__ctl_store_overrides(t2__ctl *c, const char *const *ovr, int novr)
{
    t2__val *list = t2__val_list();
    char *json = NULL;
    size_t len;
    int rc = list ? T2_OK : t2_seterr(T2_ENOMEM, "resume: out of memory");
    for (int i = 0; !rc && i < novr; i++) {
        t2__val *s = t2__val_string(ovr[i]);
        rc = s ? t2__val_list_append(list, s) : t2_seterr(T2_ENOMEM, "resume: out of memory");
    }
    if (!rc) rc = t2__val_to_json(list, &json, &len);
    if (!rc) rc = t2__store_set_experiment_overrides(c->st, c->exp_id, json);
    free(json);
    t2__val_free(list);
    return rc;
}
