/* plot.h — `t2exp plot`'s pieces (internal): what is read from the store (plot_data.c), the
 * figures built from it (figures.c) and the drawing of a figure with cairo (chart.c). */
#ifndef T2_PLOT_H
#define T2_PLOT_H

#include <stddef.h>
#include <stdint.h>
#include "framework/cli/importance.h"
#include "framework/store/store.h"

/* The most numeric hparams that get a panel in hparams.{svg,png}: more panels are unreadable. */
#define T2__PLOT_MAX_HPARAMS 6

/* The most hparams a learning curve's legend names ("trial 1.3 (x=0, y=-2.5, opt=adam)"). */
#define T2__PLOT_LEGEND_HPARAMS 3

/* A growable list of points. */
typedef struct {
    double *x, *y;
    size_t n, cap;
} t2__plot_xy;

int t2__plot_xy_add(t2__plot_xy *p, double x, double y);
void t2__plot_xy_free(t2__plot_xy *p);

typedef struct {
    int64_t id, ordinal;
    char *label;       /* "trial 1.3 (x=0, y=-2.5)": EXP.N, as the CLI names trials */
    t2__plot_xy train; /* (batches, training metric) */
    t2__plot_xy valid; /* (batches, searcher metric) */
} t2__plot_trial;

/* One axis of the parallel coordinates: a hyperparameter (or, last, the searcher metric) with its
 * ends' labels and each line's place on it in [0, 1] (NAN: the trial has no value there). */
#define T2__PLOT_MAX_PAXES 12     /* hyperparameter axes; the metric's comes on top */
#define T2__PLOT_MAX_PLINES 2000  /* lines drawn, the best first (as the dashboard) */
typedef struct {
    char *name;
    char lo[48], hi[48];
    double *pos;
} t2__plot_paxis;

typedef struct {
    int64_t experiment_id;
    char *name;         /* the experiment's name, for titles */
    char *metric;       /* the searcher metric */
    int smaller_is_better;
    char *train_metric; /* the training metric drawn: "loss" when there is one */
    t2__plot_trial *top; /* the top trials, ranked as `t2exp describe` ranks them */
    size_t ntop;
    t2__plot_xy best;   /* (validation number from 1 in time order, best value so far) */
    t2__plot_xy all;    /* (validation number, that validation's value) */
    size_t nhp;
    char *hp_name[T2__PLOT_MAX_HPARAMS];
    t2__plot_xy hp[T2__PLOT_MAX_HPARAMS]; /* (hparam value, the trial's best validation) */
    size_t nlegend;
    char *legend_hp[T2__PLOT_LEGEND_HPARAMS]; /* the hparams the learning curves' legend names */
    t2__plot_paxis *par;  /* parallel coordinates: the varying top-level hparams, then the metric */
    size_t npar, nlines;  /* lines: the trials with a validation, ranked, at most T2__PLOT_MAX_PLINES */
    t2__importance_result imp; /* `t2exp importance`'s answer (imp.d 0: none, imp_why says why) */
    char imp_why[300];
} t2__plot_data;

/* Reads experiment `id` through the store's own query functions. T2_ENOTFOUND for an unknown
 * experiment; T2_ESTATE when it has no validation of its searcher metric yet (nothing to draw). */
int t2__plot_load(t2__store *st, int64_t id, long top, t2__plot_data *out);
void t2__plot_data_free(t2__plot_data *d);

/* ---- chart.c ---- */

/* HBAR: a horizontal bar from x = 0 to each point's x, at its y (a category's index). */
enum { T2__SERIES_LINE = 1, T2__SERIES_POINTS = 2, T2__SERIES_STEP = 4, T2__SERIES_HBAR = 8 };

/* Palette colours are distinct stroke colours (tests count a chart's series by them); -1 draws
 * in grey, which is never a palette colour. */
#define T2__PALETTE_SIZE 10

typedef struct {
    const double *x, *y;
    size_t n;
    int colour;     /* palette index (taken modulo the palette; past it the line is dashed), or -1 */
    unsigned style; /* T2__SERIES_* */
} t2__series;

typedef struct {
    const char *title, *xlabel, *ylabel;
    int xlog; /* a log10 x axis */
    const t2__series *s;
    size_t ns;
    /* A category y axis (NULL: numeric): y = k is labelled ycats[k], for k < nycats; the y label is
     * then only in the SVG's description. */
    const char *const *ycats;
    size_t nycats;
    /* Parallel coordinates instead of x/y (the panel is then the figure's only one, as wide as its
     * axes need): npar axes of nlines lines, line 0 the best, coloured from dark blue (best) to light
     * yellow (worst) and drawn worst first. */
    const t2__plot_paxis *par;
    size_t npar, nlines;
} t2__panel;

typedef struct {
    const char *title;
    const t2__panel *p;
    size_t np;
    const char *const *legend; /* legend[i] names colour i; NULL: no legend */
    size_t nlegend;
    const char *series_desc;   /* the desc's "series:" text when there is no legend */
} t2__figure;

/* Draws the figure into a malloc'ed buffer: PNG bytes, or an SVG document with a <title> and a
 * <desc> ("x axis: ...; y axis: ...; series: ...") right after its <svg> tag. */
int t2__chart_render(const t2__figure *f, int png, char **buf, size_t *len);

/* ---- figures.c ---- */

/* The five files' figures, rendered; names[i] ("learning_curves") and bufs[i] for i < 5. Once per
 * process: it frees cairo's and fontconfig's global font caches when done. */
#define T2__PLOT_FILES 5
extern const char *const t2__plot_names[T2__PLOT_FILES];
int t2__plot_render_all(const t2__plot_data *d, int png, char *bufs[T2__PLOT_FILES], size_t lens[T2__PLOT_FILES]);

#endif
