/* error.c — per-thread error detail behind t2_errmsg(). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "t2exp/error.h"

static _Thread_local char errbuf[1024];

const char *t2_errmsg(void) { return errbuf; }

void t2_clearerr(void) { errbuf[0] = '\0'; }

static int is_cont(char c) { return ((unsigned char)c & 0xC0) == 0x80; }

/* The text's length once every word (a run without spaces) longer than limit keeps only its first
 * and last bytes around "...", limit bytes in all; with out, also writes it there. */
static size_t shortened(const char *text, size_t n, size_t limit, char *out)
{
    size_t len = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && text[j] != ' ') j++;
        size_t w = j - i, head = w, tail = 0;
        if (w > limit) {
            head = (limit - 3) / 2, tail = limit - 3 - head;
            /* Cuts between characters, never inside one: the text may go out as JSON, which must
             * be UTF-8 (a continuation byte is 10xxxxxx). */
            while (head > 0 && is_cont(text[i + head])) head--;
            while (tail > 0 && is_cont(text[j - tail])) tail--;
        }
        if (out) {
            memcpy(out + len, text + i, head);
            if (w > limit) memcpy(out + len + head, "...", 3), memcpy(out + len + head + 3, text + j - tail, tail);
        }
        len += w > limit ? head + 3 + tail : w;
        if (j < n) {
            if (out) out[len] = ' ';
            len++;
        }
        i = j + 1;
    }
    return len;
}

/* Copies text (n bytes) into dst of cap bytes. A text that does not fit loses the middles of its
 * longest words first (paths, mostly: "cannot open /a/very/lo...ry/t2exp.db: Permission denied"),
 * so that the reason, wherever it stands, stays; if that is not enough, the middle of the whole. */
static void fit(char *dst, size_t cap, const char *text, size_t n)
{
    if (cap == 0) return;
    if (n < cap) {
        memmove(dst, text, n);
        dst[n] = '\0';
        return;
    }
    char *tmp = malloc(n + 1);
    if (tmp) {
        size_t lo = 16, hi = n; /* the longest word limit that fits: shortened() grows with it */
        while (lo < hi) {
            size_t mid = lo + (hi - lo + 1) / 2;
            if (shortened(text, n, mid, NULL) < cap) lo = mid;
            else hi = mid - 1;
        }
        n = shortened(text, n, lo, tmp);
        text = tmp;
    }
    if (n < cap) {
        memcpy(dst, text, n);
        dst[n] = '\0';
    } else { /* still too long (many words), or out of memory: keep both ends of the whole */
        static const char mark[] = " [...] ";
        size_t m = sizeof mark - 1, keep = cap > m + 1 ? cap - 1 - m : 0, head = keep / 2, tail = keep - head;
        if (keep == 0) head = cap - 1, tail = 0;
        while (head > 0 && is_cont(text[head])) head--;
        while (tail > 0 && is_cont(text[n - tail])) tail--;
        memmove(dst, text, head);
        if (keep) memcpy(dst + head, mark, m), memmove(dst + head + m, text + n - tail, tail);
        dst[keep ? head + m + tail : head] = '\0';
    }
    free(tmp);
}

static int vfmt_fit(char *dst, size_t cap, const char *fmt, va_list ap)
{
    if (cap == 0) return 0;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(dst, cap, fmt, ap);
    if (n >= 0 && (size_t)n >= cap) {
        char *full = malloc((size_t)n + 1);
        if (full && vsnprintf(full, (size_t)n + 1, fmt, again) == n) fit(dst, cap, full, (size_t)n);
        free(full); /* out of memory: the head vsnprintf wrote stays */
    }
    va_end(again);
    return n;
}

int t2__fmt_fit(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfmt_fit(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

int t2_seterr(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfmt_fit(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}

int t2__seterr_text(int code, const char *text)
{
    fit(errbuf, sizeof errbuf, text, strlen(text));
    return code;
}

const char *t2_strerror(int code)
{
    switch (code) {
    case T2_OK: return "T2_OK: success";
    case T2_EINVAL: return "T2_EINVAL: invalid argument";
    case T2_ENOMEM: return "T2_ENOMEM: out of memory";
    case T2_EIO: return "T2_EIO: input/output error";
    case T2_ESHAPE: return "T2_ESHAPE: shape mismatch";
    case T2_EFORMAT: return "T2_EFORMAT: malformed data";
    case T2_ENOTFOUND: return "T2_ENOTFOUND: not found";
    case T2_ESTATE: return "T2_ESTATE: invalid state";
    case T2_ENUMERIC: return "T2_ENUMERIC: non-finite value";
    case T2_ETRIAL: return "T2_ETRIAL: trial reported failure";
    case T2_EUNSUPPORTED: return "T2_EUNSUPPORTED: not supported by this build";
    case T2_ESTOPPED: return "T2_ESTOPPED: stopped";
    case T2_EHPARAM: return "T2_EHPARAM: invalid hyperparameters";
    default: {
        static _Thread_local char unknown[64]; /* the value is what tells a user what went wrong */
        snprintf(unknown, sizeof unknown, "unknown t2exp status %d (not a T2_E* code)", code);
        return unknown;
    }
    }
}
