/* config.c — t2__config_load: read the file, apply --config overrides, validate the top level. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "config_internal.h"
#include "t2exp/error.h"

#define KEY_IS(s) (strcmp(key, (s)) == 0)
#define CONFIG_MAX_BYTES (16u << 20) /* a config is a few KB; anything this big is the wrong file */
#define OVERRIDE_MAX_DEPTH 32

const char *t2__unit_name(t2__unit u)
{
    return u == T2__UNIT_BATCHES ? "batches" : u == T2__UNIT_RECORDS ? "records" : "epochs";
}

const char *t2__searcher_name(t2__searcher_kind k)
{
    switch (k) {
    case T2__SEARCH_SINGLE: return "single";
    case T2__SEARCH_GRID: return "grid";
    case T2__SEARCH_RANDOM: return "random";
    case T2__SEARCH_ADAPTIVE_ASHA: return "adaptive_asha";
    case T2__SEARCH_TPE: return "tpe";
    case T2__SEARCH_PBT: return "pbt";
    case T2__SEARCH_CUSTOM: return "custom";
    }
    return "?";
}

const char *t2__asha_mode_name(t2__asha_mode m)
{
    return m == T2__ASHA_AGGRESSIVE ? "aggressive" : m == T2__ASHA_STANDARD ? "standard" : "conservative";
}

void t2__config_free(t2__config *cfg)
{
    if (!cfg) return;
    free(cfg->source);
    free(cfg->yaml_text);
    t2__val_free(cfg->tree);
    free(cfg->name);
    free(cfg->description);
    for (size_t k = 0; k < cfg->nlabels; k++) free(cfg->labels[k]);
    free(cfg->labels);
    t2__val_free(cfg->data);
    t2__hparam_free(cfg->hparams);
    free(cfg->searcher.metric);
    free(cfg->searcher.bracket_rungs);
    free(cfg->searcher.pbt.perturb_factors);
    t2__val_free(cfg->searcher.points);
    free(cfg->searcher.source_checkpoint);
    free(cfg->searcher.library);
    t2__val_free(cfg->searcher.options);
    free(cfg->resources.hostfile);
    free(cfg->resources.slots_per_trial_at);
    free(cfg->resources.controller_address);
    free(cfg->checkpoint_storage.host_path);
    free(cfg->checkpoint_storage.storage_path);
    for (size_t k = 0; k < cfg->environment.nvars; k++) free(cfg->environment.vars[k]);
    free(cfg->environment.vars);
    for (size_t k = 0; k < cfg->nerrors; k++) free(cfg->errors[k]);
    free(cfg->errors);
    for (size_t k = 0; k < cfg->nwarnings; k++) free(cfg->warnings[k]);
    free(cfg->warnings);
    free(cfg);
}

const char *const *t2__config_warnings(const t2__config *cfg, size_t *n)
{
    if (n) *n = cfg ? cfg->nwarnings : 0;
    return cfg ? (const char *const *)cfg->warnings : NULL;
}

/* Set once by the CLI before any load (see config.h), read by every load after. */
static int lenient_default;
/* Set around t2__config_load_stored's load: the text's own unknown keys are warnings. */
static _Thread_local int stored_text, stored_overrides;

void t2__config_set_lenient(int on) { lenient_default = on != 0; }

/* The latest failed load's problems, per thread like t2_errmsg's text. */
static _Thread_local char **last_errors, **last_warnings;
static _Thread_local size_t nlast_errors, nlast_more, nlast_warnings;

/* The failed load's errors, and its warnings: a file with an error had its "accepted but
 * ignored" notes shown only once the error was fixed (probe_K D6: every one of 198 rejected real
 * configs had one). */
static void keep_errors(t2__config *cfg)
{
    for (size_t k = 0; k < nlast_errors; k++) free(last_errors[k]);
    free(last_errors);
    for (size_t k = 0; k < nlast_warnings; k++) free(last_warnings[k]);
    free(last_warnings);
    last_errors = last_warnings = NULL;
    nlast_errors = nlast_more = nlast_warnings = 0;
    if (!cfg) return;
    last_errors = cfg->errors;
    nlast_errors = cfg->nerrors;
    nlast_more = cfg->nerrors_more;
    last_warnings = cfg->warnings;
    nlast_warnings = cfg->nwarnings;
    cfg->errors = cfg->warnings = NULL;
    cfg->nerrors = cfg->nerrors_more = cfg->nwarnings = 0;
}

const char *const *t2__config_error_warnings(size_t *n)
{
    if (n) *n = nlast_warnings;
    return (const char *const *)last_warnings;
}

const char *const *t2__config_errors(size_t *n, size_t *more)
{
    if (n) *n = nlast_errors;
    if (more) *more = nlast_more;
    return (const char *const *)last_errors;
}

static void set_defaults(t2__config *cfg)
{
    cfg->searcher.smaller_is_better = 1;
    cfg->searcher.mode = T2__ASHA_STANDARD;
    cfg->searcher.divisor = 4;
    cfg->searcher.max_rungs = 5;
    cfg->searcher.max_concurrent_trials = 16; /* Determined's default; ASHA splits it between brackets */
    cfg->searcher.stop_once = 1;              /* current Determined always stops once */
    cfg->searcher.tpe.n_startup_trials = 10;  /* Optuna's TPESampler defaults */
    cfg->searcher.tpe.n_ei_candidates = 24;
    cfg->searcher.tpe.gamma = 0.1;
    cfg->searcher.tpe.prior_weight = 1.0;
    cfg->searcher.pbt.resample_probability = 0.25; /* Ray Tune's PopulationBasedTraining defaults */
    cfg->searcher.pbt.quantile_fraction = 0.25;
    cfg->scheduling_unit = 100;
    cfg->checkpoint_policy = T2__CKPT_BEST;
    cfg->resources.slots_per_trial = 1;
    cfg->checkpoint_storage.save_experiment_best = 0;
    cfg->checkpoint_storage.save_trial_best = 1;
    cfg->checkpoint_storage.save_trial_latest = 1;
    cfg->max_restarts = 5;
    cfg->optimizations.aggregation_frequency = 1;
    cfg->optimizations.average_aggregated_gradients = 1;
    cfg->optimizations.average_training_metrics = 1;
}

/* The experiment's default name: the file name without directory and extension. */
static char *default_name(const char *source)
{
    const char *base = strrchr(source, '/');
    base = base ? base + 1 : source;
    const char *dot = strrchr(base, '.');
    size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, base, len);
        s[len] = '\0';
    }
    return s;
}

static int labels(t2__config *cfg, const t2__ynode *v)
{
    char path[T2__PATH_MAX], buf[128];
    if (t2__ynull(v)) return T2_OK;
    if (v->kind != T2__Y_SEQ)
        return t2__cfg_err(&v->mark, "labels", "expected a list of strings, got %s", t2__ydesc(v, buf, sizeof buf));
    for (size_t k = 0; k < v->n; k++) {
        snprintf(path, sizeof path, "labels.%zu", k);
        if (v->items[k]->kind != T2__Y_SCALAR || t2__ynull(v->items[k]))
            return t2__cfg_err(&v->items[k]->mark, path, "expected a string, got %s",
                               t2__ydesc(v->items[k], buf, sizeof buf));
    }
    char **l = calloc(v->n ? v->n : 1, sizeof *l);
    if (!l) return t2_seterr(T2_ENOMEM, "config: out of memory");
    for (size_t k = 0; k < cfg->nlabels; k++) free(cfg->labels[k]);
    free(cfg->labels);
    cfg->labels = l;
    cfg->nlabels = 0;
    for (size_t k = 0; k < v->n; k++) {
        if (!(l[k] = strdup(v->items[k]->text))) return t2_seterr(T2_ENOMEM, "config: out of memory");
        cfg->nlabels = k + 1;
    }
    return T2_OK;
}

static int data_section(t2__config *cfg, const t2__ynode *v)
{
    if (t2__ynull(v)) return T2_OK;
    int rc = t2__want_map(v, "data");
    if (rc) return rc;
    t2__val *d = NULL;
    if ((rc = t2__ynode_to_val(v, &d))) return rc;
    t2__val_free(cfg->data);
    cfg->data = d;
    return T2_OK;
}

/* Determined keys that make no sense without its cluster: accepted so that a Determined config
 * loads, reported once so nobody believes they took effect. */
static const char *ignored_reason(const char *key)
{
    if (KEY_IS("entrypoint")) return "the trial object named on the command line is run";
    if (KEY_IS("bind_mounts")) return "trials run as processes on this machine, not in containers";
    if (KEY_IS("workspace") || KEY_IS("project")) return "t2exp has no workspaces or projects";
    if (KEY_IS("pbs") || KEY_IS("slurm") || KEY_IS("preemption_timeout"))
        return "t2exp has no cluster scheduler (a hostfile, or the Slurm job it runs in, is the slot pool)";
    if (KEY_IS("profiling") || KEY_IS("debug")) return "not implemented by t2exp";
    if (KEY_IS("tensorboard_storage") || KEY_IS("data_layer") || KEY_IS("integrations") || KEY_IS("log_policies") ||
        KEY_IS("retention_policy") || KEY_IS("security") || KEY_IS("internal"))
        return "not implemented by t2exp";
    return NULL;
}

/* Every top-level key, for "did you mean": the ones read here and the accepted-but-ignored ones. */
const char *const t2__cfg_top_keys[] = {
    "name", "description", "labels", "data", "hyperparameters", "searcher", "records_per_epoch",
    "min_validation_period", "min_checkpoint_period", "perform_initial_validation", "scheduling_unit",
    "checkpoint_policy", "resources", "checkpoint_storage", "max_restarts", "reproducibility", "optimizations",
    "environment", "entrypoint", "bind_mounts", "workspace", "project", "pbs", "slurm", "preemption_timeout",
    "profiling", "debug", "tensorboard_storage", "data_layer", "integrations", "log_policies", "retention_policy",
    "security", "internal", NULL};

/* A length in epochs where records_per_epoch fixes an epoch's batches is held to the T2__MAX_LENGTH
 * batches that the batches form is (10^6 epochs of 10^12 records at a batch of 1 were 10^18
 * batches: a run that never ends). The runner trains n x ceil(records_per_epoch / global_batch_size)
 * batches (runner.c, serve); the most come with the smallest batch the search can give. A length
 * in records needs no check (ceil(records / batch) <= records <= T2__MAX_LENGTH), nor one in epochs
 * of the training loader's passes (unknown until a trial builds its loader). what starts the
 * message ("" or "num_rounds x length_per_round, "); path and at name and place it. */
static int epochs_cap(const t2__config *cfg, const t2__length *len, const t2__ynode *root, const char *path,
                      const t2__ynode *at, const char *what)
{
    int64_t rpe = cfg->records_per_epoch, gb = t2__cfg_min_batch(cfg);
    if (!at || len->unit != T2__UNIT_EPOCHS || len->n < 1 || rpe < 1 || gb < 1) return T2_OK;
    int64_t bpe = rpe / gb + (rpe % gb != 0);
    if (len->n <= T2__MAX_LENGTH / bpe) return T2_OK;
    const t2__hparam *h = t2__hparam_find(cfg->hparams, "global_batch_size");
    const t2__ymark *m = t2__cfg_blame_path(&at->mark, root, "records_per_epoch");
    m = t2__cfg_blame_path(m, root, "hyperparameters.global_batch_size");
    char batches[64];
    if (len->n > INT64_MAX / bpe) snprintf(batches, sizeof batches, "more than %lld", (long long)INT64_MAX);
    else snprintf(batches, sizeof batches, "%lld", (long long)(len->n * bpe));
    return t2__cfg_err(m, path,
                       "%s%lld epochs are %s batches (records_per_epoch %lld at global_batch_size %lld%s: %lld "
                       "batches an epoch), more than the %lld batches a length may be",
                       what, (long long)len->n, batches, (long long)rpe, (long long)gb,
                       h && h->kind != T2__HP_CONST ? ", the smallest the search gives" : "", (long long)bpe,
                       (long long)T2__MAX_LENGTH);
}

/* epochs_cap for searcher.max_length (wherever it came from: max_length, time_metric with max_time,
 * pbt's rounds) and the two periods. */
static int length_caps(t2__config *cfg, const t2__ynode *root)
{
    const t2__ynode *ml = t2__ypath(root, "searcher.max_length");
    int rc;
    if (cfg->searcher.name == T2__SEARCH_PBT)
        rc = epochs_cap(cfg, &cfg->searcher.max_length, root, "searcher.length_per_round.epochs",
                        t2__ypath(root, "searcher.length_per_round.epochs"), "num_rounds x length_per_round, ");
    else if (ml && !t2__ynull(ml))
        rc = epochs_cap(cfg, &cfg->searcher.max_length, root, "searcher.max_length.epochs",
                        t2__ypath(root, "searcher.max_length.epochs"), "");
    else
        rc = epochs_cap(cfg, &cfg->searcher.max_length, root, "searcher.max_time", t2__ypath(root, "searcher.max_time"),
                        "");
    if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    if ((rc = t2__cfg_collect(cfg, epochs_cap(cfg, &cfg->min_validation_period, root, "min_validation_period.epochs",
                                              t2__ypath(root, "min_validation_period.epochs"), ""))))
        return rc;
    return t2__cfg_collect(cfg, epochs_cap(cfg, &cfg->min_checkpoint_period, root, "min_checkpoint_period.epochs",
                                           t2__ypath(root, "min_checkpoint_period.epochs"), ""));
}

/* Keys that only Determined's other config files have: a master's (master.yaml), an agent's
 * (agent.yaml), the Helm chart's values.yaml, a notebook's or command's task config, a config
 * policy. A user who passed one of those got a list of unknown keys and then "searcher: missing
 * required key" (probe_K), never what the file is. */
static const struct {
    const char *kind;
    const char *const keys[16];
} OTHER_FILES[] = {
    {"master configuration (master.yaml)",
     {"port", "db", "resource_manager", "resource_pools", "task_container_defaults", "scheduler", "telemetry",
      "observability", "webhooks", "cache", "root", "feature_switches", "enable_cors", "cluster_name",
      "notebook_timeout", "log_retention_days"}},
    {"agent configuration (agent.yaml)",
     {"master_host", "master_port", "agent_id", "container_master_host", "container_master_port", "resource_pool",
      "slot_type", "visible_gpus", "artificial_slots", "fluent", "container_runtime", "hooks"}},
    {"Helm chart's values (values.yaml)",
     {"masterPort", "detVersion", "useNodePortForMaster", "imageRegistry", "enterpriseEdition", "checkpointStorage",
      "maxSlotsPerPod", "resourcePools", "createNonNamespacedObjects", "defaultPassword", "masterCpuRequest"}},
    {"task configuration (a notebook, command or shell)", {"idle_timeout", "notebook_idle_type", "work_dir"}},
    {"config policy", {"invariant_config", "constraints"}},
};

/* How many of root's keys are keys of OTHER_FILES[f]; seen (cap bytes) gets the first 4, ", " between. */
static int other_keys(const t2__ynode *root, size_t f, char *seen, size_t cap)
{
    size_t len = 0;
    int n = 0;
    seen[0] = '\0';
    for (size_t k = 0; k < root->n; k++)
        for (size_t i = 0; i < 16 && OTHER_FILES[f].keys[i]; i++)
            if (!strcmp(root->keys[k], OTHER_FILES[f].keys[i]) && n++ < 4 && len < cap)
                len += (size_t)snprintf(seen + len, cap - len, "%s%s", n > 1 ? ", " : "", root->keys[k]);
    return n;
}

/* "t2exp runs experiments" for a file with no searcher or hyperparameters whose keys name one of
 * OTHER_FILES; T2_OK when it may be an experiment config (its own errors then say what is wrong):
 * also when a key is a near miss of those two (`searchr:`), which is an experiment config with a
 * typo whatever else it holds (review: a stray `scheduler:` hid the did-you-means). */
static int other_file(const t2__ynode *root, const t2__ymark *origin)
{
    static const char *const experiment_keys[] = {"searcher", "hyperparameters", NULL};
    if (t2__ymap_get(root, "searcher", NULL) || t2__ymap_get(root, "hyperparameters", NULL)) return T2_OK;
    for (size_t k = 0; k < root->n; k++)
        if (t2__cfg_closest(root->keys[k], experiment_keys)) return T2_OK;
    /* The kind with the most of its keys here: a Helm values.yaml has a master's `db:` too. */
    size_t best = 0;
    int most = 0;
    char seen[200] = "", now[200];
    for (size_t f = 0; f < sizeof OTHER_FILES / sizeof OTHER_FILES[0]; f++) {
        int n = other_keys(root, f, now, sizeof now);
        if (n > most) most = n, best = f, memcpy(seen, now, sizeof seen);
    }
    if (!most) return T2_OK;
    return t2__cfg_err(origin, "",
                       "this looks like Determined's %s, with keys %s%s, not an experiment config: t2exp takes an "
                       "experiment's config (hyperparameters, searcher; docs/config-reference.md) and has no master "
                       "or agent to configure",
                       OTHER_FILES[best].kind, seen, most > 4 ? ", ..." : "");
}

static int top_level(t2__config *cfg, const t2__ynode *root)
{
    static const t2__ymark origin_template = {NULL, 1, 1};
    t2__ymark origin = origin_template;
    const t2__ynode *hp = NULL;
    const t2__ymark *hp_mark = NULL;
    const t2__ynode *searcher = NULL;
    int rc, have_searcher = 0, hp_errors = 0;
    origin.src = cfg->source;
    if (root->kind != T2__Y_MAP) {
        char buf[128];
        if (t2__ynull(root)) return t2__cfg_err(&origin, "", "the config is empty");
        return t2__cfg_err(&root->mark, "", "expected a map of config keys at the top level, got %s",
                           t2__ydesc(root, buf, sizeof buf));
    }
    if ((rc = other_file(root, &origin))) return rc;
    for (size_t k = 0; k < root->n; k++) {
        const char *key = root->keys[k];
        const t2__ynode *v = root->items[k];
        const t2__ymark *km = &root->key_marks[k];
        const char *why;
        size_t nerr_before = cfg->nerrors + cfg->nerrors_more;
        if (KEY_IS("name")) rc = t2__get_string(v, key, &cfg->name);
        else if (KEY_IS("description")) rc = t2__get_string(v, key, &cfg->description);
        else if (KEY_IS("labels")) rc = labels(cfg, v);
        else if (KEY_IS("data")) rc = data_section(cfg, v);
        else if (KEY_IS("hyperparameters")) {
            hp = t2__ynull(v) ? NULL : v;
            hp_mark = km;
            rc = t2__cfg_hparams_parse(cfg, v);
        } else if (KEY_IS("searcher")) {
            if (t2__ynull(v)) rc = t2__cfg_err(&v->mark, key, "expected a map, got null");
            else rc = t2__cfg_searcher(cfg, v, km);
            have_searcher = 1;
            searcher = v;
        } else if (KEY_IS("records_per_epoch")) {
            rc = t2__get_int(v, key, 0, &cfg->records_per_epoch);
            if (!rc && cfg->records_per_epoch > T2__MAX_LENGTH)
                rc = t2__cfg_err(&v->mark, key, "expected at most %lld records, got %lld", (long long)T2__MAX_LENGTH,
                                 (long long)cfg->records_per_epoch);
        } else if (KEY_IS("min_validation_period")) rc = t2__get_length(v, key, 1, &cfg->min_validation_period);
        else if (KEY_IS("min_checkpoint_period")) rc = t2__get_length(v, key, 1, &cfg->min_checkpoint_period);
        else if (KEY_IS("perform_initial_validation")) rc = t2__get_bool(v, key, &cfg->perform_initial_validation);
        else if (KEY_IS("scheduling_unit")) rc = t2__get_int(v, key, 1, &cfg->scheduling_unit);
        else if (KEY_IS("checkpoint_policy")) {
            static const char *const policies[] = {"best", "all", "none", NULL};
            int p = (int)cfg->checkpoint_policy;
            rc = t2__get_enum(v, key, policies, &p);
            cfg->checkpoint_policy = (t2__ckpt_policy)p;
        } else if (KEY_IS("resources")) rc = t2__ynull(v) ? T2_OK : t2__cfg_resources(cfg, v, km);
        else if (KEY_IS("checkpoint_storage")) rc = t2__ynull(v) ? T2_OK : t2__cfg_checkpoint_storage(cfg, v, km);
        else if (KEY_IS("max_restarts")) rc = t2__get_int(v, key, 0, &cfg->max_restarts);
        else if (KEY_IS("reproducibility")) rc = t2__ynull(v) ? T2_OK : t2__cfg_reproducibility(cfg, v, km);
        else if (KEY_IS("optimizations")) rc = t2__ynull(v) ? T2_OK : t2__cfg_optimizations(cfg, v, km);
        else if (KEY_IS("environment")) rc = t2__ynull(v) ? T2_OK : t2__cfg_environment(cfg, v, km);
        else if ((why = ignored_reason(key))) rc = t2__cfg_ignored(cfg, km, key, why);
        else rc = t2__cfg_unknown(cfg, km, key, t2__cfg_top_keys);
        if (KEY_IS("hyperparameters")) hp_errors = rc == T2_EINVAL || cfg->nerrors + cfg->nerrors_more > nerr_before;
        /* Every problem is reported, not only the first: the load goes on with the next key. */
        if ((rc = t2__cfg_collect(cfg, rc))) return rc;
    }
    if (!have_searcher && (rc = t2__cfg_collect(cfg, t2__cfg_missing(&origin, "", "searcher")))) return rc;
    if ((rc = t2__cfg_collect(cfg, t2__cfg_pruner_check(cfg, searcher)))) return rc;
    if (!cfg->hparams && (rc = t2__cfg_hparams_parse(cfg, NULL))) return rc;
    /* A space that failed to parse would only add errors that follow from the first ones. */
    if (hp_errors) return T2_OK;
    if ((rc = t2__cfg_collect(cfg, t2__cfg_hparams_check(cfg, hp, hp_mark ? hp_mark : &origin, root)))) return rc;
    if ((rc = length_caps(cfg, root))) return rc;
    return t2__cfg_collect(cfg, t2__cfg_points(cfg, searcher)); /* against the space, wherever it stands */
}

/* ---------- overrides ---------- */

static int is_length_unit(const char *k)
{
    return !strcmp(k, "batches") || !strcmp(k, "records") || !strcmp(k, "epochs");
}

/* Whether path[0..n) names a key whose value is a length (t2__get_length's callers). */
static int is_length_key(const char *path, size_t n)
{
    static const char *const keys[] = {"searcher.max_length",          "min_validation_period",
                                       "min_checkpoint_period",        "searcher.length_per_round",
                                       "searcher.pruner.min_resource", "searcher.pruner.max_resource",
                                       "searcher.pruner.warmup",       NULL};
    for (size_t k = 0; keys[k]; k++)
        if (strlen(keys[k]) == n && !strncmp(path, keys[k], n)) return 1;
    return 0;
}

/* A length holds exactly one unit, so "--config searcher.max_length.batches=60" on a stored
 * {epochs: 1} means "60 batches instead", as in Determined, not a second unit beside the first
 * (which the validator would refuse). When map is such a length: another unit replaces its entry
 * (taking value; returns 1), a key that is no unit is refused here, at the override, with the
 * unit it resembles (-1, value freed). Otherwise 0: t2__ymap_set's case. Under hyperparameters a
 * map is the user's own, never a length. src names the override. */
static int replace_length_unit(t2__ynode *map, const char *key, t2__ymark m, t2__ynode *value, int in_hparams,
                               const char *src, const char *path, int pathlen)
{
    if (in_hparams || map->n != 1 || !is_length_unit(map->keys[0]) || !strcmp(map->keys[0], key)) return 0;
    if (!is_length_unit(key)) {
        static const char *const units[] = {"batches", "records", "epochs", NULL};
        const char *near = t2__cfg_closest(key, units);
        t2_seterr(T2_EINVAL, "%s: %.*s: '%s' is not a length unit (expected batches, records or epochs%s%s%s)", src,
                  pathlen, path, key, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        t2__yfree(value);
        return -1;
    }
    char *k = strdup(key);
    if (!k) return 0; /* t2__ymap_set then reports the shortage, or the validator the two units */
    free(map->keys[0]);
    t2__yfree(map->items[0]);
    map->keys[0] = k;
    map->items[0] = value;
    map->key_marks[0] = m;
    return 1; /* one key: below T2__KEYIDX_MIN, so there is no index to update */
}

/* Applies one "a.b.c=VALUE" to the tree. src names the override in messages and must outlive the tree. */
static int apply_override(t2__ynode *root, const char *ov, const char *src)
{
    t2__ymark m = {src, 0, 0};
    const char *eq = strchr(ov, '=');
    char key[T2__PATH_MAX];
    if (!eq || eq == ov)
        return t2_seterr(T2_EINVAL, "%s: expected KEY=VALUE with a dotted key, e.g. searcher.max_trials=8", src);
    if ((size_t)(eq - ov) >= sizeof key) return t2_seterr(T2_EINVAL, "%s: key too long", src);
    memcpy(key, ov, (size_t)(eq - ov));
    key[eq - ov] = '\0';
    t2__ynode *value = NULL;
    int rc = t2__yparse(eq + 1, strlen(eq + 1), src, &value);
    if (rc) {
        /* yparse placed the problem at LINE:COL of the value text alone, which reads like a position
         * in the config file: keep only "--config KEY=VALUE: problem". */
        char msg[1024];
        const char *p = t2_errmsg();
        size_t sl = strlen(src);
        snprintf(msg, sizeof msg, "%s", p);
        if (strncmp(msg, src, sl) == 0) {
            const char *q = msg + sl;
            while (*q == ':' || (*q >= '0' && *q <= '9')) q++;
            if (*q == ' ') t2_seterr(rc, "%s: %s", src, q + 1);
        }
        return rc;
    }
    /* Every node of the value is placed at the override itself: the positions inside a one-line
     * value would only confuse a FILE:LINE:COL reader. */
    t2__ynode *stack[T2__PATH_MAX];
    size_t sp = 0;
    stack[sp++] = value;
    while (sp) {
        t2__ynode *n = stack[--sp];
        n->mark = m;
        for (size_t k = 0; k < n->n; k++) {
            if (n->key_marks) n->key_marks[k] = m;
            if (sp < sizeof stack / sizeof *stack) stack[sp++] = n->items[k];
        }
    }
    t2__ynode *at = root;
    char *seg = key;
    for (int depth = 0;; depth++) {
        char *dot = strchr(seg, '.');
        if (dot) *dot = '\0';
        if (!*seg || depth >= OVERRIDE_MAX_DEPTH) {
            t2__yfree(value);
            return t2_seterr(T2_EINVAL, "%s: bad key (empty segment or more than %d levels)", src, OVERRIDE_MAX_DEPTH);
        }
        if (!dot) {
            /* key's dots are NULs by now; ov has the path up to this segment (the map's). */
            int r = depth > 0 ? replace_length_unit(at, seg, m, value, strcmp(key, "hyperparameters") == 0, src, ov,
                                                    (int)(seg - key - 1))
                              : 0;
            if (r) return r > 0 ? T2_OK : T2_EINVAL;
            return t2__ymap_set(at, seg, m, value);
        }
        t2__ynode *next = t2__ymap_get(at, seg, NULL);
        if (next && t2__ynull(next)) next = NULL; /* `searcher:` left empty: fill it */
        /* A length given as a bare int (`max_length: 250`, batches, as Determined reads it) takes
         * a unit override as a length given as a map does: the unit's value replaces it. Only at a
         * key that is a length: elsewhere (data: is the trial's own) a scalar stays a scalar. */
        if (next && next->kind == T2__Y_SCALAR && next->plain && !strchr(dot + 1, '.') && is_length_unit(dot + 1) &&
            is_length_key(ov, (size_t)(dot - key)))
            next = NULL;
        if (!next) {
            if ((rc = t2__ymap_set(at, seg, m, t2__ymap_new(m)))) {
                t2__yfree(value);
                return rc;
            }
            next = t2__ymap_get(at, seg, NULL);
        } else if (next->kind != T2__Y_MAP) {
            /* key's dots are NULs by now; the original text has the path up to this segment. */
            t2__yfree(value);
            return t2_seterr(T2_EINVAL, "%s: '%.*s' is not a map in the config, so it has no key '%s'", src,
                             (int)(dot - key), ov, dot + 1);
        }
        at = next;
        seg = dot + 1;
    }
}

/* ---------- entry points ---------- */

/* A load with collected errors fails with the first as its message, the list kept for
 * t2__config_errors. */
static int listed(t2__config *cfg)
{
    size_t more = cfg->nerrors - 1 + cfg->nerrors_more;
    if (more) t2_seterr(T2_EINVAL, "%s (and %zu more error%s)", cfg->errors[0], more, more == 1 ? "" : "s");
    else t2_seterr(T2_EINVAL, "%s", cfg->errors[0]);
    keep_errors(cfg);
    return T2_EINVAL;
}

/* t2__yparse_collect's duplicate keys: one error of the file among the others. */
static int collect_dup(void *cfg) { return t2__cfg_collect(cfg, T2_EINVAL); }

static int load(char *text, size_t len, const char *name, const char *const *overrides, int noverrides,
                t2__config **out)
{
    int rc = T2_ENOMEM;
    t2__ynode *root = NULL;
    char **srcs = NULL;
    t2__config *cfg = calloc(1, sizeof *cfg);
    if (!cfg) {
        free(text);
        return t2_seterr(T2_ENOMEM, "config: out of memory");
    }
    cfg->yaml_text = text;
    cfg->lenient = lenient_default;
    cfg->lenient_text = stored_text;
    keep_errors(NULL);
    set_defaults(cfg);
    if (noverrides < 0 || (noverrides > 0 && !overrides)) {
        rc = t2_seterr(T2_EINVAL, "config: bad override list");
        goto fail;
    }
    if (!(cfg->source = strdup(name)) || !(cfg->name = default_name(name)) || !(cfg->data = t2__val_map()))
        goto oom;
    if (memchr(text, '\0', len)) {
        rc = t2_seterr(T2_EFORMAT, "%s: the file contains a NUL byte (not a YAML text file?)", name);
        goto fail;
    }
    if ((rc = t2__yparse_collect(text, len, cfg->source, &root, collect_dup, cfg))) goto fail;
    if (noverrides > 0) {
        /* The override sources are named in messages through ymarks, so they must live as long as the
         * tree: they are kept here and freed at the end of the load. */
        if (!(srcs = calloc((size_t)noverrides, sizeof *srcs))) goto oom;
        if (root->kind != T2__Y_MAP && t2__ynull(root)) {
            t2__ymark m = {cfg->source, 1, 1};
            t2__yfree(root);
            if (!(root = t2__ymap_new(m))) goto oom;
        }
        for (int k = 0; k < noverrides; k++) {
            size_t n = strlen(overrides[k] ? overrides[k] : "") + 16;
            if (!(srcs[k] = malloc(n))) goto oom;
            snprintf(srcs[k], n, "--config %s", overrides[k] ? overrides[k] : "");
            if (!overrides[k]) {
                rc = t2_seterr(T2_EINVAL, "config: override %d is NULL", k);
                goto fail;
            }
            if (root->kind != T2__Y_MAP) break; /* top_level reports the real problem */
            if ((rc = apply_override(root, overrides[k], srcs[k]))) goto fail;
        }
    }
    if ((rc = t2__ynode_to_val(root, &cfg->tree))) goto fail;
    /* The overrides stored with the experiment are part of what it was accepted with (stored_text). */
    cfg->stored_srcs = srcs;
    cfg->nstored_srcs = stored_overrides < noverrides ? stored_overrides : noverrides;
    rc = top_level(cfg, root);
    cfg->stored_srcs = NULL; /* they are freed below */
    cfg->nstored_srcs = 0;
    if (rc) goto fail;
    if (cfg->nerrors) {
        rc = listed(cfg);
        goto fail;
    }
    t2__yfree(root);
    for (int k = 0; srcs && k < noverrides; k++) free(srcs[k]);
    free(srcs);
    *out = cfg;
    return T2_OK;
oom:
    rc = t2_seterr(T2_ENOMEM, "config: out of memory");
fail:
    /* A problem that ends the load early (a YAML syntax error, a bad override, a file that is no
     * experiment config) after duplicate keys were collected: listed after them, not instead. */
    if ((rc == T2_EINVAL || rc == T2_EFORMAT) && cfg->nerrors && !(rc = t2__cfg_collect(cfg, T2_EINVAL)))
        rc = listed(cfg);
    t2__yfree(root);
    for (int k = 0; srcs && k < noverrides; k++) free(srcs[k]);
    free(srcs);
    t2__config_free(cfg);
    return rc;
}

int t2__config_load_string(const char *text, const char *name, const char *const *overrides, int noverrides,
                           t2__config **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "config: NULL out");
    *out = NULL;
    if (!text) return t2_seterr(T2_EINVAL, "config: NULL text");
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy) return t2_seterr(T2_ENOMEM, "config: out of memory");
    memcpy(copy, text, len + 1);
    return load(copy, len, name ? name : "<string>", overrides, noverrides, out);
}

int t2__config_load_stored(const char *text, const char *name, const char *const *overrides, int nstored,
                           int noverrides, t2__config **out)
{
    stored_text = 1;
    stored_overrides = nstored;
    int rc = t2__config_load_string(text, name, overrides, noverrides, out);
    stored_text = stored_overrides = 0;
    return rc;
}

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : "a special file";
}

int t2__config_load(const char *path, const char *const *overrides, int noverrides, t2__config **out)
{
    if (!out) return t2_seterr(T2_EINVAL, "config: NULL out");
    *out = NULL;
    if (!path) return t2_seterr(T2_EINVAL, "config: NULL path");
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; anything
     * but a regular file (a FIFO, a device, a directory) is refused before a byte is read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return t2_seterr(T2_EIO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return t2_seterr(T2_EINVAL, "%s: not a regular file (%s); a config must be a YAML file", path,
                         file_kind(st.st_mode));
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        int e = errno;
        close(fd);
        return t2_seterr(T2_ENOMEM, "%s: cannot open: %s", path, strerror(e));
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= CONFIG_MAX_BYTES) {
                fclose(f);
                free(buf);
                return t2_seterr(T2_EINVAL, "%s: larger than %u bytes; not an experiment config", path,
                                 CONFIG_MAX_BYTES);
            }
            cap = cap ? cap * 2 : 4096;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                fclose(f);
                free(buf);
                return t2_seterr(T2_ENOMEM, "config: out of memory");
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        return t2_seterr(T2_EIO, "%s: read failed: %s", path, strerror(e));
    }
    if (!buf && !(buf = malloc(1))) return t2_seterr(T2_ENOMEM, "config: out of memory");
    buf[len] = '\0';
    return load(buf, len, path, overrides, noverrides, out);
}

int t2__config_batch_sizes(const t2__config *cfg, const t2__val *hparams, int64_t *global, int64_t *per_slot)
{
    if (!cfg || !hparams) return t2_seterr(T2_EINVAL, "config: NULL argument");
    const t2__val *g = t2__val_map_get(hparams, "global_batch_size");
    int64_t slots = cfg->resources.slots_per_trial > 0 ? cfg->resources.slots_per_trial : 1;
    if (!g) return t2_seterr(T2_EINVAL, "hyperparameters.global_batch_size: missing from the trial's hyperparameters");
    if (g->kind == T2__VAL_INT && g->i < 1)
        return t2_seterr(T2_EINVAL, "hyperparameters.global_batch_size: expected a positive integer, got %lld",
                         (long long)g->i);
    if (g->kind != T2__VAL_INT)
        return t2_seterr(T2_EINVAL, "hyperparameters.global_batch_size: expected a positive integer, got a%s %s",
                         g->kind == T2__VAL_INT ? "n" : "", t2__val_kind_name(g->kind));
    if (g->i > T2__MAX_BATCH) /* a custom searcher's, or a store's written before the bound */
        return t2_seterr(T2_EINVAL, "hyperparameters.global_batch_size: expected at most %lld records a step (the "
                                    "trial API gives the batch size as an int), got %lld",
                         (long long)T2__MAX_BATCH, (long long)g->i);
    if (g->i < slots)
        return t2_seterr(T2_EINVAL, "hyperparameters.global_batch_size: %lld is less than resources.slots_per_trial "
                                    "(%lld); every slot needs at least one record a step",
                         (long long)g->i, (long long)slots);
    /* Determined's rounding (calculate_batch_sizes): each slot takes the floor, the step the rest. */
    if (global) *global = g->i / slots * slots;
    if (per_slot) *per_slot = g->i / slots;
    return T2_OK;
}
