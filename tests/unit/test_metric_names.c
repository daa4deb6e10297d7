/* test_metric_names.c — t2_metric refuses a name that is not UTF-8, naming the byte: names go to
 * the controller and the store as JSON text, and such a name used to end the trial with only
 * "rejected a message: json: offset 74: invalid UTF-8 in string", naming neither the metric nor
 * the cause. The batch fails with it even when the trial ignores the return. UTF-8 names (accents,
 * CJK, emoji) are taken. */
#include <string.h>
#include "check.h"
#include "framework/runner/metrics.h"

int main(void)
{
    t2_metrics m;
    t2__metrics_init(&m);
    CHECK_RC(t2_metric(&m, "loss", 1.0), T2_OK);
    CHECK_RC(t2_metric(&m, "pr\xc3\xa9" "cision", 0.5), T2_OK);         /* é */
    CHECK_RC(t2_metric(&m, "\xe7\xb2\xbe\xe5\xba\xa6", 0.5), T2_OK);      /* 精度 */
    CHECK_RC(t2_metric(&m, "\xf0\x9f\x8e\xaf", 0.5), T2_OK);              /* an emoji */
    CHECK_RC(t2_metric(&m, "acc\xff", 0.5), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "t2_metric: name 'acc' is not valid UTF-8 (byte 3, 0xff)") != NULL);
    /* Kept for the batch too, so a trial that ignores the return still fails, with the reason. */
    CHECK(strcmp(m.error, "metric name 'acc' is not valid UTF-8 (byte 3, 0xff)") == 0);
    CHECK_RC(t2_metric(&m, "a\xed\xa0\x80" "b", 0.5), T2_EINVAL);         /* a UTF-16 surrogate */
    CHECK(strstr(t2_errmsg(), "(byte 1, 0xed)") != NULL);
    CHECK_RC(t2_metric(&m, "\xc0\xaf", 0.5), T2_EINVAL);                  /* an overlong '/' */
    CHECK_RC(t2_metric(&m, "cut\xe7\xb2", 0.5), T2_EINVAL);               /* a sequence cut short */
    /* A reducer change names both reducers (it said "reducer 1 after 0"). */
    CHECK_RC(t2_metric_reduce(&m, "loss", 1.0, T2_REDUCE_SUM), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "reported with reducer T2_REDUCE_SUM after T2_REDUCE_MEAN") != NULL);
    t2__metrics_free(&m);
    return check_report("test_metric_names");
}
