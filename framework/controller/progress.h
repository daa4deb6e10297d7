/* progress.h — the experiment's progress display (internal): a live multi-line view on a
 * terminal (overall line plus one line per running trial), plain periodic lines otherwise. */
#ifndef T2_CONTROLLER_PROGRESS_H
#define T2_CONTROLLER_PROGRESS_H

#include <stdint.h>
#include <stdio.h>
#include "controller.h"

typedef struct t2__progress_trial {
    int64_t exp, ordinal;    /* shown as EXP.N, as every controller line names a trial (ctl.h) */
    int64_t batches, target; /* target <= 0: unknown yet */
    double batches_per_s;
    double loss;             /* latest training "loss" (NAN if not reported) */
    double metric;           /* latest validation value of the searcher metric (NAN if none) */
} t2__progress_trial;

typedef struct t2__progress {
    FILE *out;
    int tty, quiet;
    int lines;               /* lines drawn last time (tty), to move back over them */
    double last_plain;       /* time of the last plain report */
    const char *metric;
} t2__progress;

void t2__progress_init(t2__progress *p, t2__progress_mode mode, FILE *out, const char *metric);

/* Redraws (tty) or, every 10 s, prints plain lines. done/total trials, best (NAN: none). */
void t2__progress_update(t2__progress *p, double now, int64_t done, int64_t total, double best,
                         const t2__progress_trial *running, int nrunning);

/* Prints a one-off event line ("trial 2.3 completed ...") above the live view. */
void t2__progress_event(t2__progress *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints one line of create's and resume's own output (ended by a newline) with every control
 * character in the formatted text made printable (t2__store_printable): a name, a path or an
 * error message can hold user text. */
void t2__progress_line(FILE *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clears the live view before the final summary. */
void t2__progress_finish(t2__progress *p);

#endif
