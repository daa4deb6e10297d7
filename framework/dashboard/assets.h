/* assets.h — the dashboard's pages, compiled in (embed_assets.cmake generates the table). */
#ifndef T2_DASHBOARD_ASSETS_H
#define T2_DASHBOARD_ASSETS_H

#include <stddef.h>

typedef struct t2__asset {
    const char *path; /* relative to framework/dashboard/web, e.g. "vendor/uPlot.min.css" */
    const char *type; /* Content-Type */
    const unsigned char *data;
    size_t len;
} t2__asset;

/* Terminated by an entry with path NULL. */
extern const t2__asset t2__assets[];

#endif
