/* chart.c — draws a figure (one or more panels of lines and points, a legend) with cairo into
 * memory, as PNG or SVG. cairo's SVG draws text as glyph outlines, so the words are not in the
 * file; a <title> and a <desc> naming the axes and the series are added after its <svg> tag, for
 * readers, screen readers and tests alike. */
#define _POSIX_C_SOURCE 200809L
#include <cairo-svg.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "plot.h"

#define PI 3.14159265358979323846

/* PAD: room inside the frame, so points at the ends of the axes are not cut by it. */
enum { PANEL_W = 520, PANEL_H = 360, ML = 76, MR = 24, MT = 34, MB = 50, PAD = 8, TITLE_H = 44, LEGEND_ROW = 20, COLS = 3 };

/* Tableau's ten colours less its grey, which the axes' greys could be taken for; navy instead. */
static const unsigned PALETTE[T2__PALETTE_SIZE] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                                                   0x8c564b, 0xe377c2, 0xbcbd22, 0x17becf, 0x393b79};

static void set_colour(cairo_t *cr, int colour)
{
    if (colour < 0) {
        cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
        return;
    }
    unsigned c = PALETTE[colour % T2__PALETTE_SIZE];
    cairo_set_source_rgb(cr, (c >> 16) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0);
}

typedef struct {
    char *p;
    size_t n, cap;
    int failed;
} membuf;

static cairo_status_t mem_write(void *closure, const unsigned char *data, unsigned int len)
{
    membuf *b = closure;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return CAIRO_STATUS_SUCCESS;
}

/* One axis: [lo, hi] in plotted units (log10 of the value on a log axis) and its tick step. */
typedef struct {
    double lo, hi, step;
    int log;
} axis;

static double nice_step(double raw)
{
    double mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void axis_fit(axis *a, const t2__panel *p, int want_x)
{
    if (!want_x && p->ycats) { /* one band per category */
        a->lo = -0.5, a->hi = (double)p->nycats - 0.5, a->step = 1;
        return;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < p->ns; s++)
        for (size_t i = 0; i < p->s[s].n; i++) {
            double v = want_x ? p->s[s].x[i] : p->s[s].y[i];
            if (a->log) v = v > 0 ? log10(v) : NAN;
            if (isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
        }
    for (size_t s = 0; want_x && s < p->ns; s++)
        if (p->s[s].style & T2__SERIES_HBAR) lo = fmin(lo, 0), hi = fmax(hi, 0); /* bars start at 0 */
    if (!(lo <= hi)) lo = 0, hi = 1;
    if (hi - lo < 1e-12 * fmax(1, fabs(lo))) { /* one value: a band around it */
        double pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
        lo -= pad, hi += pad;
    }
    if (a->log) {
        a->lo = floor(lo), a->hi = ceil(hi);
        a->step = ceil((a->hi - a->lo) / 6);
        if (a->step < 1) a->step = 1;
        return;
    }
    a->step = nice_step((hi - lo) / 5);
    a->lo = floor(lo / a->step) * a->step;
    a->hi = ceil(hi / a->step) * a->step;
}

static double to_unit(const axis *a, double v)
{
    if (a->log) v = v > 0 ? log10(v) : NAN;
    return (v - a->lo) / (a->hi - a->lo);
}

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 if the bytes there are not one. */
static size_t utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) return 0; /* overlong, surrogate */
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))) return 0;
    return n;
}

/* A copy of s that cairo and XML accept: invalid UTF-8 (a name cut inside a character by a
 * length limit, say) becomes '?', since cairo refuses to draw any text with it. */
static void clean_text(const char *s, char *buf, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && o + 5 < cap;) {
        size_t n = utf8_len(p);
        if (n == 0) buf[o++] = '?', p++;
        else memcpy(buf + o, p, n), o += n, p += n;
    }
    buf[o] = '\0';
}

static void text_at(cairo_t *cr, const char *s, double x, double y, double ax, double ay)
{
    char buf[512];
    cairo_text_extents_t e;
    clean_text(s, buf, sizeof buf);
    cairo_text_extents(cr, buf, &e);
    cairo_move_to(cr, x - e.width * ax - e.x_bearing, y - e.height * ay - e.y_bearing);
    cairo_show_text(cr, buf);
}

static void tick_label(char *buf, size_t len, const axis *a, double t)
{
    if (a->log) snprintf(buf, len, "%g", pow(10, t));
    else snprintf(buf, len, "%g", fabs(t) < a->step * 1e-9 ? 0.0 : t);
}

static void draw_axes(cairo_t *cr, const t2__panel *p, const axis *ax, const axis *ay, double x0, double y0,
                      double w, double h)
{
    char buf[48];
    cairo_set_line_width(cr, 1);
    cairo_set_font_size(cr, 11);
    for (int k = 0; k <= 1000; k++) {
        double t = ax->lo + k * ax->step;
        if (t > ax->hi + ax->step * 1e-9) break;
        double px = x0 + (t - ax->lo) / (ax->hi - ax->lo) * w;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, px, y0 - PAD), cairo_line_to(cr, px, y0 + h + PAD), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        tick_label(buf, sizeof buf, ax, t);
        text_at(cr, buf, px, y0 + h + PAD + 5, 0.5, 0);
    }
    for (int k = 0; !p->ycats && k <= 1000; k++) {
        double t = ay->lo + k * ay->step;
        if (t > ay->hi + ay->step * 1e-9) break;
        double py = y0 + h - (t - ay->lo) / (ay->hi - ay->lo) * h;
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x0 - PAD, py), cairo_line_to(cr, x0 + w + PAD, py), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        tick_label(buf, sizeof buf, ay, t);
        text_at(cr, buf, x0 - PAD - 5, py, 1, 0.5);
    }
    /* Category labels, right-aligned in the margin, smaller where a long one would not fit. */
    for (size_t k = 0; p->ycats && k < p->nycats; k++) {
        double py = y0 + h - ((double)k - ay->lo) / (ay->hi - ay->lo) * h, room = ML - 2 * PAD;
        cairo_text_extents_t e;
        char label[512];
        clean_text(p->ycats[k], label, sizeof label);
        cairo_set_font_size(cr, 11);
        cairo_text_extents(cr, label, &e);
        if (e.width > room) cairo_set_font_size(cr, fmax(6, 11 * room / e.width));
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        text_at(cr, label, x0 - PAD - 4, py, 1, 0.5);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, x0 - PAD, y0 - PAD, w + 2 * PAD, h + 2 * PAD), cairo_stroke(cr);
    cairo_set_font_size(cr, 13);
    text_at(cr, p->xlabel, x0 + w / 2, y0 + h + PAD + 24, 0.5, 0);
    if (!p->ycats) { /* the category labels take the margin */
        cairo_save(cr);
        cairo_translate(cr, x0 - 60, y0 + h / 2);
        cairo_rotate(cr, -PI / 2);
        text_at(cr, p->ylabel, 0, 0, 0.5, 0);
        cairo_restore(cr);
    }
    if (p->title) text_at(cr, p->title, x0 + w / 2, y0 - PAD - 8, 0.5, 1);
}

/* One series. Its line is one path in which every plotted point adds exactly one segment: the
 * first point of a run a zero-length one, each later point a subpath from the point before it.
 * cairo merges consecutive collinear segments of one subpath (a flat curve would collapse to a
 * single segment), never segments of different subpaths; so in the SVG a series with n plottable
 * points is one <path> with n L commands (a step line: 2n - 1), which is what the tests count. */
static void draw_series(cairo_t *cr, const t2__series *s, const axis *ax, const axis *ay, double x0, double y0,
                        double w, double h)
{
    set_colour(cr, s->colour);
    if (s->style & (T2__SERIES_LINE | T2__SERIES_STEP)) {
        int open = 0;
        double lastx = 0, lasty = 0;
        for (size_t i = 0; i < s->n; i++) {
            double ux = to_unit(ax, s->x[i]), uy = to_unit(ay, s->y[i]);
            if (!isfinite(ux) || !isfinite(uy)) { /* a gap: the next point starts a new run */
                open = 0;
                continue;
            }
            double px = x0 + ux * w, py = y0 + h - uy * h;
            if (!open) cairo_move_to(cr, px, py);
            else if (s->style & T2__SERIES_STEP) /* across, then a subpath up or down (kept when zero-long) */
                cairo_move_to(cr, lastx, lasty), cairo_line_to(cr, px, lasty), cairo_move_to(cr, px, lasty);
            else cairo_move_to(cr, lastx, lasty);
            cairo_line_to(cr, px, py);
            open = 1, lastx = px, lasty = py;
        }
        cairo_set_line_width(cr, 2);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND); /* a one-point run still shows */
        double dash[] = {6, 3};
        cairo_set_dash(cr, dash, s->colour >= T2__PALETTE_SIZE ? 2 : 0, 0);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    }
    if (s->style & T2__SERIES_HBAR) {
        double base = to_unit(ax, fmax(0, ax->lo)), half = 0.3 / (ay->hi - ay->lo); /* a band's 60% */
        for (size_t i = 0; i < s->n; i++) {
            double ux = to_unit(ax, s->x[i]), uy = to_unit(ay, s->y[i]);
            if (!isfinite(ux) || !isfinite(uy)) continue;
            double left = fmin(base, ux), right = fmax(base, ux);
            cairo_rectangle(cr, x0 + left * w, y0 + h - (uy + half) * h, (right - left) * w, 2 * half * h);
        }
        cairo_fill(cr); /* a fill, as points: bars do not count as series lines */
    }
    if (s->style & T2__SERIES_POINTS) {
        for (size_t i = 0; i < s->n; i++) {
            double ux = to_unit(ax, s->x[i]), uy = to_unit(ay, s->y[i]);
            if (!isfinite(ux) || !isfinite(uy)) continue;
            cairo_new_sub_path(cr);
            cairo_arc(cr, x0 + ux * w, y0 + h - uy * h, 3, 0, 2 * PI);
        }
        cairo_fill(cr); /* a fill, never a stroke: points do not count as series lines */
    }
}

/* The width parallel coordinates of n axes want: room for their names side by side. */
#define PAR_STEP 110
static int parallel_width(size_t n) { return ML + MR + 2 * PAD + PAR_STEP * (int)(n > 1 ? n - 1 : 1) + 40; }

/* A line's colour by its rank q in [0, 1] (0 the best): from dark blue to light yellow through the
 * hues the dashboard's parcoords.js uses (hsl(220 - 170 q, 70%, 35 + 40 q %)). */
static void rank_colour(cairo_t *cr, double q, double alpha)
{
    double h = (220 - 170 * q) / 360, l = 0.35 + 0.40 * q, sat = 0.70;
    double c2 = l < 0.5 ? l * (1 + sat) : l + sat - l * sat, c1 = 2 * l - c2, rgb[3];
    for (int k = 0; k < 3; k++) {
        double t = h + (1 - k) / 3.0; /* r: h + 1/3, g: h, b: h - 1/3 */
        t -= floor(t);
        rgb[k] = t < 1 / 6.0 ? c1 + (c2 - c1) * 6 * t : t < 0.5 ? c2 : t < 2 / 3.0 ? c1 + (c2 - c1) * (2 / 3.0 - t) * 6 : c1;
    }
    cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], alpha);
}

/* Parallel coordinates in the box (x0, y0, w, h): the lines worst first, so the best are on top,
 * each in one path (a trial without a value on an axis breaks its line there), then the axes with
 * their names above and their ends' labels. */
static void draw_parallel(cairo_t *cr, const t2__panel *p, double x0, double y0, double w, double h)
{
    double step = p->npar > 1 ? w / (double)(p->npar - 1) : 0;
    if (p->npar == 1) x0 += w / 2;
    cairo_set_line_width(cr, 1.5);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t r = p->nlines; r-- > 0;) {
        rank_colour(cr, p->nlines > 1 ? (double)r / (double)(p->nlines - 1) : 0, p->nlines > 200 ? 0.35 : 0.85);
        int pen = 0;
        for (size_t a = 0; a < p->npar; a++) {
            double v = p->par[a].pos[r];
            if (!isfinite(v)) {
                pen = 0;
                continue;
            }
            double x = x0 + step * (double)a, y = y0 + (1 - v) * h;
            if (pen) cairo_line_to(cr, x, y);
            else cairo_move_to(cr, x, y);
            pen = 1;
        }
        if (p->npar == 1) cairo_rel_line_to(cr, 0, 0); /* one axis: a dot */
        cairo_stroke(cr);
    }
    cairo_set_line_width(cr, 1);
    for (size_t a = 0; a < p->npar; a++) {
        double x = x0 + step * (double)a;
        cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        cairo_move_to(cr, x, y0), cairo_line_to(cr, x, y0 + h), cairo_stroke(cr);
        cairo_set_font_size(cr, 12);
        text_at(cr, p->par[a].name, x, y0 - 22, 0.5, 0.5);
        cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
        cairo_set_font_size(cr, 10);
        text_at(cr, p->par[a].hi, x, y0 - 8, 0.5, 0.5);
        text_at(cr, p->par[a].lo, x, y0 + h + 12, 0.5, 0.5);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_font_size(cr, 11);
    if (p->title) text_at(cr, p->title, x0 - (p->npar == 1 ? w / 2 : 0), y0 + h + 34, 0, 0.5);
}

static void draw(cairo_t *cr, const t2__figure *f, int width, int height, int cols)
{
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_text_extents_t e;
    char title[512];
    clean_text(f->title, title, sizeof title);
    cairo_set_font_size(cr, 16);
    cairo_text_extents(cr, title, &e);
    if (e.width > width - 20) cairo_set_font_size(cr, 16 * (width - 20) / e.width); /* a long title fits */
    text_at(cr, title, width / 2.0, TITLE_H / 2.0, 0.5, 0.5);
    for (size_t i = 0; i < f->np; i++) {
        const t2__panel *p = &f->p[i];
        double x0 = (double)(i % (size_t)cols) * PANEL_W + ML, y0 = TITLE_H + (double)(i / (size_t)cols) * PANEL_H + MT;
        double w = PANEL_W - ML - MR, h = PANEL_H - MT - MB;
        if (p->par) w = width - ML - MR - 40; /* the figure's only panel, as wide as its axes want */
        x0 += PAD, y0 += PAD, w -= 2 * PAD, h -= 2 * PAD;
        if (p->par) {
            cairo_save(cr);
            draw_parallel(cr, p, x0, y0 + 12, w, h - 24);
            cairo_restore(cr);
            continue;
        }
        axis ax = {.log = p->xlog}, ay = {0};
        axis_fit(&ax, p, 1);
        axis_fit(&ay, p, 0);
        draw_axes(cr, p, &ax, &ay, x0, y0, w, h);
        cairo_save(cr);
        cairo_rectangle(cr, x0 - PAD, y0 - PAD, w + 2 * PAD, h + 2 * PAD);
        cairo_clip(cr);
        for (size_t s = 0; s < p->ns; s++) draw_series(cr, &p->s[s], &ax, &ay, x0, y0, w, h);
        cairo_restore(cr);
    }
    double ly = height - (double)f->nlegend * LEGEND_ROW - 6;
    cairo_set_font_size(cr, 12);
    for (size_t i = 0; f->legend && i < f->nlegend; i++, ly += LEGEND_ROW) {
        set_colour(cr, (int)i);
        cairo_rectangle(cr, ML, ly + 4, 24, 6), cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        text_at(cr, f->legend[i], ML + 32, ly + 7, 0, 0.5);
    }
}

/* XML text: & < > " ' escaped; control characters other than tab and newline dropped (XML 1.0
 * cannot hold them); invalid UTF-8 as in text_at. */
static void xml_put(FILE *o, const char *text)
{
    char buf[512];
    clean_text(text, buf, sizeof buf);
    for (const char *s = buf; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '&') fputs("&amp;", o);
        else if (c == '<') fputs("&lt;", o);
        else if (c == '>') fputs("&gt;", o);
        else if (c == '"') fputs("&quot;", o);
        else if (c == '\'') fputs("&apos;", o);
        else if (c >= 0x20 || c == '\t' || c == '\n') fputc(c, o);
    }
}

/* The labels of one kind across panels, each once, joined with ", ". */
static void put_labels(FILE *o, const t2__figure *f, int y)
{
    for (size_t i = 0; i < f->np; i++) {
        const char *l = y ? f->p[i].ylabel : f->p[i].xlabel;
        int dup = 0;
        for (size_t j = 0; j < i; j++) dup |= !strcmp(l, y ? f->p[j].ylabel : f->p[j].xlabel);
        if (dup) continue;
        if (i) fputs(", ", o);
        xml_put(o, l);
    }
}

/* The SVG with <title> and <desc> inserted after the <svg ...> tag, into a new buffer. */
static int annotate(const t2__figure *f, const membuf *svg, char **out, size_t *len)
{
    const char *tag = svg->n ? strstr(svg->p, "<svg") : NULL;
    const char *end = tag ? strchr(tag, '>') : NULL;
    if (!end) return t2_seterr(T2_EFORMAT, "plot: cairo's SVG has no <svg> tag");
    FILE *o = open_memstream(out, len);
    if (!o) return t2_seterr(T2_ENOMEM, "plot: out of memory");
    fwrite(svg->p, 1, (size_t)(end + 1 - svg->p), o);
    fputs("\n<title>", o);
    xml_put(o, f->title);
    fputs("</title>\n<desc>x axis: ", o);
    put_labels(o, f, 0);
    fputs("; y axis: ", o);
    put_labels(o, f, 1);
    fputs("; series: ", o);
    for (size_t i = 0; f->legend && i < f->nlegend; i++) {
        if (i) fputs(", ", o);
        xml_put(o, f->legend[i]);
    }
    if (!f->legend) xml_put(o, f->series_desc);
    fputs("</desc>", o);
    fwrite(end + 1, 1, svg->n - (size_t)(end + 1 - svg->p), o);
    int bad = ferror(o);
    if (fclose(o) || bad) {
        free(*out);
        *out = NULL;
        return t2_seterr(T2_ENOMEM, "plot: out of memory");
    }
    return T2_OK;
}

int t2__chart_render(const t2__figure *f, int png, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int cols = f->np < COLS ? (int)f->np : COLS, rows = (int)((f->np + COLS - 1) / COLS);
    if (cols < 1) cols = 1;
    int width = cols * PANEL_W, height = TITLE_H + rows * PANEL_H + (int)f->nlegend * LEGEND_ROW + 12;
    if (f->np == 1 && f->p[0].par && parallel_width(f->p[0].npar) > width) width = parallel_width(f->p[0].npar);
    membuf mb = {0};
    cairo_surface_t *sf = png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height)
                              : cairo_svg_surface_create_for_stream(mem_write, &mb, width, height);
    cairo_status_t st = cairo_surface_status(sf);
    if (st == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = cairo_create(sf);
        draw(cr, f, width, height, cols);
        st = cairo_status(cr);
        cairo_destroy(cr);
    }
    if (st == CAIRO_STATUS_SUCCESS && png) st = cairo_surface_write_to_png_stream(sf, mem_write, &mb);
    cairo_surface_finish(sf); /* the SVG surface writes its document now */
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(sf);
    cairo_surface_destroy(sf);
    int rc = T2_OK;
    if (mb.failed) rc = t2_seterr(T2_ENOMEM, "plot: out of memory");
    else if (st != CAIRO_STATUS_SUCCESS) rc = t2_seterr(T2_EIO, "plot: cairo: %s", cairo_status_to_string(st));
    if (!rc && png) {
        *buf = mb.p, *len = mb.n;
        return T2_OK;
    }
    if (!rc && !mb.p) rc = t2_seterr(T2_EIO, "plot: cairo wrote no SVG");
    if (!rc) {
        mb.p[mb.n] = '\0'; /* mem_write keeps a spare byte */
        rc = annotate(f, &mb, buf, len);
    }
    free(mb.p);
    return rc;
}
