/* test_config_util.h — what the config unit tests share. */
#ifndef T2_TEST_CONFIG_UTIL_H
#define T2_TEST_CONFIG_UTIL_H

/* A minimal valid config; tests append or replace lines around it. */
#define MINIMAL                                                                                   \
    "hyperparameters:\n"                                                                          \
    "  global_batch_size: 32\n"                                                                   \
    "searcher:\n"                                                                                 \
    "  name: single\n"                                                                            \
    "  metric: loss\n"                                                                            \
    "  max_length:\n"                                                                             \
    "    batches: 100\n"

#endif
