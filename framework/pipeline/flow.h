/* flow.h — a pipeline's flow file as a typed, validated graph of stages (internal).
 *
 * t2__flow_load reads the YAML (the config loader's parser, so every node keeps its
 * file:line:column), checks every key and value, builds the graph (after: edges plus an output of
 * one stage being an input of another), refuses cycles, and checks every `${stage.field}`
 * reference (known stage, known field, an experiment stage, an ancestor of the stage that uses
 * it). All problems found are reported in one go: t2_errmsg() holds the first, t2__flow_errors()
 * lists them all. Nothing here touches the store or runs anything: the executor (run.c) and
 * `pipeline status` build on it. */
#ifndef T2_PIPELINE_FLOW_H
#define T2_PIPELINE_FLOW_H

#include <stddef.h>
#include <stdint.h>
#include "configs/value.h"
#include "configs/ytree.h"

/* Hostile-input bounds: a flow is a short hand-written file. */
#define T2__FLOW_MAX_BYTES (1 << 20)   /* the file */
#define T2__FLOW_MAX_STAGES 1000
#define T2__FLOW_MAX_LIST 10000        /* run argv, after, inputs, outputs of one stage */
#define T2__FLOW_MAX_NAME 128          /* stage and flow names */
#define T2__FLOW_MAX_ERRORS 50
#define T2__FLOW_MAX_SLOTS 4096

typedef enum { T2__STAGE_COMMAND, T2__STAGE_EXPERIMENT } t2__stage_kind;

/* The fields a `${stage.FIELD}` reference may name (experiment stages only). */
typedef enum {
    T2__REF_EXPERIMENT_ID,
    T2__REF_BEST_HPARAMS,
    T2__REF_BEST_METRIC,
    T2__REF_BEST_CHECKPOINT,
} t2__ref_field;

typedef struct t2__flow_path {
    char *text;  /* as written */
    char *abs;   /* normalised absolute path (relative ones against the flow file's directory) */
    int dataset; /* outputs: `kind: dataset` (a t2exp dataset cache file) */
    t2__ymark mark;
} t2__flow_path;

typedef struct t2__flow_stage {
    char *name;
    t2__ymark mark; /* of its key under stages: */
    t2__stage_kind kind;
    /* command */
    char **argv; /* run: (shell: one element, the sh -c text) */
    size_t argc;
    int shell;
    int64_t slots;  /* resources.slots; 0: not given (1 slot, no mpirun) */
    char *hostfile; /* resources.hostfile resolved like a path, or NULL */
    /* experiment */
    char *config;   /* absolute */
    char *trial;    /* absolute */
    t2__val *hparams; /* experiment.hyperparameters as written (strings may hold ${...}); or NULL */
    /* both */
    t2__flow_path *inputs, *outputs;
    size_t ninputs, noutputs;
    char *def_json; /* the canonical definition: what the cache hashes as "the definition" */
    /* graph */
    size_t *deps;   /* direct predecessors (indices), no duplicates */
    size_t ndeps;
    size_t *refs;   /* stages this one's ${...} references name (indices, no duplicates) */
    size_t nrefs;
} t2__flow_stage;

typedef struct t2__flow {
    char *path; /* as given */
    char *dir;  /* the flow file's directory, absolute: cwd of commands, base of relative paths */
    char *name;
    t2__flow_stage *stages;
    size_t n;
    size_t *order; /* a topological order (dependencies first, ties in file order) */
} t2__flow;

/* Reads and validates the flow file. T2_EFORMAT for YAML syntax, T2_EINVAL for everything the
 * schema or the graph refuses (all problems, see t2__flow_errors), T2_ENOTFOUND/T2_EIO for the
 * file, T2_ENOMEM. */
int t2__flow_load(const char *path, t2__flow **out);
/* The same from text; name stands for the file in messages, dir is the base of relative paths. */
int t2__flow_load_string(const char *text, size_t len, const char *name, const char *dir, t2__flow **out);
void t2__flow_free(t2__flow *f);

/* Every problem the last failed load on this thread found (n of them; *more not listed). */
const char *const *t2__flow_errors(size_t *n, size_t *more);

/* Index of a stage by name, or -1. */
long t2__flow_find(const t2__flow *f, const char *name);

/* ---- graph (flow_graph.c, pure) --------------------------------------------------------- */

/* mark[i] = 1 for every stage reachable from a stage whose seed[i] is set (the seeds included). */
void t2__flow_descendants(const t2__flow *f, const unsigned char *seed, unsigned char *mark);
/* 1 when a is a (transitive) predecessor of b. */
int t2__flow_is_ancestor(const t2__flow *f, size_t a, size_t b);

/* ---- references (flow_refs.c) ----------------------------------------------------------- */

/* One occurrence of ${stage.field} in a text. */
typedef struct t2__ref {
    size_t start, end;  /* byte span of "${...}" in the text */
    char stage[T2__FLOW_MAX_NAME + 1];
    t2__ref_field field;
} t2__ref;

/* Finds the next reference in s at or after *pos. Returns 1 and fills r (advancing *pos past it),
 * 0 when there is none, or T2_EINVAL with a message (no "where": the caller adds it) for a
 * malformed one: "${" without "}", an empty or badly formed name, an unknown field. "$${" is an
 * escaped, literal "${" and is not a reference. */
int t2__ref_next(const char *s, size_t *pos, t2__ref *r);

const char *t2__ref_field_name(t2__ref_field f); /* "best.hparams", ... */

/* What references resolve to: one stage's results, as recorded after it ran (result JSON
 * {"experiment_id": N, "best": {"hparams": {...}, "metric": x, "checkpoint": "uuid"}}). */
typedef const t2__val *(*t2__ref_lookup)(void *ud, size_t stage);

/* The value of one reference, as a new t2__val (hparams a map, metric a double, checkpoint a
 * string, experiment_id an int). T2_ENOTFOUND naming the stage and field when the result lacks
 * it (no trial validated, no checkpoint). */
int t2__ref_value(const t2__flow *f, const t2__ref *r, t2__ref_lookup look, void *ud, t2__val **out);

/* s with every reference replaced by its value as text (JSON for hparams, %.17g for the metric)
 * and "$${" by "${". *out malloc'd. */
int t2__ref_subst(const t2__flow *f, const char *s, t2__ref_lookup look, void *ud, char **out);

/* A stage's resolved values: argv with references substituted (*argv: argc strings, free with
 * t2__strv_free; for a shell: true command this pasted text is only hashed, what runs is
 * t2__shell_subst's) and, for experiment stages, the hyperparameters (a map, NULL when none): a
 * string that is exactly one reference becomes that value (a map for best.hparams — the whole
 * `hyperparameters:` may be one), other strings are substituted as text. */
int t2__flow_resolve(const t2__flow *f, size_t stage, t2__ref_lookup look, void *ud, char ***argv,
                     t2__val **hparams);
void t2__strv_free(char **v, size_t n);

/* ---- references in a shell: true command (flow_shell.c) -------------------------------- */

/* Where a reference stands in a shell command line, which decides how its variable is written. */
typedef enum {
    T2__SH_UNQUOTED, /* "${T2EXP_REF_n}" */
    T2__SH_DQUOTE,   /* inside "...": ${T2EXP_REF_n} */
    T2__SH_SQUOTE,   /* inside '...': '"${T2EXP_REF_n}"' */
    T2__SH_HEREDOC,  /* in a here-document body with an unquoted delimiter: ${T2EXP_REF_n} */
} t2__sh_place;

/* A shell: true command with its references resolved: the sh -c text, in which the n-th distinct
 * reference is an expansion of T2EXP_REF_n quoted for its place, and the environment entries
 * that carry the values (env[k] = "T2EXP_REF_<k+1>=VALUE"; ref[k] = "${stage.field}"). */
typedef struct t2__shell_cmd {
    char *text;
    char **env;
    char **ref;
    size_t n;
} t2__shell_cmd;

/* 0 when every reference in the shell command s can be passed exactly; else T2_EINVAL with a
 * message naming the reference and why (inside `...`, $((...)), a shell ${...}, a here-document
 * with a quoted delimiter, after a backslash, ...), or the error of a malformed reference. */
int t2__shell_refs_check(const char *s);
/* Resolves the references of the shell command s (see t2__shell_cmd); "$${" becomes "${". out is
 * empty on error (a refused place, a reference without a value, T2_ENOMEM). */
int t2__shell_subst(const t2__flow *f, const char *s, t2__ref_lookup look, void *ud, t2__shell_cmd *out);
void t2__shell_cmd_free(t2__shell_cmd *c);

#endif
