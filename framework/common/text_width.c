/* text_width.c — how many terminal columns a UTF-8 text takes, for the aligned tables.
 *
 * Why: the tables padded by bytes, then by code points; a CJK name or an emoji takes two columns
 * and a combining accent none, so every row with one shifted the columns after it (probe_J: lines
 * of 130, 131 and 134 columns in one table). The widths are glibc's wcwidth (its Unicode tables)
 * under the built-in C.UTF-8 locale, taken for this thread only (uselocale), so the program's own
 * locale, which the CLI never sets, stays as it is. Where that locale is missing, a code point is a
 * column, as before. */
#define _XOPEN_SOURCE 700
#include <locale.h>
#include <pthread.h>
#include <string.h>
#include <wchar.h>
#include "internal.h"

static locale_t utf8;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void open_utf8(void)
{
    utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (!utf8) utf8 = newlocale(LC_CTYPE_MASK, "C.utf8", (locale_t)0);
}

static size_t code_points(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

size_t t2__text_width(const char *s)
{
    pthread_once(&utf8_once, open_utf8);
    if (!utf8) return code_points(s);
    locale_t was = uselocale(utf8);
    size_t w = 0, left = strlen(s);
    mbstate_t st;
    memset(&st, 0, sizeof st);
    while (left) {
        wchar_t c;
        size_t n = mbrtowc(&c, s, left, &st);
        if (n == (size_t)-1 || n == (size_t)-2) { /* a byte that is no UTF-8: one column (shown as it comes) */
            memset(&st, 0, sizeof st);
            n = 1;
            w++;
        } else {
            if (n == 0) break;
            int cw = wcwidth(c);
            w += cw < 0 ? 1 : (size_t)cw; /* controls are spaces by then (t2__store_printable) */
        }
        s += n;
        left -= n;
    }
    uselocale(was);
    return w;
}
