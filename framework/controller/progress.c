/* progress.c — drawing the progress view. On a terminal the view is redrawn in place with ANSI
 * cursor movement; into a file or pipe it becomes a plain line per running trial every 10 s, so
 * logs stay readable. Every line passes through t2__store_printable first: names, metrics and a
 * trial's messages are user text, and only our own escape sequences may reach the terminal. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include "framework/store/store.h"
#include "progress.h"

/* Formats one line, makes it printable and writes it without its end (the caller adds one). */
static void put_line(FILE *out, const char *fmt, va_list ap)
{
    char small[512], *buf = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)) != NULL) vsnprintf(buf, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!buf) buf = small; /* out of memory: the truncated line is still a safe one */
    if (n > 0) {
        size_t len = buf == small && (size_t)n >= sizeof small ? sizeof small - 1 : (size_t)n;
        t2__store_printable(buf, len);
        fwrite(buf, 1, len, out);
    }
    if (buf != small) free(buf);
}

void t2__progress_line(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

/* put_line with a printf-style argument list, for the view's own lines. */
static void put(FILE *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line(out, fmt, ap);
    va_end(ap);
}

void t2__progress_init(t2__progress *p, t2__progress_mode mode, FILE *out, const char *metric)
{
    p->out = out;
    p->quiet = mode == T2__PROGRESS_QUIET;
    p->tty = mode == T2__PROGRESS_TTY || (mode == T2__PROGRESS_AUTO && isatty(fileno(out)));
    p->lines = 0;
    p->last_plain = 0.0;
    p->metric = metric;
}

static void clear_view(t2__progress *p)
{
    if (!p->tty || p->lines == 0) return;
    fprintf(p->out, "\r\033[%dA\033[J", p->lines);
    p->lines = 0;
}

static void bar(char *buf, int width, double frac)
{
    int fill = (int)(frac * width + 0.5);
    if (fill < 0) fill = 0;
    if (fill > width) fill = width;
    for (int i = 0; i < width; i++) buf[i] = i < fill ? '#' : '.';
    buf[width] = '\0';
}

static void trial_line(t2__progress *p, const t2__progress_trial *t)
{
    char b[32], name[48];
    double frac = t->target > 0 ? (double)t->batches / (double)t->target : 0.0;
    bar(b, 20, frac);
    snprintf(name, sizeof name, "%lld.%lld", (long long)t->exp, (long long)t->ordinal);
    fprintf(p->out, "  trial %-7s [%s] %lld/%lld batches  %.1f b/s", name, b, (long long)t->batches,
            (long long)t->target, t->batches_per_s);
    if (!isnan(t->loss)) fprintf(p->out, "  loss %.4f", t->loss);
    if (!isnan(t->metric)) put(p->out, "  %s %.4f", p->metric, t->metric);
    fprintf(p->out, p->tty ? "\033[K\n" : "\n");
}

void t2__progress_update(t2__progress *p, double now, int64_t done, int64_t total, double best,
                         const t2__progress_trial *running, int nrunning)
{
    if (p->quiet) return;
    if (!p->tty) {
        if (now - p->last_plain < 10.0) return;
        p->last_plain = now;
    }
    clear_view(p);
    char b[32];
    bar(b, 30, total > 0 ? (double)done / (double)total : 0.0);
    fprintf(p->out, "trials [%s] %lld/%lld done, %d running", b, (long long)done, (long long)total, nrunning);
    if (!isnan(best)) put(p->out, ", best %s %.4f", p->metric, best);
    fprintf(p->out, p->tty ? "\033[K\n" : "\n");
    for (int i = 0; i < nrunning; i++) trial_line(p, &running[i]);
    if (p->tty) p->lines = 1 + nrunning;
    fflush(p->out);
}

void t2__progress_event(t2__progress *p, const char *fmt, ...)
{
    if (p->quiet) return;
    clear_view(p);
    va_list ap;
    va_start(ap, fmt);
    put_line(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
    if (p->tty) p->last_plain = 0.0; /* redraw the live view right after an event */
}

void t2__progress_finish(t2__progress *p)
{
    if (!p->quiet) clear_view(p);
    fflush(p->out);
}
