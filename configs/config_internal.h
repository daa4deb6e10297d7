/* config_internal.h — helpers shared by the config loader's files (internal to configs/).
 *
 * Every typed getter reads one YAML node, and on a mismatch sets the error
 * `FILE:LINE:COL: PATH: expected ..., got ...` (T2_EINVAL) at that node. A null node (`key:` or
 * `key: ~`) leaves *out untouched and returns T2_OK, which is how defaults survive an explicit
 * null — Determined's schema allows null for every optional key too. */
#ifndef T2_CONFIGS_CONFIG_INTERNAL_H
#define T2_CONFIGS_CONFIG_INTERNAL_H

#include <stdint.h>
#include "config.h"
#include "ytree.h"

#define T2__PATH_MAX 512

/* T2_EINVAL with "WHERE: PATH: problem" (or "WHERE: problem" when path is empty). */
int t2__cfg_err(const t2__ymark *m, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Where an error that two values cause together is placed: at the one a --config override set
 * (line 0: the user has just typed it, and the file's position would point at a value they did
 * not change), else at a. Returns a or b. */
const t2__ymark *t2__cfg_blame(const t2__ymark *a, const t2__ymark *b);

/* Where a value is, for t2__cfg_blame: the first place inside it that an override set (`--config
 * searcher.max_length.batches=7` changes a map of the file), else its own mark. */
const t2__ymark *t2__cfg_where(const t2__ynode *n);

/* The node at a dotted path of maps under root ("resources.slots_per_trial"), or NULL. */
const t2__ynode *t2__ypath(const t2__ynode *root, const char *path);

/* t2__cfg_blame of a and the value at path under root (a when there is none): for an error about
 * one value that another key decides (the searcher's name, the slots), placed at that key when an
 * override set it. */
const t2__ymark *t2__cfg_blame_path(const t2__ymark *a, const t2__ynode *root, const char *path);

/* Appends "WHERE: message" to cfg->warnings. T2_ENOMEM only. */
int t2__cfg_warn(t2__config *cfg, const t2__ymark *m, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A key nobody reads at path (its last segment is the key); known[] (NULL-terminated, may be NULL)
 * are the keys valid there. Strict: records the error "WHERE: PATH: unknown key (did you mean
 * 'KNOWN'?)" (t2__cfg_collect); lenient: the warning "WHERE: unknown key 'PATH' (ignored; did you
 * mean 'KNOWN'?)". The suggestion is left out when no known key is close. T2_ENOMEM only. */
int t2__cfg_unknown(t2__config *cfg, const t2__ymark *kmark, const char *path, const char *const *known);

/* The known key closest to key by edit distance, when it is close enough to be a typo; else NULL. */
const char *t2__cfg_closest(const char *key, const char *const *known);

/* The keys of each section (NULL-terminated), read where the section is: what its own unknown keys
 * are compared with, and what t2__cfg_suggest looks through for a key given in the wrong place. */
extern const char *const t2__cfg_top_keys[];             /* config.c */
extern const char *const t2__cfg_searcher_keys[];        /* config_searcher.c */
extern const char *const t2__cfg_pruner_keys[];          /* config_pruner.c */
extern const char *const t2__cfg_resources_keys[];       /* config_sections.c, and the three below */
extern const char *const t2__cfg_checkpoint_storage_keys[];
extern const char *const t2__cfg_optimizations_keys[];
extern const char *const t2__cfg_clipping_keys[];
extern const char *const t2__cfg_reproducibility_keys[];
extern const char *const t2__cfg_environment_keys[];     /* config_environment.c */

/* What "did you mean" names for an unknown key at path (its last segment is the key) among known[]
 * (the keys valid there): the key in another section when exactly one other section has it (top-level
 * `max_trials` is searcher's; `searcher.min_validation_period` is top-level), else the closest of
 * known[], else the closest key of one other section. Written to buf as 'searcher.max_trials', or
 * 'min_validation_period' at the top level; 0 (buf "") when nothing fits. Sections are looked through
 * only for a key of a section (not inside hyperparameters, which are the user's names). */
int t2__cfg_suggest(const char *path, const char *const *known, char *buf, size_t size);
/* What to write instead of a Determined key t2exp takes under another name or form (pre-0.13
 * steps, pbt's functions, a custom searcher's unit), or NULL. */
const char *t2__cfg_former_key(const char *path);

/* Lets the load go on after a schema problem so that one run reports every one: for rc T2_EINVAL
 * the message t2_errmsg() holds is kept in cfg->errors (past T2__CONFIG_MAX_ERRORS only counted)
 * and T2_OK returned; any other rc (T2_ENOMEM) is returned as it is. */
int t2__cfg_collect(t2__config *cfg, int rc);

/* parent + "." + key (or just key at the top), truncated to size. */
void t2__path_join(char *out, size_t size, const char *parent, const char *key);

int t2__ynull(const t2__ynode *n); /* a plain null scalar */

/* Describes a node for "got ...": a map, a list, null, 12, "ten", the string "10". */
const char *t2__ydesc(const t2__ynode *n, char *buf, size_t size);

/* An integer >= min (min 1: "a positive integer", 0: "a non-negative integer"). */
int t2__get_int(const t2__ynode *n, const char *path, int64_t min, int64_t *out);
/* A finite number (int or float). */
int t2__get_number(const t2__ynode *n, const char *path, double *out);
int t2__get_bool(const t2__ynode *n, const char *path, int *out);
/* Any scalar, as its text (`name: 2024` is the name "2024"); replaces and frees *out. */
int t2__get_string(const t2__ynode *n, const char *path, char **out);
/* " (did you mean 'NAME'?)" into buf when scalar n is one typo from one of names[] (NULL-terminated;
 * t2__cfg_closest), else "": what every error about a value that must be one of a few words adds,
 * as an unknown key's error does. Returns buf. */
const char *t2__cfg_value_hint(const t2__ynode *n, const char *const *names, char *buf, size_t size);
/* One of names[] (NULL-terminated); *out is its index. A near miss gets t2__cfg_value_hint's hint. */
int t2__get_enum(const t2__ynode *n, const char *path, const char *const *names, int *out);
/* {batches|records|epochs: N} with exactly one unit; N >= 1, or >= 0 when allow_zero; at most
 * T2__MAX_LENGTH batches or records, T2__MAX_EPOCHS epochs. */
int t2__get_length(const t2__ynode *n, const char *path, int allow_zero, t2__length *out);
/* A map (for sections); T2_EINVAL "expected a map" otherwise. Null is not accepted here. */
int t2__want_map(const t2__ynode *n, const char *path);

/* A required key is absent: "WHERE(kmark of the section): PATH.KEY: missing required key". */
int t2__cfg_missing(const t2__ymark *kmark, const char *path, const char *key);

/* The same, for a key missing from map, adding " (is 'KEY' at line L, column C a typo of it?)" when
 * a key of map is one typo away (in lenient mode that key is only a warning, which a failed load
 * never shows), then note (may be NULL). */
int t2__cfg_missing_in(const t2__ynode *map, const t2__ymark *kmark, const char *path, const char *key,
                       const char *note);

/* A key of a known section that t2exp accepts for compatibility but does not act on. */
int t2__cfg_ignored(t2__config *cfg, const t2__ymark *kmark, const char *path, const char *why);

/* Sections (the searcher's in config_searcher.c, the others in config_sections.c). Each reads
 * one top-level value into cfg; kmark is where the section's key is (for "missing required key"
 * errors). */
int t2__cfg_searcher(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark);
int t2__cfg_resources(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark);
int t2__cfg_checkpoint_storage(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark);
int t2__cfg_optimizations(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark);
int t2__cfg_reproducibility(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark);
int t2__cfg_environment(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark); /* config_environment.c */

/* hyperparameters: (config_hparams.c). _parse reads the space into cfg->hparams; _check runs after
 * every section is read and checks the space against the searcher (grid needs counts) and resources
 * (global_batch_size divisible by slots_per_trial). n is NULL when the section is absent; kmark
 * then places the "missing global_batch_size" error. root is the whole document: an error that the
 * searcher's name or the slots cause is placed at them when an override set them. */
int t2__cfg_hparams_parse(t2__config *cfg, const t2__ynode *n);
int t2__cfg_hparams_check(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, const t2__ynode *root);
/* The smallest global_batch_size the search can give a trial (a constant, an int range's minval, a
 * categorical's least value); 0 when it is not a positive integer everywhere (already an error). */
int64_t t2__cfg_min_batch(const t2__config *cfg);
/* searcher.points_to_evaluate of the searcher map (NULL: none) checked against the parsed space
 * into cfg->searcher.points (config_points.c). */
int t2__cfg_points(t2__config *cfg, const t2__ynode *searcher);
/* searcher.pruner (config_pruner.c): _parse reads its map (or a bare name) at n into
 * cfg->searcher.pruner; _check runs once every section is read, since min_validation_period (which
 * the pruner needs: it compares trials at their validations) may come after the searcher. */
int t2__cfg_pruner_parse(t2__config *cfg, const t2__ynode *n, const t2__ymark *kmark, const char *path);
int t2__cfg_pruner_check(t2__config *cfg, const t2__ynode *searcher);

/* Grids larger than this are refused at load time: a typo in a count, not a search. */
#define T2__GRID_MAX_POINTS T2__MAX_TRIALS

#endif
