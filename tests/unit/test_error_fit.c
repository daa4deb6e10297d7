/* test_error_fit.c — a message longer than its buffer loses the middles of its longest words first
 * (error.c): a long path must not push the reason out of t2_errmsg(), t2__seterr_text's copy, or a
 * fixed buffer filled by t2__fmt_fit, wherever the reason stands; a text of short words keeps its
 * two ends; a message that fits is unchanged. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "framework/common/internal.h"
#include "configs/value.h"

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), k = strlen(end);
    return n >= k && strcmp(s + n - k, end) == 0;
}

int main(void)
{
    char path[5000];
    memset(path, 'd', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';

    CHECK_RC(t2_seterr(T2_EIO, "cannot open %s: %s", path, "Permission denied"), T2_EIO);
    const char *m = t2_errmsg();
    CHECK(strlen(m) == 1023);
    CHECK(strncmp(m, "cannot open /ddd", 16) == 0);
    CHECK(ends_with(m, "ddd: Permission denied"));
    CHECK(strstr(m, "d...d") != NULL);

    /* The reason in the middle, between two copies of the path (dlerror's way): both paths lose
     * their middles, the words between them stay. */
    CHECK_RC(t2_seterr(T2_EIO, "object %s cannot be loaded (%s: file too short)", path, path), T2_EIO);
    m = t2_errmsg();
    CHECK(strlen(m) == 1023 && strstr(m, "d cannot be loaded (/ddd") && ends_with(m, "ddd: file too short)"));

    char text[3000];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    memcpy(text + sizeof text - 8, ": why?", 6);
    CHECK_RC(t2__seterr_text(T2_EINVAL, text), T2_EINVAL);
    CHECK(strlen(t2_errmsg()) == 1023 && ends_with(t2_errmsg(), ": why?x"));

    char buf[200];
    CHECK(t2__fmt_fit(buf, sizeof buf, "trial %d: %s: %s", 7, path, "no space left") == (int)(strlen(path) + 24));
    CHECK(strlen(buf) == 199 && strncmp(buf, "trial 7: /dd", 12) == 0 && ends_with(buf, "d: no space left"));

    CHECK(t2__fmt_fit(buf, sizeof buf, "short %s", "text") == 10 && strcmp(buf, "short text") == 0);
    CHECK(t2__fmt_fit(buf, 11, "short %s", "text") == 10 && strcmp(buf, "short text") == 0);

    /* Many short words, no long one: the whole text keeps its two ends. */
    char words[1800] = "";
    for (int i = 0; i < 599; i++) strcat(words, i ? " ab" : "ab");
    CHECK(t2__fmt_fit(buf, sizeof buf, "%s: why", words) == (int)strlen(words) + 5);
    CHECK(strlen(buf) == 199 && strncmp(buf, "ab ab", 5) == 0 && strstr(buf, " [...] ") && ends_with(buf, "ab: why"));

    /* Cuts fall between characters: a long path of two-byte letters stays UTF-8 (the text may go
     * out as JSON). */
    char wide[3000] = "cannot open /";
    for (int i = 0; i < 1400; i++) strcat(wide, "\xc3\xa9");
    for (size_t cap = 60; cap < 80; cap++) {
        char out[80];
        t2__fmt_fit(out, cap, "%s: gone", wide);
        CHECK(t2__utf8_invalid_at(out) == (size_t)-1 && ends_with(out, ": gone"));
        char many[2000] = ""; /* short words only: the whole text's middle */
        for (int i = 0; i < 600; i++) strcat(many, i ? " \xc3\xa9" : "\xc3\xa9");
        t2__fmt_fit(out, cap, "%s", many);
        CHECK(t2__utf8_invalid_at(out) == (size_t)-1);
    }
    CHECK_RC(t2_seterr(T2_EIO, "%s: gone", wide), T2_EIO);
    CHECK(t2__utf8_invalid_at(t2_errmsg()) == (size_t)-1);

    /* A status that is no T2_E* code says which value it was. */
    CHECK(strcmp(t2_strerror(-999), "unknown t2exp status -999 (not a T2_E* code)") == 0);

    char tiny[16]; /* no room for both ends and a mark: the head, as snprintf */
    CHECK(t2__fmt_fit(tiny, sizeof tiny, "%s", path) == (int)strlen(path));
    CHECK(strlen(tiny) == 15 && strncmp(tiny, "/ddd", 4) == 0);
    return check_report("test_error_fit");
}
