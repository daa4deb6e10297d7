/* config_suggest.c — the "did you mean" of an unknown key: the closest key valid at that place. */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include <ctype.h>
#include <string.h>
#include "config_internal.h"

#define KEY_MAX 64 /* keys are short; a longer unknown key is compared on its first 64 bytes */

/* Damerau-Levenshtein distance (optimal string alignment: insertions, deletions, substitutions
 * and transpositions of neighbours each cost 1), case-insensitive, '-' equal to '_', so that
 * `max_trails`, `Max_Trials` and `max-trials` are each one step from `max_trials`. */
static size_t distance(const char *a, const char *b)
{
    size_t la = strnlen(a, KEY_MAX), lb = strnlen(b, KEY_MAX);
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
        size_t dk = distance(key, known[k]);
        if (dk < best) {
            best = dk;
            pick = known[k];
        }
    }
    return pick;
}
