/* test_config_json.c — the t2__val tree and its JSON: exact writer output, round trips of
 * doubles and int64 extremes, reader errors with their byte offsets. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "t2exp/rng.h"
#include "../../configs/value.h" /* configs/ is not on the test include path */

static char *to_json(const t2__val *v)
{
    char *s = NULL;
    size_t len = 0;
    if (t2__val_to_json(v, &s, &len)) {
        fprintf(stderr, "to_json: %s\n", t2_errmsg());
        check_failures++;
        return NULL;
    }
    CHECK(len == strlen(s));
    return s;
}

static void test_tree(void)
{
    t2__val *m = t2__val_map();
    CHECK_OK(t2__val_map_set(m, "b", t2__val_int(1)));
    CHECK_OK(t2__val_map_set(m, "a", t2__val_list()));
    CHECK_OK(t2__val_list_append(t2__val_map_get(m, "a"), t2__val_string("x")));
    CHECK_OK(t2__val_list_append(t2__val_map_get(m, "a"), t2__val_bool(1)));
    CHECK_OK(t2__val_map_set(m, "b", t2__val_double(2.5))); /* replaced in place: order kept */
    CHECK_OK(t2__val_set_path(m, "c.d.e", t2__val_null()));
    CHECK_OK(t2__val_set_path(m, "c.f", t2__val_stringn("ab\0cd", 2)));
    char *s = to_json(m);
    CHECK_STR(s, "{\"b\":2.5,\"a\":[\"x\",true],\"c\":{\"d\":{\"e\":null},\"f\":\"ab\"}}");
    free(s);

    CHECK(t2__val_lookup(m, "a.1")->kind == T2__VAL_BOOL);
    CHECK(t2__val_lookup(m, "a.2") == NULL && t2__val_lookup(m, "a.x") == NULL);
    CHECK(t2__val_lookup(m, "c.d.e")->kind == T2__VAL_NULL);
    CHECK(t2__val_lookup(m, "") == m && t2__val_lookup(m, "zz") == NULL && t2__val_lookup(NULL, "a") == NULL);
    CHECK_RC(t2__val_set_path(m, "b.x", t2__val_int(1)), T2_EINVAL); /* b is not a map */
    CHECK_RC(t2__val_set_path(m, "", t2__val_int(1)), T2_EINVAL);
    CHECK_RC(t2__val_set_path(m, "a..b", t2__val_int(1)), T2_EINVAL);
    CHECK_RC(t2__val_list_append(m, t2__val_int(1)), T2_EINVAL);     /* not a list; the item is freed */
    CHECK_RC(t2__val_list_append(t2__val_map_get(m, "a"), NULL), T2_ENOMEM);
    CHECK_RC(t2__val_map_set(t2__val_map_get(m, "a"), "k", t2__val_int(1)), T2_EINVAL);
    CHECK(t2__val_map_get(t2__val_map_get(m, "a"), "k") == NULL);

    double d = 0;
    CHECK_OK(t2__val_as_double(t2__val_map_get(m, "b"), &d));
    CHECK(d == 2.5);
    CHECK_RC(t2__val_as_double(t2__val_map_get(m, "a"), &d), T2_EINVAL);

    /* Copies are equal; maps compare as key sets; kinds must match. */
    t2__val *c = t2__val_copy(m);
    CHECK(t2__val_equal(m, c));
    t2__val *r = t2__val_map();
    CHECK_OK(t2__val_map_set(r, "x", t2__val_int(1)));
    CHECK_OK(t2__val_map_set(r, "y", t2__val_int(2)));
    t2__val *q = t2__val_map();
    CHECK_OK(t2__val_map_set(q, "y", t2__val_int(2)));
    CHECK_OK(t2__val_map_set(q, "x", t2__val_int(1)));
    CHECK(t2__val_equal(r, q));
    CHECK_OK(t2__val_map_set(q, "x", t2__val_double(1)));
    CHECK(!t2__val_equal(r, q));
    CHECK(!t2__val_equal(m, r) && t2__val_equal(NULL, NULL) && !t2__val_equal(m, NULL));
    CHECK(strcmp(t2__val_kind_name(T2__VAL_MAP), "map") == 0);
    t2__val_free(c);
    t2__val_free(r);
    t2__val_free(q);
    t2__val_free(m);
    t2__val_free(NULL);
}

static void test_writer(void)
{
    t2__val *l = t2__val_list();
    CHECK_OK(t2__val_list_append(l, t2__val_double(0.1)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(1.0)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(100)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(-0.0)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(1e100)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(1.0 / 3)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(2.0 / 3)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(0.1 + 0.2)));
    CHECK_OK(t2__val_list_append(l, t2__val_double(1e-7)));
    CHECK_OK(t2__val_list_append(l, t2__val_int(INT64_MIN)));
    CHECK_OK(t2__val_list_append(l, t2__val_int(INT64_MAX)));
    CHECK_OK(t2__val_list_append(l, t2__val_string("q\"b\\n\n\t\x01\x1f/é")));
    CHECK_OK(t2__val_list_append(l, t2__val_bool(0)));
    CHECK_OK(t2__val_list_append(l, t2__val_null()));
    CHECK_OK(t2__val_list_append(l, t2__val_map()));
    CHECK_OK(t2__val_list_append(l, t2__val_list()));
    char *s = to_json(l);
    CHECK_STR(s, "[0.1,1.0,100.0,-0.0,1e+100,0.3333333333333333,0.6666666666666666,0.30000000000000004,1e-07,"
                 "-9223372036854775808,9223372036854775807,\"q\\\"b\\\\n\\n\\t\\u0001\\u001f/é\",false,null,{},[]]");
    /* ...and reads back to an equal tree. */
    t2__val *back = NULL;
    CHECK_OK(t2__val_from_json(s, strlen(s), &back, NULL));
    CHECK(t2__val_equal(l, back));
    t2__val_free(back);
    free(s);

    CHECK_OK(t2__val_list_append(l, t2__val_double(NAN)));
    s = (char *)1;
    CHECK_RC(t2__val_to_json(l, &s, NULL), T2_ENUMERIC);
    CHECK_STR(t2_errmsg(), "json: cannot write nan (JSON has no NaN or infinity)");
    t2__val_free(l);
    t2__val *inf = t2__val_double(-INFINITY);
    CHECK_RC(t2__val_to_json(inf, &s, NULL), T2_ENUMERIC);
    CHECK_STR(t2_errmsg(), "json: cannot write -inf (JSON has no NaN or infinity)");
    t2__val_free(inf);
    CHECK_RC(t2__val_to_json(NULL, &s, NULL), T2_EINVAL);
}

/* Every finite double survives the round trip bit for bit, and stays a double. */
static void test_double_round_trip(void)
{
    t2_rng r;
    t2_rng_seed(&r, 3);
    int bad = 0;
    for (int k = 0; k < 20000; k++) {
        uint64_t bits = t2_rng_u64(&r);
        double d;
        if (k % 4 == 0) d = t2_rng_uniform_double(&r) * 10 - 5; /* typical hparam values too */
        else memcpy(&d, &bits, sizeof d);
        if (!isfinite(d)) continue;
        t2__val *v = t2__val_double(d), *back = NULL;
        char *s = NULL;
        if (t2__val_to_json(v, &s, NULL) || t2__val_from_json(s, strlen(s), &back, NULL) ||
            back->kind != T2__VAL_DOUBLE || memcmp(&back->d, &d, sizeof d) != 0) {
            if (bad++ < 5) fprintf(stderr, "round trip failed for %.17g -> %s\n", d, s ? s : "?");
        }
        free(s);
        t2__val_free(v);
        t2__val_free(back);
    }
    CHECK(bad == 0);
}

static void test_reader(void)
{
    const char *text = " {\"a\" : [1, -2, 3.5, 1e2, -0.25E-1, true, false, null],\n\t\"b\":{\"c\":\"\\u00e9\\ud83d\\ude00\\/\"},"
                       "\"big\":9223372036854775808, \"min\":-9223372036854775808} ";
    t2__val *v = NULL;
    CHECK_OK(t2__val_from_json(text, strlen(text), &v, NULL));
    if (!v) return;
    CHECK(t2__val_lookup(v, "a.0")->kind == T2__VAL_INT && t2__val_lookup(v, "a.0")->i == 1);
    CHECK(t2__val_lookup(v, "a.1")->i == -2);
    CHECK(t2__val_lookup(v, "a.2")->kind == T2__VAL_DOUBLE && t2__val_lookup(v, "a.2")->d == 3.5);
    CHECK(t2__val_lookup(v, "a.3")->kind == T2__VAL_DOUBLE && t2__val_lookup(v, "a.3")->d == 100);
    CHECK(t2__val_lookup(v, "a.4")->d == -0.025);
    CHECK(t2__val_lookup(v, "a.5")->b == 1 && t2__val_lookup(v, "a.7")->kind == T2__VAL_NULL);
    CHECK_STR(t2__val_lookup(v, "b.c")->s, "\xc3\xa9\xf0\x9f\x98\x80/");
    CHECK(t2__val_lookup(v, "b.c")->len == 7);
    CHECK(t2__val_lookup(v, "big")->kind == T2__VAL_DOUBLE && t2__val_lookup(v, "big")->d == 9223372036854775808.0);
    CHECK(t2__val_lookup(v, "min")->kind == T2__VAL_INT && t2__val_lookup(v, "min")->i == INT64_MIN);
    t2__val_free(v);

    /* A length shorter than the string stops there. */
    CHECK_OK(t2__val_from_json("[1]garbage", 3, &v, NULL));
    t2__val_free(v);

    static const struct {
        const char *text;
        size_t offset;
        const char *problem;
    } bad[] = {
        {"", 0, "unexpected end of input"},
        {"   ", 3, "unexpected end of input"},
        {"[1,]", 3, "trailing comma"},
        {"{\"a\":1,}", 7, "trailing comma"},
        {"{\"a\":1,\"a\":2}", 7, "duplicate object key"},
        {"01", 0, "leading zero in number"},
        {"-", 0, "invalid number"},
        {"1.", 2, "digit expected after '.'"},
        {"1e+", 3, "digit expected in exponent"},
        {"[1 2]", 3, "',' or ']' expected"},
        {"{\"a\":1 \"b\":2}", 7, "',' or '}' expected"},
        {"{\"a\" 1}", 5, "':' expected after object key"},
        {"{1:2}", 1, "object key (a string) expected"},
        {"\"abc", 0, "unterminated string"},
        {"\"a\tb\"", 2, "control character in string (must be escaped)"},
        {"\"\\x\"", 1, "unknown escape in string"},
        {"\"\\u12g4\"", 5, "bad hex digit in \\u escape"},
        {"\"\\u0000\"", 1, "\\u0000 is not allowed (strings are NUL-terminated)"},
        {"\"\\ud800\"", 1, "high surrogate not followed by a low surrogate"},
        {"\"\\ud800\\u0041\"", 1, "high surrogate not followed by a low surrogate"},
        {"\"\\udc00\"", 1, "lone low surrogate in \\u escape"},
        {"\"\xff\"", 1, "invalid UTF-8 in string"},
        {"\"\xc0\xaf\"", 1, "invalid UTF-8 in string"},      /* overlong '/' */
        {"\"\xed\xa0\x80\"", 1, "invalid UTF-8 in string"},  /* an encoded surrogate */
        {"tru", 0, "unexpected character"},
        {"NaN", 0, "unexpected character"},
        {"Infinity", 0, "unexpected character"},
        {"// c\n1", 0, "unexpected character"},
        {"1 2", 2, "unexpected text after the value"},
        {"1e400", 0, "number out of range"},
        {"[1, 'a']", 4, "unexpected character"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        size_t off = 12345;
        char want[256];
        v = (t2__val *)1;
        int rc = t2__val_from_json(bad[k].text, strlen(bad[k].text), &v, &off);
        snprintf(want, sizeof want, "json: offset %zu: %s", bad[k].offset, bad[k].problem);
        if (rc != T2_EFORMAT || off != bad[k].offset || strcmp(t2_errmsg(), want) != 0 || v != NULL) {
            fprintf(stderr, "reader case %zu (%s): rc %d off %zu msg \"%s\", wanted \"%s\"\n", k, bad[k].text, rc,
                    off, t2_errmsg(), want);
            check_failures++;
        }
    }

    /* Nesting is bounded instead of recursing without limit. */
    char deep[1200];
    memset(deep, '[', sizeof deep);
    CHECK_RC(t2__val_from_json(deep, sizeof deep, &v, NULL), T2_EFORMAT);
    CHECK_STR(t2_errmsg(), "json: offset 513: nested too deeply");
    CHECK_RC(t2__val_from_json(NULL, 0, &v, NULL), T2_EINVAL);
}

/* One object with 1.5 million keys (about what the 16 MiB channel frame allows). A linear scan
 * per key made this quadratic (100k keys of a checkpoint's metadata.json took 35 s; 1.5M would
 * take hours, past ctest's timeout); with the hash index it is linear, about a second. */
static void test_many_keys(void)
{
    enum { N = 1500000 };
    size_t cap = (size_t)N * 20 + 64, o = 0;
    char *text = malloc(cap);
    if (!text) {
        fprintf(stderr, "out of memory\n");
        check_failures++;
        return;
    }
    text[o++] = '{';
    for (int k = 0; k < N; k++) o += (size_t)snprintf(text + o, cap - o, "%s\"k%d\":%d", k ? "," : "", k, k);
    text[o++] = '}';
    t2__val *v = NULL;
    CHECK_OK(t2__val_from_json(text, o, &v, NULL));
    if (v) {
        CHECK(v->kind == T2__VAL_MAP && v->n == N);
        const t2__val *e = t2__val_map_get(v, "k1499999");
        CHECK(e && e->kind == T2__VAL_INT && e->i == N - 1);
        e = t2__val_map_get(v, "k777");
        CHECK(e && e->i == 777);
        CHECK(strcmp(v->keys[0], "k0") == 0 && strcmp(v->keys[N - 1], "k1499999") == 0);
        CHECK(t2__val_map_get(v, "k1500000") == NULL);
        /* Replacing a key keeps its place. */
        CHECK_OK(t2__val_map_set(v, "k5", t2__val_string("five")));
        CHECK(v->n == N && strcmp(v->keys[5], "k5") == 0 && strcmp(t2__val_map_get(v, "k5")->s, "five") == 0);
    }
    t2__val_free(v);

    /* A duplicate as the last key is still reported, at its offset. */
    size_t at = o - 1; /* the closing '}' becomes ,"k0":1} */
    o = at + (size_t)snprintf(text + at, cap - at, ",\"k0\":1}");
    size_t off = 0;
    v = NULL;
    CHECK_RC(t2__val_from_json(text, o, &v, &off), T2_EFORMAT);
    CHECK(off == at + 1 && v == NULL);
    char want[64];
    snprintf(want, sizeof want, "json: offset %zu: duplicate object key", at + 1);
    CHECK_STR(t2_errmsg(), want);
    free(text);
}

/* t2__val_flatten: nested maps' leaves by dotted path, in order; lists and empty maps are leaves;
 * two leaves with one name (a key with dots of its own) are refused, as is a non-map. */
static void test_flatten(void)
{
    const char *in = "{\"opt\":{\"lr\":0.1,\"sched\":{\"kind\":\"step\"}},\"n\":2,\"l\":[1,{\"a\":1}],\"e\":{}}";
    t2__val *v = NULL, *f = NULL;
    CHECK_OK(t2__val_from_json(in, strlen(in), &v, NULL));
    CHECK_OK(t2__val_flatten(v, &f));
    char *got = f ? to_json(f) : NULL;
    CHECK_STR(got ? got : "", "{\"opt.lr\":0.1,\"opt.sched.kind\":\"step\",\"n\":2,\"l\":[1,{\"a\":1}],\"e\":{}}");
    free(got);
    t2__val_free(f);
    t2__val_free(v);
    const char *clash = "{\"a.b\":1,\"a\":{\"b\":2}}";
    CHECK_OK(t2__val_from_json(clash, strlen(clash), &v, NULL));
    f = (t2__val *)1;
    CHECK_RC(t2__val_flatten(v, &f), T2_EINVAL);
    CHECK(f == NULL && strstr(t2_errmsg(), "two leaves are named a.b"));
    t2__val_free(v);
    v = t2__val_int(3);
    CHECK_RC(t2__val_flatten(v, &f), T2_EINVAL);
    t2__val_free(v);
}

int main(void)
{
    test_flatten();
    test_tree();
    test_writer();
    test_double_round_trip();
    test_reader();
    test_many_keys();
    return check_report("test_config_json");
}
