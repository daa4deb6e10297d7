/* test_ctx_keys.c — a trial's hyperparameter and data getters (runner/ctx.c): values of each type,
 * integers from doubles without a fraction, and the words of each refusal: a missing key names
 * the keys that exist (of the deepest map of a dotted key that exists), a key through a non-map and
 * a value of another type say so, and a long key list is cut to fit as before. */
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "configs/value.h"
#include "internal.h"
#include "runner/ctx.h"

static t2__val *hparams(void)
{
    t2__val *opt = t2__val_map(), *m = t2__val_map();
    CHECK_OK(t2__val_map_set(opt, "lr", t2__val_double(0.5)));
    CHECK_OK(t2__val_map_set(opt, "name", t2__val_string("sgd")));
    CHECK_OK(t2__val_map_set(m, "layers", t2__val_int(3)));
    CHECK_OK(t2__val_map_set(m, "width", t2__val_double(64.0)));
    CHECK_OK(t2__val_map_set(m, "ratio", t2__val_double(0.25)));
    CHECK_OK(t2__val_map_set(m, "flag", t2__val_bool(1)));
    CHECK_OK(t2__val_map_set(m, "optimizer", opt));
    return m;
}

int main(void)
{
    t2__val *hp = hparams();
    t2_ctx ctx;
    t2__ctx_init(&ctx, NULL, hp, 1, 1, 1, 1, 1);
    int64_t i = 0;
    double d = 0;
    int b = 0;
    const char *s = NULL;
    CHECK_OK(t2_hp_int(&ctx, "layers", &i));
    CHECK(i == 3);
    CHECK_OK(t2_hp_int(&ctx, "width", &i));
    CHECK(i == 64);
    CHECK_OK(t2_hp_double(&ctx, "layers", &d));
    CHECK(d == 3.0);
    CHECK_OK(t2_hp_double(&ctx, "optimizer.lr", &d));
    CHECK(d == 0.5);
    CHECK_OK(t2_hp_bool(&ctx, "flag", &b));
    CHECK(b == 1);
    CHECK_OK(t2_hp_str(&ctx, "optimizer.name", &s));
    CHECK(s && strcmp(s, "sgd") == 0);

    CHECK_RC(t2_hp_double(&ctx, "momentum", &d), T2_ENOTFOUND);
    CHECK(strcmp(t2_errmsg(), "hyperparameter 'momentum' is missing (it has: layers, width, ratio, flag, optimizer)") == 0);
    CHECK_RC(t2_hp_int(&ctx, "optimizer.beta", &i), T2_ENOTFOUND);
    CHECK(strcmp(t2_errmsg(), "hyperparameter 'optimizer.beta' is missing ('optimizer' has: lr, name)") == 0);
    CHECK_RC(t2_hp_int(&ctx, "layers.x", &i), T2_EINVAL);
    CHECK(strcmp(t2_errmsg(), "hyperparameter 'layers.x': 'layers' is an int, not a map") == 0);
    CHECK_RC(t2_hp_int(&ctx, "ratio", &i), T2_EINVAL);
    CHECK(strcmp(t2_errmsg(), "hyperparameter 'ratio' is a double, not an integer") == 0);
    CHECK_RC(t2_hp_str(&ctx, "flag", &s), T2_EINVAL);
    CHECK(strcmp(t2_errmsg(), "hyperparameter 'flag' is a bool, not a string") == 0);
    CHECK_RC(t2_data_int(&ctx, "batch", &i), T2_ENOTFOUND); /* no data section */
    CHECK(strcmp(t2_errmsg(), "data key 'batch' is missing (it has: none)") == 0);
    CHECK_RC(t2_hp_int(&ctx, NULL, &i), T2_EINVAL);

    /* Many keys: the list is cut at 511 bytes, the message at 1023, as snprintf cut them. */
    t2__val *big = t2__val_map();
    char key[64], want[2048] = "", list[512] = "";
    size_t off = 0;
    for (int k = 0; k < 200; k++) {
        snprintf(key, sizeof key, "key_number_%03d", k);
        CHECK_OK(t2__val_map_set(big, key, t2__val_int(k)));
        if (off + 1 < sizeof list) {
            int w = snprintf(list + off, sizeof list - off, "%s%s", k ? ", " : "", key);
            off += (size_t)w;
        }
    }
    snprintf(want, 1024, "hyperparameter 'absent' is missing (it has: %s)", list);
    t2__ctx_init(&ctx, NULL, big, 1, 1, 1, 1, 1);
    CHECK_RC(t2_hp_int(&ctx, "absent", &i), T2_ENOTFOUND);
    if (strcmp(t2_errmsg(), want) != 0) fprintf(stderr, "got  %s\nwant %s\n", t2_errmsg(), want);
    CHECK(strcmp(t2_errmsg(), want) == 0);
    t2__val_free(big);
    t2__val_free(hp);
    return check_report("test_ctx_keys");
}
