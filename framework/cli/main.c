/* main.c — the t2exp command line. Only this file decides exit codes:
 * 0 ok, 1 the experiment ran and failed, 2 usage or configuration error (including a bad trial
 * object), 3 store or I/O trouble. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoints/ckpt.h"
#include "configs/config.h"
#include "framework/common/blas_core.h"
#include "framework/common/internal.h"
#include "framework/common/outfile.h"
#include "framework/cli/args.h"
#include "framework/cli/commands.h"
#include "framework/cli/info.h"
#include "framework/cli/lifecycle.h"
#include "framework/cli/importance.h"
#include "framework/cli/test_mode.h"
#include "framework/cli/pipeline.h"
#include "framework/controller/controller.h"
#include "framework/runner/remote.h"
#include "framework/runner/runner.h"
#include "framework/runner/trial_so.h"
#include "framework/store/store.h"
#include "searchers/searcher.h"
#include "t2exp.h"
#include "t2exp/blas.h"


#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_STORE 3
#define EXIT_STOPPED 130 /* a signal stopped it before anything was recorded (pipeline.c's too) */

/* The exit code of a create or resume that failed before its experiment ran. */
static int setup_exit(int rc)
{
    return rc == T2_EIO ? EXIT_STORE : rc == T2_ESTOPPED ? EXIT_STOPPED : EXIT_USAGE;
}

static const char *usage_text =
    "usage: t2exp [--home DIR] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  create CONFIG TRIAL.so [--config KEY=VALUE ...] [--from-checkpoint CHECKPOINT] [--plain|--quiet]\n"
    "         [--detach|--test]                    run an experiment (--detach: in the background; --test:\n"
    "                                              one 1-batch trial, checkpoint restored and checked)\n"
    "  resume ID [TRIAL.so] [--config KEY=VALUE ...] [--plain|--quiet] [--detach]\n"
    "                                              finish an interrupted experiment from its checkpoints\n"
    "                                              (--config on top of the stored config, e.g. another\n"
    "                                              resources.slots_per_trial: checkpoints restore elastically)\n"
    "  pause EXP                                   checkpoint a running experiment and stop it (PAUSED)\n"
    "  activate EXP                                resume a PAUSED experiment in the background\n"
    "  kill EXP | EXP.N                            stop a running experiment now: trials killed, CANCELED\n"
    "                                              (EXP.N: that trial alone, CANCELED; the search goes on)\n"
    "  follow EXP                                  print a detached experiment's output until it ends\n"
    "                                              (exit 0 when it COMPLETED, 1 otherwise)\n"
    "  delete EXP [--yes]                          delete a finished experiment: rows, directory, checkpoints\n"
    "                                              (asks first; --yes is required when stdin is no terminal)\n"
    "  list [--json|--csv]                         experiments\n"
    "  describe ID [--json|--csv] [--top N]        one experiment: config, trials ranked, metrics\n"
    "  describe EXP.N [--json|--csv]               one trial: its row, latest validation, checkpoints\n"
    "  trials ID [--json|--csv]                    an experiment's trials\n"
    "  metrics EXP|TRIAL [--kind training|validation] [--json|--csv]\n"
    "                                              an experiment's metrics in one table, or a trial's\n"
    "  importance EXP [--json|--csv]               each searched hyperparameter's share of the variance of\n"
    "                                              the results (fANOVA, as Optuna's get_param_importances)\n"
    "  logs TRIAL [--follow] | EXP --lost          a trial's output (--follow, -f: as it is written, until\n"
    "                                              the trial ends; --lost: the runs a killed controller lost)\n"
    "  preview CONFIG [--json] [--config KEY=VALUE ...]   what the searcher would run\n"
    "  checkpoints EXP|TRIAL [--all] [--json|--csv] checkpoints (--all: deleted ones too)\n"
    "  evaluate CHECKPOINT TRIAL.so [CONFIG]       run the trial's validation on a checkpoint\n"
    "  export CHECKPOINT OUT.bin                   write the bare float32 parameters (table on stdout)\n"
    "  pipeline run FLOW [--force STAGE]... [--jobs N]\n"
    "                                              run a flow file's stages that are not up to date\n"
    "  pipeline status FLOW [--json]               each stage: up to date, stale (why), never run\n"
    "  pipelines [--json|--csv]                    pipeline runs; pipelines describe RUN: its stages\n"
    "  info [--json]                               CPU, BLAS core and why, library versions, store path\n"
    "  dashboard [--port N] [--bind ADDR]          a read-only web UI over the store (127.0.0.1:8080)\n"
    "  plot EXP --out DIR [--format svg|png] [--top N]\n"
    "                                              learning curves, best so far, hparams, importance and\n"
    "                                              parallel coordinates as SVG/PNG files\n"
    "  model register NAME CHECKPOINT | list | describe NAME | delete NAME\n"
    "                                              the model registry: numbered versions of checkpoints,\n"
    "                                              kept, and named model:NAME[:V] as a CHECKPOINT\n"
    "  init NAME                                   write a ready trial project into NAME/\n"
    "\n"
    "create, preview, resume and evaluate take --lenient: unknown config keys are warnings, not errors.\n"
    "EXP is an experiment id; TRIAL is EXP.N (the experiment's N-th trial, from 0) or a trial id\n"
    "(in metrics and checkpoints a bare number is an experiment).\n"
    "CHECKPOINT is a file, a checkpoint uuid, EXP / EXP.N for that one's best checkpoint\n"
    "(by the searcher metric; the latest when none has one), or model:NAME[:V] (t2exp model).\n"
    "The store lives in --home, else $T2EXP_HOME, else $XDG_DATA_HOME/t2exp, else ~/.local/share/t2exp.\n"
    "Every command takes --help; t2exp --version prints the version.\n";

typedef t2__cli_args args;

static int usage_error(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "t2exp%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see t2exp %s%s--help)\n", cmd ? cmd : "", cmd ? " " : "");
    return EXIT_USAGE;
}

/* A command's arguments (argv[0] is the first after its name), by its own options (args.h). */
static int parse(const char *cmd, int argc, char **argv, args *a)
{
    const t2__cli_command *c = t2__cli_find(cmd);
    char err[600];
    if (!c) return usage_error(NULL, "unknown command %s", cmd);
    if (t2__cli_parse(c, argc + 1, argv - 1, a, err, sizeof err)) {
        fprintf(stderr, "t2exp %s: %s\n(see t2exp %s --help)\n", cmd, err, cmd);
        return EXIT_USAGE;
    }
    if (a->help) {
        char opts[400];
        t2__cli_options_text(c, opts, sizeof opts);
        printf("usage: t2exp %s%s%s [OPTIONS]\noptions: %s\n\n", cmd, c->operands[0] ? " " : "", c->operands, opts);
        fputs(usage_text, stdout);
        exit(0); /* the CLI is the one place allowed to end the process */
    }
    if (a->lenient) t2__config_set_lenient(1); /* before any config is loaded; the rest of the process follows it */
    return 0;
}

/* readonly: 1 read-only, 0 read-write (made if missing), STORE_EXISTING read-write but only one
 * that exists (the commands that name what they change). */
#define STORE_EXISTING 2
static int open_store(const args *a, int readonly, t2__store **st)
{
    char home[PATH_MAX];
    int rc = t2__store_home(a->home, home, sizeof home);
    if (!rc) rc = readonly == STORE_EXISTING ? t2__store_open_existing(home, st) : t2__store_open(home, readonly, st);
    if (rc) fprintf(stderr, "t2exp: %s\n", t2_errmsg());
    return rc;
}

/* --home reaches the processes this one starts (trials, mpirun's ranks) as $T2EXP_HOME, made
 * absolute, so that what they keep under the home (the dataset caches) follows it too. */
static int export_home(const args *a, const char *cmd)
{
    char home[PATH_MAX];
    t2__hint_set_home(NULL);
    if (!a->home) return 0;
    if (t2__store_home(a->home, home, sizeof home)) return usage_error(cmd, "--home: %s", t2_errmsg());
    /* The commands this process tells its user to run name it too, absolute: some are kept (an
     * experiment's error, controller.log) and read from elsewhere (review). */
    t2__hint_set_home(home);
    if (setenv("T2EXP_HOME", home, 1) != 0) return usage_error(cmd, "--home: %s", strerror(errno));
    return 0;
}

static int parse_id(const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    /* Digits only: strtoll also takes leading blanks and a sign (" 1" and "+1" deleted experiment 1),
     * which the store's EXP.N forms refuse. */
    if (*s < '0' || *s > '9') return -1;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v <= 0) return -1;
    *id = v;
    return 0;
}

/* TRIAL: EXP.N, or a trial id (store_resolve.c). follow: an EXP.N of a live run that is not there
 * yet is waited for (t2__follow_resolve). */
static int resolve_trial(t2__store *st, const char *s, int follow, int64_t *id)
{
    if (follow ? t2__follow_resolve(st, s, id) : t2__store_resolve_trial(st, s, id)) {
        fprintf(stderr, "t2exp: %s\n", t2_errmsg());
        return EXIT_USAGE;
    }
    return 0;
}

/* CHECKPOINT: a path, a uuid, EXP or EXP.N (store_resolve.c) into *path (malloc'ed). A path
 * needs no store; for the rest a missing store is said by the resolver's message. */
static int resolve_checkpoint(const args *a, const char *ref, char **path)
{
    t2__store *st = NULL;
    char home[PATH_MAX];
    /* Opened for a path too: a path that the store also reads is told apart there. */
    if (t2__store_home(a->home, home, sizeof home) != 0 || t2__store_open(home, 1, &st) != 0) {
        st = NULL;
        t2_clearerr();
    }
    t2__checkpoint_row row;
    int rc = t2__store_resolve_checkpoint(st, ref, &row);
    if (!rc) {
        *path = row.path;
        row.path = NULL;
    }
    t2__checkpoint_row_free(&row);
    t2__store_close(st);
    return rc;
}

static int load_config(const char *cmd, const args *a, t2__config **cfg)
{
    int rc = t2__config_load(a->pos[0], a->overrides, a->noverrides, cfg);
    if (rc) {
        /* Every problem in the file, one a line, then how many. */
        size_t ne = 0, more = 0, nw = 0;
        const char *const *e = t2__config_errors(&ne, &more), *const *w = t2__config_error_warnings(&nw);
        for (size_t i = 0; i < nw; i++) fprintf(stderr, "warning: %s\n", w[i]);
        if (ne < 2) fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
        for (size_t i = 0; ne >= 2 && i < ne; i++) fprintf(stderr, "t2exp %s: %s\n", cmd, e[i]);
        if (ne >= 2 && more) fprintf(stderr, "t2exp %s: %zu errors in %s (the first %zu shown)\n", cmd, ne + more, a->pos[0], ne);
        else if (ne >= 2) fprintf(stderr, "t2exp %s: %zu errors in %s\n", cmd, ne, a->pos[0]);
        return EXIT_USAGE;
    }
    size_t nw;
    const char *const *w = t2__config_warnings(*cfg, &nw);
    for (size_t i = 0; i < nw; i++) fprintf(stderr, "warning: %s\n", w[i]);
    return 0;
}

/* --detach: forks (after the config was validated here, so its errors come with exit 2 before
 * anything runs in the background). Returns -1 in the child, which goes on to run the experiment
 * with *cb and *arg as its on_started; an exit code in the parent. */
static int detach(const char *cmd, const args *a, t2__detach *d, void (**cb)(void *, int64_t), void **arg)
{
    char home[PATH_MAX];
    int64_t id = 0;
    int child_exit = 0;
    if (!a->detach) return -1;
    int rc = t2__store_home(a->home, home, sizeof home);
    if (!rc) rc = t2__detach_fork(d, home, &id, &child_exit);
    if (rc < 0) {
        fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
        return EXIT_STORE;
    }
    if (rc == 0) {
        *cb = t2__detach_started;
        *arg = d;
        return -1;
    }
    if (rc == 2) return child_exit; /* it said why on stderr */
    printf("experiment %lld started in the background; follow with: t2exp%s follow %lld\n", (long long)id,
           t2__hint_home(), (long long)id);
    return 0;
}

static int cmd_create_test(const args *a, const t2__config *user_cfg);

static int cmd_create(const args *a)
{
    t2__config *cfg = NULL;
    if (a->test && a->detach) return usage_error("create", "%s", "--test runs in the foreground (its verdict is its output)");
    int ex = load_config("create", a, &cfg);
    if (ex) return ex;
    if (a->test) {
        ex = cmd_create_test(a, cfg);
        t2__config_free(cfg);
        return ex;
    }
    t2__create_opts o = {.cfg = cfg, .trial_path = a->pos[1], .home = a->home, .overrides = a->overrides,
                         .noverrides = a->noverrides, .from_checkpoint = a->from_checkpoint,
                         .progress = a->detach ? T2__PROGRESS_PLAIN : a->progress, .out = stdout};
    static t2__detach d;
    if ((ex = detach("create", a, &d, &o.on_started, &o.on_started_arg)) >= 0) {
        t2__config_free(cfg);
        return ex;
    }
    int64_t id = 0;
    int rc = t2__experiment_create(&o, &id);
    if (rc < 0) {
        fprintf(stderr, "t2exp create: %s\n", t2_errmsg());
        ex = id ? EXIT_FAILED : setup_exit(rc);
    } else {
        ex = rc ? EXIT_FAILED : 0;
    }
    t2__config_free(cfg);
    return ex;
}

/* create --test (test_mode.c): the config as given was valid; now its test run. */
static int cmd_create_test(const args *a, const t2__config *user_cfg)
{
    char **ovr = NULL;
    int novr = 0;
    t2__config *cfg = NULL;
    t2__store *st = NULL;
    int rc = t2__test_mode_overrides(user_cfg, a->overrides, a->noverrides, &ovr, &novr);
    if (!rc) rc = t2__config_load(a->pos[0], (const char *const *)ovr, novr, &cfg);
    if (rc) {
        fprintf(stderr, "t2exp create --test: %s\n", t2_errmsg());
        t2__test_mode_overrides_free(ovr, novr, a->noverrides);
        return EXIT_USAGE;
    }
    printf("test mode: the config is valid; now one trial of 1 batch with hyperparameters drawn from the search "
           "space, validated and checkpointed, then its checkpoint restored and validated again\n");
    fflush(stdout);
    t2__create_opts o = {.cfg = cfg, .trial_path = a->pos[1], .home = a->home, .overrides = (const char *const *)ovr,
                         .noverrides = novr, .from_checkpoint = a->from_checkpoint, .progress = a->progress,
                         .out = stdout};
    int64_t id = 0;
    int ex;
    rc = t2__experiment_create(&o, &id);
    if (rc < 0 && !id) {
        fprintf(stderr, "t2exp create --test: %s\n", t2_errmsg());
        ex = setup_exit(rc);
    } else if (open_store(a, 0, &st)) {
        ex = EXIT_STORE;
    } else {
        ex = t2__test_mode_finish(st, cfg, id, rc, a->pos[1], stdout) ? EXIT_FAILED : 0;
    }
    t2__store_close(st);
    t2__config_free(cfg);
    t2__test_mode_overrides_free(ovr, novr, a->noverrides);
    return ex;
}

/* resume, or activate (cmd: the name its messages go under). */
static int cmd_resume(const char *cmd, const args *a)
{
    int64_t id;
    if (parse_id(a->pos[0], &id)) return usage_error(cmd, "not an experiment id: %s", a->pos[0]);
    t2__resume_opts o = {.experiment_id = id, .home = a->home, .trial_path = a->npos > 1 ? a->pos[1] : NULL,
                         .overrides = a->overrides, .noverrides = a->noverrides,
                         .progress = a->detach ? T2__PROGRESS_PLAIN : a->progress, .out = stdout};
    static t2__detach d;
    int ex = detach(cmd, a, &d, &o.on_started, &o.on_started_arg);
    if (ex >= 0) return ex;
    int rc = t2__experiment_resume(&o);
    if (rc < 0) {
        fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
        return setup_exit(rc);
    }
    return rc ? EXIT_FAILED : 0;
}

/* Whether this store wrote the checkpoint: its uuid is one of this store's checkpoints, of the
 * trial the archive names. Ids and hparams alone say nothing: every store numbers from 1, and two
 * homes running the same config have the same trial 1 (a copied checkpoint once got this store's
 * experiment of the same number, its data and overrides, without a word). */
static int same_trial(t2__store *st, const t2_checkpoint_info *info)
{
    int64_t owner = 0;
    int rc = info->uuid ? t2__store_checkpoint_owner(st, info->uuid, &owner) : T2_ENOTFOUND;
    if (rc == T2_ENOTFOUND) {
        t2_clearerr();
        return 0;
    }
    return rc ? rc : owner == info->trial_id;
}

/* The config for evaluate: the file given, else the one stored with the checkpoint's experiment
 * (when this store wrote the checkpoint). */
static int evaluate_config(const args *a, const t2_checkpoint_info *info, t2__config **cfg, int *parts)
{
    *parts = 0;
    if (a->npos > 2) return t2__config_load(a->pos[2], a->overrides, a->noverrides, cfg);
    t2__store *st = NULL;
    int rc = info->experiment_id > 0 ? open_store(a, 1, &st) : t2_seterr(T2_ENOTFOUND, "the checkpoint belongs to no experiment; give a CONFIG");
    int same = rc ? 0 : same_trial(st, info);
    if (!rc && same < 0) rc = same;
    if (!rc && !same)
        rc = t2_seterr(T2_ENOTFOUND, "the checkpoint's trial %lld of experiment %lld is not in the store %s (it was "
                       "written by another store, or its experiment was deleted): give a CONFIG",
                       (long long)info->trial_id, (long long)info->experiment_id, t2__store_path(st));
    /* The config as the experiment ran it: the stored file, its --config overrides, then ours. */
    if (!rc) rc = t2__experiment_stored_config(st, info->experiment_id, a->overrides, a->noverrides, cfg, parts);
    t2__store_close(st);
    return rc;
}

static int cmd_evaluate(const args *a)
{
    t2__ckpt *ck = NULL;
    t2__config *cfg = NULL;
    t2__val *hp = NULL;
    t2__trial_so so;
    memset(&so, 0, sizeof so);
    t2_checkpoint_info info;
    size_t off;
    char *path = NULL;
    int parts = 0; /* the experiment's P, so the evaluation rounds as its training did */
    /* The hyperparameters are the checkpoint's own (its trial's, in metadata.json): an override
     * of them would be taken and do nothing, so it is refused, as resume refuses it. */
    for (int i = 0; i < a->noverrides; i++)
        if (!strncmp(a->overrides[i], "hyperparameters", 15) &&
            (a->overrides[i][15] == '.' || a->overrides[i][15] == '=')) {
            fprintf(stderr, "t2exp evaluate: --config %s: evaluate takes the hyperparameters from the checkpoint "
                            "(those its trial trained with); they cannot be changed here\n", a->overrides[i]);
            return EXIT_USAGE;
        }
    /* metadata.json only: the runner reads the entries once the trial's model is built, bounded by
     * its size (a checkpoint that claims more than the model holds is never decoded). */
    int rc = resolve_checkpoint(a, a->pos[0], &path);
    if (!rc) rc = t2__ckpt_open_info(&ck, path);
    if (!rc) rc = t2__ckpt_get_info(ck, &info);
    if (!rc) rc = t2__val_from_json(info.hparams_json, strlen(info.hparams_json), &hp, &off);
    if (!rc) rc = evaluate_config(a, &info, &cfg, &parts);
    if (!rc) {
        /* What create and preview say of the config, evaluate says too: the --lenient unknown keys,
         * the accepted-but-ignored ones (it said nothing: probe_M). */
        size_t nw = 0;
        const char *const *w = t2__config_warnings(cfg, &nw);
        for (size_t i = 0; i < nw; i++) fprintf(stderr, "warning: %s\n", w[i]);
    }
    if (!rc) rc = t2__trial_so_open(a->pos[1], &so);
    if (!rc) {
        t2__runner_args ra = {.cfg = cfg, .def = so.def, .hparams = hp, .trial_id = info.trial_id,
                              .seed = 0, .threads = t2__usable_cores(), .parts = parts, .fd = -1,
                              .restore_path = path, .warm_start = 1};
        rc = t2__runner_evaluate(&ra, stdout);
    }
    if (rc) fprintf(stderr, "t2exp evaluate: %s\n", t2_errmsg());
    t2__trial_so_close(&so);
    t2__val_free(hp);
    t2__config_free(cfg);
    t2__ckpt_free(ck);
    free(path);
    return rc ? EXIT_USAGE : 0;
}

/* export's sink: params.bin's bytes, as they are decoded, into the output's temporary file. */
static int export_sink(void *ctx, const void *data, size_t len) { return t2__outfile_write(ctx, data, len); }

static int cmd_export(const args *a)
{
    t2__ckpt *ck = NULL;
    t2__outfile out;
    t2_checkpoint_info info;
    /* Never over the checkpoint itself (under any name), and the output appears only once every
     * entry's checksum has passed; the parameters stream through, so memory stays small
     * whatever the checkpoint's size. A first pass only verifies, so a forged archive (a
     * compressed one may decode to 1032 times its size) never fills the disk with a temporary
     * output before its checksum fails; a good checkpoint is read twice. */
    char *path = NULL;
    int rc = resolve_checkpoint(a, a->pos[0], &path);
    const char *in = path;
    if (!rc) rc = t2__ckpt_stream_params(&ck, path, NULL, NULL);
    t2__ckpt_free(ck);
    ck = NULL;
    if (!rc) rc = t2__outfile_open(&out, a->pos[1], 0666, &in, 1);
    /* The buffers (a net's batchnorm statistics) follow the parameters: without them a net with
     * batchnorm evaluated as another model (probe_H H5: RMSE 0.51 where evaluate said 0.25). */
    size_t nbuf = 0;
    if (!rc) {
        rc = t2__ckpt_stream_params(&ck, path, export_sink, &out); /* params.bin, then buffers.bin */
        if (!rc) rc = t2__ckpt_get_info(ck, &info);
        if (!rc) nbuf = info.num_buffers;
        rc = rc ? (t2__outfile_abort(&out), rc) : t2__outfile_commit(&out);
    }
    if (!rc) {
        printf("name,shape,offset,size\n");
        for (int pass = 0; pass < 2; pass++) /* the parameters, then the buffers, as in OUT.bin */
            for (int i = 0; i < info.num_tensors; i++) {
                t2_param_info t;
                if (t2_checkpoint_tensor_info(ck, i, &t) || t.is_buffer != pass) continue;
                printf("%s,", t.name);
                for (int d = 0; d < t.ndim; d++) printf("%s%d", d ? "x" : "", t.shape[d]);
                printf(",%zu,%zu\n", t.offset + (t.is_buffer ? info.num_params : 0), t.size);
            }
        if (nbuf)
            fprintf(stderr, "wrote %zu float32 parameters and then %zu buffer floats (%zu bytes, little-endian) to %s\n",
                    info.num_params, nbuf, (info.num_params + nbuf) * sizeof(float), a->pos[1]);
        else
            fprintf(stderr, "wrote %zu float32 parameters (%zu bytes, little-endian) to %s\n", info.num_params,
                    info.num_params * sizeof(float), a->pos[1]);
    } else {
        fprintf(stderr, "t2exp export: %s\n", t2_errmsg());
    }
    t2__ckpt_free(ck);
    free(path);
    return rc ? EXIT_USAGE : 0;
}

static int cmd_preview(const args *a)
{
    t2__config *cfg = NULL;
    int ex = load_config("preview", a, &cfg);
    if (ex) return ex;
    t2__val *p = NULL;
    int rc = t2__searcher_preview(cfg, cfg->experiment_seed_set ? cfg->experiment_seed : 0, &p);
    if (rc) {
        fprintf(stderr, "t2exp preview: %s\n", t2_errmsg());
        ex = EXIT_USAGE;
    } else if (a->fmt == T2__FMT_JSON) {
        /* A plan that cannot be printed is an error, never an empty answer and exit 0 (a value
         * the config let through but JSON cannot write, such as an overflowing draw). */
        char *json = NULL;
        size_t len;
        if (t2__val_to_json(p, &json, &len) != T2_OK) ex = EXIT_USAGE, fprintf(stderr, "t2exp preview: %s\n", t2_errmsg());
        else if (printf("%s\n", json) < 0 || fflush(stdout) != 0)
            ex = EXIT_STORE, fprintf(stderr, "t2exp preview: writing the plan failed: %s\n", strerror(errno));
        free(json);
    } else if ((rc = t2__preview_print(p, stdout)) != T2_OK) {
        fprintf(stderr, "t2exp preview: %s\n", t2_errmsg());
        ex = rc == T2_EIO ? EXIT_STORE : EXIT_USAGE; /* a full disk is I/O trouble, not a bad config */
    }
    /* After the plan, which still says what the search would run elsewhere: create would refuse
     * the config on this pool, so preview does not pass it. */
    if (!ex && t2__ctl_check_slots(cfg) != T2_OK) {
        fprintf(stderr, "t2exp preview: create would refuse this config here: %s\n", t2_errmsg());
        ex = EXIT_USAGE;
    }
    t2__val_free(p);
    t2__config_free(cfg);
    return ex;
}

/* kill EXP.N: that trial alone (Determined's `det trial kill`); the experiment goes on. Exit 0 once
 * it is CANCELED, 1 when it ended otherwise first (completed, or its experiment stopped). */
static int cmd_kill_trial(const args *a)
{
    t2__store *st = NULL;
    int64_t id;
    int state = 0, offline = 0;
    if (open_store(a, STORE_EXISTING, &st)) return EXIT_STORE;
    int ex = resolve_trial(st, a->pos[0], 0, &id);
    if (ex) {
        t2__store_close(st);
        return ex;
    }
    int rc = t2__kill_trial(st, id, 120.0, &state, &offline);
    if (!rc)
        printf("trial %s is %s%s\n", a->pos[0], t2__trial_state_name(state),
               offline ? " (its experiment is not running: the search takes it into account when it resumes)"
               : state == T2__TRIAL_CANCELED ? ""
               : state == T2__TRIAL_COMPLETED ? " (it completed before the kill reached it)"
                                              : " (its experiment stopped before the kill reached it)");
    else
        fprintf(stderr, "t2exp kill: %s\n", t2_errmsg());
    t2__store_close(st);
    if (rc) return rc == T2_ESTATE || rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
    return state == T2__TRIAL_CANCELED ? 0 : EXIT_FAILED;
}

/* pause / kill: the live controller gets SIGTERM (as Ctrl-C: it checkpoints, PAUSED; not SIGINT,
 * whose second coming stops the trials without their checkpoints, so a pause asked twice stays a
 * pause) or SIGUSR2 (trials killed, CANCELED); the command returns once it has ended. */
static int cmd_stop(const char *cmd, const args *a)
{
    int64_t id;
    t2__store *st = NULL;
    if (!strcmp(cmd, "kill") && strchr(a->pos[0], '.')) return cmd_kill_trial(a);
    if (parse_id(a->pos[0], &id)) return usage_error(cmd, "not an experiment id: %s", a->pos[0]);
    if (open_store(a, 1, &st)) return EXIT_STORE;
    /* Pausing waits for the trials' checkpoints (the controller gives them a minute). */
    int rc = t2__signal_controller(st, id, !strcmp(cmd, "kill") ? SIGUSR2 : SIGTERM, 600.0);
    t2__experiment_row row;
    memset(&row, 0, sizeof row);
    if (!rc) rc = t2__store_get_experiment(st, id, &row);
    if (!rc) printf("experiment %lld is %s\n", (long long)id, t2__exp_state_name(row.state));
    else fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
    t2__experiment_row_free(&row);
    t2__store_close(st);
    return !rc ? 0 : rc == T2_ESTATE || rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
}

static int cmd_follow(const args *a)
{
    int64_t id;
    t2__store *st = NULL;
    int state = 0;
    if (parse_id(a->pos[0], &id)) return usage_error("follow", "not an experiment id: %s", a->pos[0]);
    if (open_store(a, 1, &st)) return EXIT_STORE;
    int rc = t2__follow(st, id, stdout, &state);
    long pid = 0;
    if (!rc && state == T2__EXP_ACTIVE && t2__store_controller(st, id, &pid) == 0)
        fprintf(stderr, "experiment %lld is ACTIVE, but no controller runs it: it was killed or crashed before it "
                        "recorded an end; `t2exp%s resume %lld` continues it\n", (long long)id, t2__hint_home(),
                (long long)id);
    else if (!rc) fprintf(stderr, "experiment %lld is %s\n", (long long)id, t2__exp_state_name(state));
    else fprintf(stderr, "t2exp follow: %s\n", t2_errmsg());
    t2__store_close(st);
    if (rc) return rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
    return state == T2__EXP_COMPLETED ? 0 : EXIT_FAILED;
}

/* Determined asks before deleting; without a terminal to ask on, --yes is the answer. */
static int confirm_delete(const args *a, t2__store *st, int64_t id)
{
    if (a->yes) return 0;
    if (!isatty(STDIN_FILENO)) {
        fprintf(stderr, "t2exp delete: stdin is not a terminal, so there is no one to confirm; pass --yes to delete "
                        "experiment %lld\n", (long long)id);
        return EXIT_USAGE;
    }
    t2__experiment_row row;
    if (t2__store_get_experiment(st, id, &row)) {
        fprintf(stderr, "t2exp delete: %s\n", t2_errmsg());
        return EXIT_USAGE;
    }
    t2__store_printable(row.name, strlen(row.name));
    fprintf(stderr, "delete experiment %lld (%s, %s, %lld trial(s)) with its checkpoints? [y/N] ", (long long)id,
            row.name, t2__exp_state_name(row.state), (long long)row.num_trials);
    t2__experiment_row_free(&row);
    char line[64];
    if (!fgets(line, sizeof line, stdin) || (line[0] != 'y' && line[0] != 'Y')) {
        fprintf(stderr, "not deleted\n");
        return EXIT_FAILED;
    }
    return 0;
}

static int cmd_delete(const args *a)
{
    int64_t id;
    t2__store *st = NULL;
    if (parse_id(a->pos[0], &id)) return usage_error("delete", "not an experiment id: %s", a->pos[0]);
    if (open_store(a, STORE_EXISTING, &st)) return EXIT_STORE;
    t2__experiment_row row;
    int rc = t2__store_get_experiment(st, id, &row), ex = 0;
    if (!rc) t2__experiment_row_free(&row);
    if (!rc && !(ex = confirm_delete(a, st, id))) rc = t2__delete_experiment(st, id);
    if (!rc && !ex) printf("experiment %lld deleted\n", (long long)id);
    if (rc) {
        fprintf(stderr, "t2exp delete: %s\n", t2_errmsg());
        ex = rc == T2_ESTATE || rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
    }
    int rc2 = t2__store_close(st);
    if (rc2 && !ex) {
        fprintf(stderr, "t2exp delete: %s\n", t2_errmsg());
        ex = EXIT_STORE;
    }
    return ex;
}

/* The stream l to stdout; *last (may be NULL) gets its last byte ('\n' when empty). */
static int print_stream(const t2__trial_log *l, char *last)
{
    int64_t at = 0;
    if (last) *last = '\n';
    return t2__trial_log_copy(l, &at, stdout, last);
}

/* A trial's output (trial_log.c): its own log file, then each run's segment of a worker's log.
 * follow: then as it grows, until the trial ends (exit 0 when it COMPLETED, 1 otherwise, as
 * `follow EXP`). */
static int cmd_logs(t2__store *st, int64_t trial_id, int follow)
{
    if (follow) {
        int state = 0, rc = t2__follow_trial(st, trial_id, stdout, &state);
        if (rc) fprintf(stderr, "t2exp logs: %s\n", t2_errmsg());
        return rc ? (rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE) : state == T2__TRIAL_COMPLETED ? 0 : 1;
    }
    t2__trial_log l;
    int rc = t2__trial_log_open(st, trial_id, &l);
    if (rc) {
        fprintf(stderr, "t2exp logs: %s\n", t2_errmsg());
        return rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
    }
    if (l.n == 0) {
        fprintf(stderr, "t2exp logs: trial %lld has no log yet\n", (long long)trial_id);
        t2__trial_log_free(&l);
        return EXIT_STORE;
    }
    if ((rc = print_stream(&l, NULL))) fprintf(stderr, "t2exp logs: %s\n", t2_errmsg());
    t2__trial_log_free(&l);
    return rc ? EXIT_STORE : 0;
}

/* `logs EXP --lost`: each lost run's output (lost_runs.c) under a line that says whose it was. */
static int cmd_lost_logs(t2__store *st, int64_t exp)
{
    t2__lost_run *v = NULL;
    size_t n = 0;
    int rc = t2__store_lost_runs(st, exp, &v, &n);
    if (rc) {
        fprintf(stderr, "t2exp logs: %s\n", t2_errmsg());
        return rc == T2_ENOTFOUND ? EXIT_USAGE : EXIT_STORE;
    }
    if (n == 0) fprintf(stderr, "t2exp logs: experiment %lld has no lost output\n", (long long)exp);
    for (size_t i = 0; i < n && !rc; i++) {
        const t2__log_segment *p = &v[i].seg;
        const char *name = strrchr(p->path, '/');
        printf("=== lost run of trial id %lld (a killed controller lost it; the id may name another trial now): %s",
               (long long)v[i].trial_id, name ? name + 1 : p->path);
        if (p->end >= 0) printf(" bytes %lld-%lld", (long long)p->start, (long long)p->end);
        printf(" ===\n");
        t2__trial_log l = {.trial_id = v[i].trial_id, .pieces = &v[i].seg, .n = 1};
        char last;
        rc = print_stream(&l, &last);
        if (last != '\n') putchar('\n'); /* the next header starts a line */
    }
    if (rc) fprintf(stderr, "t2exp logs: %s\n", t2_errmsg());
    t2__lost_runs_free(v, n);
    return rc ? EXIT_STORE : 0;
}

/* list/describe/trials/metrics/logs: read-only store commands. */
static int cmd_read(const char *cmd, const args *a)
{
    t2__store *st = NULL;
    int64_t id = 0;
    /* EXP everywhere; EXP.N (or a trial id) for one trial: metrics and checkpoints take either,
     * describe an EXP.N, logs a trial only. */
    int lost = !strcmp(cmd, "logs") && a->lost;
    if (lost && a->follow) return usage_error(cmd, "%s", "--follow follows one trial's output; --lost lists past runs");
    int trial = (!strcmp(cmd, "logs") && !lost) ||
                ((!strcmp(cmd, "metrics") || !strcmp(cmd, "checkpoints") || !strcmp(cmd, "describe")) &&
                 strchr(a->pos[0], '.'));
    if (trial && !strcmp(cmd, "describe") && a->top > 0)
        return usage_error(cmd, "%s", "--top ranks an experiment's trials; describe EXP.N shows one trial");
    if (strcmp(cmd, "list") != 0 && !trial && parse_id(a->pos[0], &id))
        return usage_error(cmd, "not an experiment id: %s", a->pos[0]);
    char scratch[PATH_MAX] = "";
    if (!strcmp(cmd, "list") ? t2__cli_open_store_or_empty(a->home, 1, &st, scratch, sizeof scratch) != 0
                             : open_store(a, 1, &st) != 0) {
        if (!strcmp(cmd, "list")) fprintf(stderr, "t2exp: %s\n", t2_errmsg());
        return EXIT_STORE;
    }
    int rc = 0, ex = 0;
    char *buf;
    size_t len;
    FILE *out = t2__cli_listing_out(scratch, &buf, &len);
    if (!out) rc = T2_ENOMEM;
    else if (!strcmp(cmd, "list")) rc = t2__store_print_experiments(st, a->fmt, out);
    else if (!trial && !strcmp(cmd, "describe")) rc = t2__store_print_experiment(st, id, a->top, a->fmt, stdout);
    else if (!strcmp(cmd, "trials")) rc = t2__store_print_trials(st, id, a->fmt, stdout);
    else if (!strcmp(cmd, "importance")) rc = t2__print_importance(st, id, a->fmt, stdout);
    else if (lost) ex = cmd_lost_logs(st, id);
    else if (!trial && !strcmp(cmd, "checkpoints")) rc = t2__store_print_checkpoints(st, id, 0, a->all, a->fmt, stdout);
    else if (!trial) rc = t2__store_print_experiment_metrics(st, id, a->kind, a->fmt, stdout);
    else if ((ex = resolve_trial(st, a->pos[0], a->follow && !strcmp(cmd, "logs"), &id)) == 0) {
        if (!strcmp(cmd, "metrics")) rc = t2__store_print_metrics(st, id, a->kind, a->fmt, stdout);
        else if (!strcmp(cmd, "describe")) rc = t2__store_print_trial(st, id, a->fmt, stdout);
        else if (!strcmp(cmd, "checkpoints")) rc = t2__store_print_checkpoints(st, 0, id, a->all, a->fmt, stdout);
        else ex = cmd_logs(st, id, a->follow);
    }
    if (rc) {
        fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
        ex = rc == T2_ENOTFOUND || rc == T2_EINVAL ? EXIT_USAGE
             : rc == T2_ESTATE && !strcmp(cmd, "importance") ? EXIT_FAILED /* a fair question the results cannot answer */
                                                             : EXIT_STORE;
    }
    t2__cli_close_store(st, scratch);
    if (out && (rc = t2__cli_listing_done(out, &buf, &len)) && !ex) {
        fprintf(stderr, "t2exp %s: %s\n", cmd, t2_errmsg());
        ex = EXIT_STORE;
    }
    return ex;
}

/* The commands that live outside this file (commands.h). */
static const t2__command *const OUTSIDE[] = {&t2__command_dashboard, &t2__command_init, &t2__command_plot,
                                             &t2__command_model, NULL};

/* Whether the command trains or evaluates (or, for info, reports the kernel that would): only those
 * need OpenBLAS set up, which costs a second load of the program (about half of a command's start,
 * 0.13 s on a 2-core EPYC VM). The others read the store or a config and start at once. */
static int needs_blas_setup(int argc, char **argv)
{
    int i = 1;
    while (i < argc && argv[i][0] == '-') i += !strcmp(argv[i], "--home") ? 2 : 1;
    if (i >= argc) return 0;
    static const char *const numeric[] = {"create", "resume", "activate", "evaluate", "pipeline", "info", "run-trial"};
    for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++)
        if (!strcmp(argv[i], numeric[k])) return 1;
    return 0;
}

static const char **cli_overrides;
static void free_cli_overrides(void) { free(cli_overrides); }

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], T2__BLAS_PROBE_ARG)) return t2__blas_probe_main();
    if (needs_blas_setup(argc, argv)) {
        /* OpenBLAS reads its settings once, when it loads, so both are set here and the program
         * re-executes itself (every trial and local rank then inherits them):
         * - the thread count: the numeric core runs its own thread pool over single-threaded OpenBLAS
         *   calls; OpenBLAS's own threads would be started (and spin) in every trial forked from here;
         * - the core (kernel set): Debian's OpenBLAS picks weak ones on current CPUs (blas_core.h). */
        int reexec = !getenv("OPENBLAS_NUM_THREADS") && setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
        reexec |= t2__blas_startup();
        if (reexec) {
            execv("/proc/self/exe", argv);
            /* exec failed: carry on with what OpenBLAS loaded rather than not at all */
        }
        char blas_warning[512];
        if (t2_blas_check(blas_warning, sizeof blas_warning) == 0 && blas_warning[0])
            fprintf(stderr, "t2exp: warning: %s\n", blas_warning);
    }
    /* As many --config values as the command line holds: no fixed cap. It lives as long as the
     * process (every command returns straight out of main) and is freed at its exit: a pointer
     * kept only in main's frame was "definitely lost" to valgrind once main had returned. */
    const char **overrides = cli_overrides = malloc((size_t)argc * sizeof *overrides);
    if (!overrides || atexit(free_cli_overrides)) {
        fprintf(stderr, "t2exp: out of memory\n");
        return EXIT_STORE;
    }
    args a = {.fmt = T2__FMT_TABLE, .overrides = overrides, .progress = T2__PROGRESS_AUTO};
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        if (!strcmp(argv[i], "--version")) {
            printf("t2exp %s\n", t2_version());
            return 0;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--home") && i + 1 < argc) {
            a.home = argv[i + 1];
            i += 2;
            continue;
        }
        /* --home=DIR, as each command's own getopt_long takes it (docs/cli.md: --opt=value works) */
        if (!strncmp(argv[i], "--home=", 7)) {
            a.home = argv[i] + 7;
            i++;
            continue;
        }
        if (!strcmp(argv[i], "--")) { /* the end of the global options, as getopt has it */
            i++;
            break;
        }
        {
            char word[200];
            snprintf(word, sizeof word, "%.60s%s; before the command t2exp takes: --home DIR, --help, --version", argv[i],
                     t2__cli_did_you_mean(argv[i], (const char *const[]){"home", "help", "version", NULL}));
            return usage_error(NULL, "unknown option %s", word);
        }
    }
    if (i >= argc) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[i++];
    if (!strcmp(cmd, "run-trial")) {
        /* Internal: one rank of a distributed trial, started by mpirun for the controller. */
        const char *connect = NULL;
        int64_t trial = 0;
        for (int k = i; k + 1 < argc; k++) {
            if (!strcmp(argv[k], "--connect")) connect = argv[k + 1];
            if (!strcmp(argv[k], "--trial")) trial = atoll(argv[k + 1]);
        }
        if (!connect) return usage_error(cmd, "needs --connect HOST:PORT%s", "");
        t2__config_set_lenient(1); /* the controller already accepted the config this rank reads back */
        return t2__remote_main(connect, trial, &argc, &argv);
    }
    int rest = argc - i;
    char **av = argv + i;
    int ex;
    if (!strcmp(cmd, "create")) {
        if ((ex = parse(cmd, rest, av, &a)) || (ex = export_home(&a, cmd))) return ex;
        return cmd_create(&a);
    }
    if (!strcmp(cmd, "info")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return t2__info_print(stdout, a.home, a.fmt == T2__FMT_JSON) ? EXIT_STORE : 0;
    }
    if (!strcmp(cmd, "preview")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_preview(&a);
    }
    if (!strcmp(cmd, "list")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_read(cmd, &a);
    }
    if (!strcmp(cmd, "resume")) {
        if ((ex = parse(cmd, rest, av, &a)) || (ex = export_home(&a, cmd))) return ex;
        return cmd_resume(cmd, &a);
    }
    if (!strcmp(cmd, "evaluate")) {
        if ((ex = parse(cmd, rest, av, &a)) || (ex = export_home(&a, cmd)))
            return ex;
        return cmd_evaluate(&a);
    }
    if (!strcmp(cmd, "pause") || !strcmp(cmd, "kill")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_stop(cmd, &a);
    }
    if (!strcmp(cmd, "activate")) {
        /* Determined's activate: resume, in the background. */
        if ((ex = parse(cmd, rest, av, &a)) || (ex = export_home(&a, cmd))) return ex;
        a.detach = 1;
        return cmd_resume(cmd, &a);
    }
    if (!strcmp(cmd, "follow")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_follow(&a);
    }
    if (!strcmp(cmd, "delete")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_delete(&a);
    }
    if (!strcmp(cmd, "export")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_export(&a);
    }
    if (!strcmp(cmd, "describe") || !strcmp(cmd, "trials") || !strcmp(cmd, "metrics") || !strcmp(cmd, "logs") ||
        !strcmp(cmd, "checkpoints") || !strcmp(cmd, "importance")) {
        if ((ex = parse(cmd, rest, av, &a))) return ex;
        return cmd_read(cmd, &a);
    }
    if (!strcmp(cmd, "pipeline") || !strcmp(cmd, "pipelines")) {
        if ((ex = export_home(&a, cmd))) return ex;
        return !strcmp(cmd, "pipeline") ? t2__cli_pipeline(rest, av, a.home) : t2__cli_pipelines(rest, av, a.home);
    }
    if (!strcmp(cmd, "__complete")) return t2__cli_complete(a.home, rest, av, OUTSIDE);
    for (size_t k = 0; OUTSIDE[k]; k++)
        if (!strcmp(cmd, OUTSIDE[k]->name)) return OUTSIDE[k]->run(a.home, rest + 1, av - 1);
    return usage_error(NULL, "unknown command %s", cmd);
}
