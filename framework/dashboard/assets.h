/* assets.h — the dashboard's pages, compiled in (cmake/embed_files.cmake generates the table). */
#ifndef T2_DASHBOARD_ASSETS_H
#define T2_DASHBOARD_ASSETS_H

#include "embedded_files.h"

/* A page's path is relative to framework/dashboard/web, e.g. "vendor/uPlot.min.css". */
typedef t2__embedded_file t2__asset;

/* Terminated by an entry with path NULL. */
extern const t2__asset t2__assets[];

#endif
