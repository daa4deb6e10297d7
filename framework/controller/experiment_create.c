/* experiment_create.c — `t2exp create`: a new experiment recorded in the store (the config as run,
 * with its overrides as data), its directories made, prepare_data run, then the searcher started. */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "ctl.h"
#include "route.h"
#include "dist/comm.h"
#include "runner/ctx.h"
#include "internal.h"

/* KEY="ABSOLUTE PATH" (a YAML double-quoted string) into out (PATH_MAX * 2 + 64 bytes): an override
 * the store keeps with the experiment, so that a resume from another directory finds the file.
 * resolve: through realpath (links followed); else the current directory before it, so that a
 * link the user points elsewhere later (a hostfile naming today's pool) is read anew (review). */
static void path_override(const char *key, const char *path, int resolve, char *out)
{
    char abs[PATH_MAX], cwd[PATH_MAX];
    if (resolve ? !realpath(path, abs) : !getcwd(cwd, sizeof cwd) || (size_t)snprintf(abs, sizeof abs, "%s/%s", cwd, path) >= sizeof abs)
        snprintf(abs, sizeof abs, "%s", path);
    char *w = out + sprintf(out, "%s=\"", key);
    for (const char *p = abs; *p; p++) {
        if (*p == '"' || *p == '\\') *w++ = '\\';
        *w++ = *p;
    }
    strcpy(w, "\"");
}

int t2__ctl_check_resources(const t2__config *cfg)
{
    if ((cfg->resources.slots_per_trial > 1 || cfg->resources.hostfile) && !t2__comm_have_mpi())
        return t2_seterr(T2_EUNSUPPORTED, "%s: trials on other hosts and distributed trials need MPI, and this "
                         "t2exp was built with -DT2EXP_WITH_MPI=OFF",
                         cfg->resources.hostfile ? "resources.hostfile" : "resources.slots_per_trial");
    const char *ca = cfg->resources.controller_address;
    if (ca && *ca) return t2__controller_address_check(ca, "resources.controller_address");
    /* The variable too, before anything is recorded: checked only at the first launch, a typo in
     * it left an ERRORED experiment in the store (probe_L). The config's key wins over it. */
    const char *env = getenv("T2EXP_CONTROLLER_ADDR");
    int via_mpi = cfg->resources.hostfile || cfg->resources.slots_per_trial > 1 ||
                  (getenv("SLURM_JOB_ID") && !cfg->resources.slurm_off && t2__comm_have_mpi()); /* t2__ctl_load_pool's rule */
    return via_mpi && env && *env ? t2__controller_address_check(env, "T2EXP_CONTROLLER_ADDR") : T2_OK;
}

int t2__experiment_create(const t2__create_opts *o, int64_t *exp_id)
{
    t2__ctl c;
    t2__ctl_init(&c);
    c.o = o;
    c.cfg = o->cfg;
    c.tt.full_length = o->cfg->searcher.max_length.n;
    *exp_id = 0;
    const t2__config *cfg = o->cfg;
    int rc;
    char home[PATH_MAX], object[PATH_MAX];
    if ((rc = t2__trial_so_open(o->trial_path, &c.so))) return rc;
    if (!realpath(c.so.path, object)) snprintf(object, sizeof object, "%s", c.so.path);
    if ((rc = t2__ctl_check_resources(cfg))) {
        t2__trial_so_close(&c.so);
        return rc;
    }
    c.ovr = o->overrides;
    c.novr = o->noverrides;
    t2__ctl_signals sigs;
    t2__ctl_catch_signals(&sigs);
    if ((rc = t2__ctl_open_store(o->home, home, sizeof home, &c.st, 0)) || (rc = t2__ctl_resolve_warm(&c)) ||
        (rc = t2__ctl_load_pool(&c)))
        goto out;
    uint64_t seed = cfg->experiment_seed_set ? cfg->experiment_seed : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    /* Before anything is recorded: a custom searcher's library that does not load makes nothing,
     * and neither do trials that cannot fit the slots. */
    if ((rc = t2__searcher_create(cfg, seed, &c.s)) || (rc = t2__ctl_plan(&c))) goto out;
    /* The store keeps the config as run: the file as given, and the command line's overrides as
     * data (a JSON array in their own column, which `t2exp resume` applies again exactly, whatever
     * characters they hold). */
    /* --from-checkpoint is kept the same way, as searcher.source_checkpoint with an absolute path
     * (a YAML double-quoted string), so the trials a resume starts warm-start as these did; and so
     * is searcher.source_checkpoint itself (a relative path in the file or a --config was resolved
     * against the directory of each resume, which could find another file of that name). */
    char warm_ovr[PATH_MAX * 2 + 64] = "", lib_ovr[PATH_MAX * 2 + 64] = "";
    if (c.warm && (o->from_checkpoint || cfg->searcher.source_checkpoint))
        path_override("searcher.source_checkpoint", c.warm, 1, warm_ovr);
    /* A custom searcher's library likewise, so that a resume from another directory finds it; and a
     * relative resources.hostfile (a resume elsewhere failed, or read another file of that name:
     * another pool; probe_N). */
    if (cfg->searcher.name == T2__SEARCH_CUSTOM) path_override("searcher.library", cfg->searcher.library, 1, lib_ovr);
    char hosts_ovr[PATH_MAX * 2 + 64] = "";
    if (cfg->resources.hostfile && cfg->resources.hostfile[0] != '/')
        path_override("resources.hostfile", cfg->resources.hostfile, 0, hosts_ovr);
    t2__experiment_new e = {.name = cfg->name, .description = cfg->description, .config_yaml = cfg->yaml_text,
                            .searcher_name = t2__searcher_name(cfg->searcher.name), .metric = cfg->searcher.metric,
                            .smaller_is_better = cfg->searcher.smaller_is_better, .trial_object = object,
                            .seed = (int64_t)seed};
    char *labels = NULL, *ovr_json = NULL;
    t2__val *lv = t2__val_list(), *ov = t2__val_list();
    for (size_t i = 0; lv && i < cfg->nlabels; i++) t2__val_list_append(lv, t2__val_string(cfg->labels[i]));
    for (int i = 0; ov && i < o->noverrides; i++)
        if (t2__val_list_append(ov, t2__val_string(o->overrides[i]))) break;
    if (ov && warm_ovr[0]) t2__val_list_append(ov, t2__val_string(warm_ovr));
    if (ov && lib_ovr[0]) t2__val_list_append(ov, t2__val_string(lib_ovr));
    if (ov && hosts_ovr[0]) t2__val_list_append(ov, t2__val_string(hosts_ovr));
    size_t len;
    if (lv && t2__val_to_json(lv, &labels, &len) == T2_OK) e.labels_json = labels;
    /* Every override must be kept, or resume would run another experiment. */
    if (!ov || ov->n != (size_t)o->noverrides + (warm_ovr[0] != '\0') + (lib_ovr[0] != '\0') + (hosts_ovr[0] != '\0') ||
        t2__val_to_json(ov, &ovr_json, &len))
        rc = t2_seterr(T2_ENOMEM, "controller: out of memory");
    e.overrides_json = ovr_json;
    t2__val_free(lv);
    t2__val_free(ov);
    if (!rc) rc = t2__store_create_experiment(c.st, &e, &c.exp_id);
    free(labels);
    free(ovr_json);
    if (rc) goto out;
    char dir[PATH_MAX];
    /* From here the row exists: a failure leaves it ERRORED with the reason (it stayed ACTIVE, with
     * no checkpoint directory recorded, and a resume computed another). *exp_id stays 0 until the
     * run is set up, so the code says what failed: T2_EIO, store or I/O trouble, is exit 3. */
    if ((rc = t2__store_experiment_dir(home, c.exp_id, NULL, dir, sizeof dir)) || (rc = t2__mkdirs(dir)) ||
        (rc = t2__ctl_checkpoint_dir(&c, home, NULL, 0)) || (rc = t2__store_flush(c.st, 1)) ||
        (rc = t2__store_set_controller(c.st, c.exp_id, 1))) {
        rc = t2__ctl_fail_start(&c, rc);
        goto out;
    }
    c.recorded = 1;
    *exp_id = c.exp_id;
    if (o->on_started) o->on_started(o->on_started_arg, c.exp_id);

    t2__progress_init(&c.prog, o->progress, o->out, cfg->searcher.metric);
    t2__progress_line(o->out, "experiment %lld (%s): %s search on %s, metric %s (%s is better), seed %llu",
                      (long long)c.exp_id, cfg->name, t2__searcher_name(cfg->searcher.name), object,
                      cfg->searcher.metric, cfg->searcher.smaller_is_better ? "smaller" : "larger",
                      (unsigned long long)seed);
    t2__ctl_log_pool(&c);
    if ((rc = t2__ctl_prepare_experiment(&c, seed))) goto out;
    rc = t2__ctl_run_experiment(&c, 0);
out:
    rc = t2__ctl_end(&c, rc);
    t2__ctl_restore_signals(&sigs);
    t2__ctl_cleanup(&c);
    return rc;
}
