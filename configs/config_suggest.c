/* config_suggest.c — the "did you mean" of an unknown key: the closest key valid at that place, or
 * the same key where it belongs when it was given in another section. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "config_internal.h"

#define KEY_MAX 64 /* keys are short; a longer unknown key is compared on its first 64 bytes */

/* Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions
 * and transpositions of neighbours each cost 1), case-insensitive, '-' equal to '_', so that
 * `max_trails`, `Max_Trials` and `max-trials` are each one step from `max_trials`. Only distances
 * up to max matter: keys whose lengths differ by more are max + 1 at once (every unknown key is
 * compared with every section's keys; the full table made loading a config of many unknown keys,
 * and the config fuzzer, several times slower). */
static size_t distance(const char *a, const char *b, size_t max)
{
    size_t la = strnlen(a, KEY_MAX), lb = strnlen(b, KEY_MAX);
    if ((la > lb ? la - lb : lb - la) > max) return max + 1;
    size_t d[KEY_MAX + 1][KEY_MAX + 1];
    char x[KEY_MAX], y[KEY_MAX];
    for (size_t i = 0; i < la; i++) x[i] = a[i] == '-' ? '_' : (char)tolower((unsigned char)a[i]);
    for (size_t j = 0; j < lb; j++) y[j] = b[j] == '-' ? '_' : (char)tolower((unsigned char)b[j]);
    for (size_t i = 0; i <= la; i++) d[i][0] = i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (x[i - 1] != y[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *t2__cfg_closest(const char *key, const char *const *known)
{
    if (!key || !known) return NULL;
    size_t len = strnlen(key, KEY_MAX);
    /* A typo, not another word: one edit in a short key, two or three in a longer one. */
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3, best = limit + 1;
    const char *pick = NULL;
    for (size_t k = 0; known[k]; k++) {
        size_t dk = distance(key, known[k], limit);
        if (dk < best) {
            best = dk;
            pick = known[k];
        }
    }
    return pick;
}

/* Every section with a fixed set of keys, by its path ("" is the top level). */
static const struct {
    const char *path;
    const char *const *keys;
} SECTIONS[] = {
    {"", t2__cfg_top_keys},
    {"searcher", t2__cfg_searcher_keys},
    {"searcher.pruner", t2__cfg_pruner_keys},
    {"resources", t2__cfg_resources_keys},
    {"checkpoint_storage", t2__cfg_checkpoint_storage_keys},
    {"optimizations", t2__cfg_optimizations_keys},
    {"optimizations.gradient_clipping", t2__cfg_clipping_keys},
    {"reproducibility", t2__cfg_reproducibility_keys},
    {"environment", t2__cfg_environment_keys},
};
#define NSECTIONS (sizeof SECTIONS / sizeof *SECTIONS)

/* The one other section (not parent) holding a key within distance max of key; -1 for none, or for
 * several (`name` and `type` are in many sections: no one of them is the answer). *pick is its key. */
static int other_section(const char *parent, const char *key, size_t max, const char **pick)
{
    int found = -1;
    size_t best = max + 1;
    for (size_t s = 0; s < NSECTIONS; s++) {
        if (!strcmp(SECTIONS[s].path, parent)) continue;
        for (size_t k = 0; SECTIONS[s].keys[k]; k++) {
            size_t d = distance(key, SECTIONS[s].keys[k], max);
            if (d > best || d > max) continue;
            found = d < best ? (int)s : -2; /* a tie between sections: ambiguous */
            best = d;
            *pick = SECTIONS[s].keys[k];
        }
    }
    return found < 0 ? -1 : found;
}

int t2__cfg_suggest(const char *path, const char *const *known, char *buf, size_t size)
{
    const char *dot = strrchr(path, '.'), *key = dot ? dot + 1 : path, *pick = NULL;
    char parent[128];
    size_t plen = dot ? (size_t)(dot - path) : 0, len = strnlen(key, KEY_MAX);
    int in_section = 0, s = -1;
    buf[0] = '\0';
    snprintf(parent, sizeof parent, "%.*s", (int)plen, path);
    for (size_t k = 0; k < NSECTIONS; k++) in_section |= !strcmp(SECTIONS[k].path, parent);
    if (in_section) s = other_section(parent, key, 0, &pick);
    const char *near = s < 0 ? t2__cfg_closest(key, known) : NULL;
    if (s < 0 && !near && in_section) s = other_section(parent, key, len <= 4 ? 1 : len <= 8 ? 2 : 3, &pick);
    if (s >= 0 && !*SECTIONS[s].path) snprintf(buf, size, "'%s' at the top level", pick);
    else if (s >= 0) snprintf(buf, size, "'%s.%s'", SECTIONS[s].path, pick);
    else if (near) snprintf(buf, size, "'%s'", near);
    return buf[0] != '\0';
}

/* Determined keys t2exp takes under another name or form, with what to write instead: a typo's
 * suggestion said nothing useful for them ("searcher.max_steps: did you mean
 * 'resources.max_slots'?" on every pre-0.13 config, probe_K D2; a bare "unknown key" for pbt's
 * functions, D4). */
static const struct {
    const char *path, *hint;
} FORMER[] = {
    {"searcher.max_steps", "Determined 0.12's length in steps; t2exp counts batches: searcher.max_length: {batches: N}, "
                           "N = max_steps x batches_per_step (100 by default)"},
    {"batches_per_step", "Determined 0.12's step; t2exp's lengths are in batches, records or epochs: write "
                         "searcher.max_length, min_validation_period and min_checkpoint_period as {batches: N}"},
    {"searcher.steps_per_round", "Determined 0.12's pbt round in steps; t2exp's is searcher.length_per_round: "
                                 "{batches: N}"},
    {"searcher.target_trial_steps", "Determined 0.12's adaptive length in steps; t2exp's adaptive_asha takes "
                                    "searcher.max_length: {batches: N}"},
    {"searcher.step_budget", "Determined 0.12's adaptive budget; t2exp's adaptive_asha is sized by searcher.max_trials"},
    {"searcher.replace_function", "Determined's pbt replace_function {truncate_fraction: F} is t2exp's "
                                  "searcher.quantile_fraction: F"},
    {"searcher.explore_function", "Determined's pbt explore_function {resample_probability: P, perturb_factor: F} is "
                                  "t2exp's searcher.resample_probability: P and searcher.perturb_factors: [1 - F, 1 + F]"},
    {"searcher.unit", "Determined's custom searcher unit; t2exp takes the length with its unit: searcher.max_length: "
                      "{batches: N} (or records, epochs)"},
};

const char *t2__cfg_former_key(const char *path)
{
    for (size_t k = 0; path && k < sizeof FORMER / sizeof FORMER[0]; k++)
        if (strcmp(path, FORMER[k].path) == 0) return FORMER[k].hint;
    return NULL;
}
