/* home_hint.c — the `--home DIR` of the commands t2exp tells its user to run.
 *
 * Why: a hint such as "follow with: t2exp follow 3" after `create --detach --home DIR` found no
 * experiment 3 when typed into a plain shell (probe_M): the home was only on the command line.
 * Where the home came from T2EXP_HOME or the default, the plain command finds it and nothing is
 * added. One process-wide text, set by the CLI before anything prints, as --lenient is. */
#include <stdio.h>
#include <string.h>
#include "internal.h"

static char hint[4200]; /* " --home " + a PATH_MAX path quoted (4 bytes a quote at worst) */

/* A byte a shell leaves alone unquoted: anything else makes the path single-quoted. */
static int plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("_./-+,:@%=", c);
}

void t2__hint_set_home(const char *dir)
{
    hint[0] = '\0';
    if (!dir || !*dir) return;
    int quote = 0;
    for (const char *p = dir; *p; p++) quote |= !plain(*p);
    size_t n = (size_t)snprintf(hint, sizeof hint, " --home %s", quote ? "'" : "");
    const char *p = dir;
    for (; *p && n + 6 < sizeof hint; p++) {
        if (*p == '\'') { /* 'it'\''s' */
            memcpy(hint + n, "'\\''", 4);
            n += 4;
        } else {
            hint[n++] = *p;
        }
    }
    if (*p) { /* too long to show whole: better no --home than a wrong one */
        hint[0] = '\0';
        return;
    }
    if (quote) hint[n++] = '\'';
    hint[n] = '\0';
}

const char *t2__hint_home(void) { return hint; }
