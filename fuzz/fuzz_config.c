/* fuzz_config.c — libFuzzer harness for the experiment config: the YAML reader
 * (configs/yaml_load.c), the --config override parser and the validator, through the same call
 * the CLI makes (t2__config_load_string), then what the controller asks of an accepted config
 * (batch sizes for its hparams, the searcher built from it).
 *
 * Input: byte 0's low two bits give how many --config overrides follow (0..3), each ended by a
 * newline; the rest is the YAML document. Bit 2 of byte 0 makes unknown keys warnings (--lenient). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "configs/config.h"
#include "searchers/pruner.h"
#include "searchers/searcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned nover = data[0] & 3u;
    t2__config_set_lenient((data[0] >> 2) & 1u);
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    const char *over[3];
    int n = 0;
    char *p = text;
    for (; n < (int)nover; n++) {
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        over[n] = p;
        p = nl + 1;
    }
    t2__config *cfg = NULL;
    if (t2__config_load_string(p, "fuzz.yaml", over, n, &cfg) == 0) {
        size_t nw;
        t2__config_warnings(cfg, &nw);
        /* A pruner the config accepted must be one the pruner accepts, and judge values. */
        t2__pruner *pr = NULL;
        if (cfg->searcher.pruner.on) {
            if (t2__pruner_from_config(&cfg->searcher.pruner, cfg->searcher.smaller_is_better, &pr) != 0) abort();
            t2__prune_verdict v;
            for (int64_t k = 1; k <= 40; k++) {
                t2__halving_unit u = {.n = cfg->searcher.pruner.min_resource.n, .mul = k % 5, .div = 1 + k % 3};
                if (t2__pruner_report(pr, k % 3, k, &u, (double)(k % 7) - 3, 1, &v) != 0) abort();
            }
            t2__pruner_free(pr);
        }
        t2__searcher *s = NULL;
        /* A custom searcher would dlopen whatever path the input names: its config is fuzzed, not it. */
        if (cfg->searcher.name != T2__SEARCH_CUSTOM && t2__searcher_create(cfg, 1, &s) == 0) {
            t2__ops ops = {0};
            /* start draws the first trials' hparams: their batch sizes are what the runner asks. */
            if (t2__searcher_start(s, &ops) == 0)
                for (size_t i = 0; i < ops.n && i < 4; i++)
                    if (ops.v[i].kind == T2__OP_CREATE) t2__config_batch_sizes(cfg, ops.v[i].hparams, NULL, NULL);
            t2__ops_free(&ops);
            t2__searcher_free(s);
        }
        t2__config_free(cfg);
    } else {
        size_t ne, more;
        t2__config_errors(&ne, &more);
    }
    free(text);
    return 0;
}
