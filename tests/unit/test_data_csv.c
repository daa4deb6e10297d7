/* CSV datasets (t2_dataset_csv_open through libcsv): good files (header, quotes, CRLF, column
 * selection by name and index, no header, another delimiter) and every refused case with its
 * exact located message, then a few hundred random mutations of a good file that must each be
 * read or refused cleanly. */
#include "test_data_util.h"
#include <sys/stat.h>
#include "check.h"

static const char *write_file(const char *name, const char *text)
{
    const char *path = tpath(name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    return path;
}

/* Opens text as a CSV with p and expects rc and (if not OK) the message "<path><msg>". */
static t2_dataset *expect(const char *text, const t2_csv_params *p, int rc, const char *msg)
{
    const char *path = write_file("f.csv", text);
    t2_dataset *ds = NULL;
    CHECK_RC(t2_dataset_csv_open(&ds, path, p), rc);
    if (rc) {
        char want[1024];
        snprintf(want, sizeof want, "%s%s", path, msg);
        CHECK_STR(t2_errmsg(), want);
        CHECK(ds == NULL);
    }
    return ds;
}

static void good_files(void)
{
    const char *tg[] = {"y"};
    t2_csv_params p = t2_csv_params_default();
    p.target_columns = tg;
    p.ntargets = 1;
    p.label_column = "cls";
    /* Default features: every column that is not the target or the label, so the text column
     * "note" is one, and refused. */
    expect("a,note,y,cls,b\r\n1.5,\"x, y\",2,0,\"-3\"\r\n", &p, T2_EFORMAT,
           ":2:2 (column 'note'): 'x, y' is not a number");
    /* Quoted numbers, spaces, CRLF, a quoted note with a comma and a newline, a blank line. */
    t2_dataset *ds;
    const char *feats[] = {"b", "a"};
    p.feature_columns = feats;
    p.nfeatures = 2;
    ds = expect("a,note,y,cls,b\r\n"
                "1.5,\"x, y\",2,0,\"-3\"\r\n"
                " 2 ,\"multi\nline\", 4e1 ,2,1e-2\r\n"
                "\r\n"
                "0,z,-0.5,1,7\r\n",
                &p, T2_OK, "");
    if (ds) {
        int ndim, shape[3];
        CHECK_OK(t2_dataset_sample_shape(ds, &ndim, shape));
        CHECK(ndim == 1 && shape[0] == 2 && t2_dataset_len(ds) == 3);
        CHECK(t2_dataset_target_width(ds) == 1 && t2_dataset_num_classes(ds) == 3);
        float want_x[3][2] = {{-3, 1.5f}, {1e-2f, 2}, {7, 0}}, want_t[3] = {2, 40, -0.5f};
        int32_t want_l[3] = {0, 2, 1};
        for (int i = 0; i < 3; i++) {
            float x[2], t;
            int32_t l;
            CHECK_OK(t2_dataset_get_sample(ds, i, x, &t, &l));
            CHECK(x[0] == want_x[i][0] && x[1] == want_x[i][1] && t == want_t[i] && l == want_l[i]);
        }
        t2_dataset_free(ds);
    }
    /* No header, columns by 0-based index, two targets, ';' as delimiter, no label. */
    t2_csv_params q = t2_csv_params_default();
    const char *tq[] = {"3", "0"}, *fq[] = {"1"};
    q.has_header = 0;
    q.delimiter = ';';
    q.target_columns = tq;
    q.ntargets = 2;
    q.feature_columns = fq;
    q.nfeatures = 1;
    ds = expect("1;2;skip;4\n5;6;\"a;b\";8", &q, T2_OK, "");
    if (ds) {
        float x, t[2];
        int32_t l;
        CHECK(t2_dataset_len(ds) == 2 && t2_dataset_num_classes(ds) == 0 && t2_dataset_target_width(ds) == 2);
        CHECK_OK(t2_dataset_get_sample(ds, 1, &x, t, &l));
        CHECK(x == 6 && t[0] == 8 && t[1] == 5 && l == -1);
        /* Through the loader: the batch carries the targets. */
        t2_loader_params lp = t2_loader_params_default();
        lp.batch_size = 2;
        t2_loader *ld = NULL;
        const t2_batch *b;
        CHECK_OK(t2_loader_create(&ld, ds, &lp));
        CHECK_OK(t2_loader_next(ld, &b));
        CHECK(b->n == 2 && b->target_width == 2 && b->targets[0] == 4 && b->targets[1] == 1 && b->targets[2] == 8);
        CHECK(b->x.data[0] == 2 && b->x.data[1] == 6 && b->labels == NULL);
        t2_loader_free(ld);
        t2_dataset_free(ds);
    }
    /* A UTF-8 byte order mark before the header is skipped. */
    t2_csv_params m = t2_csv_params_default();
    m.label_column = "lab";
    ds = expect("\xEF\xBB\xBFlab,v\n2,0.25\n", &m, T2_OK, "");
    if (ds) {
        float x;
        int32_t l;
        CHECK_OK(t2_dataset_get(ds, 0, &x, &l));
        CHECK(x == 0.25f && l == 2);
        t2_dataset_free(ds);
    }
    /* Default features = the rest; a header name made of digits wins over the index. */
    t2_csv_params r = t2_csv_params_default();
    r.label_column = "0";
    ds = expect("x,0,w\n1,3,2\n4,0,5\n", &r, T2_OK, "");
    if (ds) {
        float x[2];
        int32_t l;
        CHECK_OK(t2_dataset_get(ds, 0, x, &l));
        CHECK(x[0] == 1 && x[1] == 2 && l == 3 && t2_dataset_num_classes(ds) == 4);
        t2_dataset_free(ds);
    }
}

static void bad_files(void)
{
    const char *tg[] = {"y"};
    t2_csv_params p = t2_csv_params_default();
    p.target_columns = tg;
    p.ntargets = 1;
    p.label_column = "cls";
    const char *hdr = "a,b,y,cls\n";
    char buf[4096];
#define BAD(body, rc, msg)                                                                        \
    do {                                                                                          \
        snprintf(buf, sizeof buf, "%s%s", hdr, body);                                             \
        expect(buf, &p, rc, msg);                                                                 \
    } while (0)
    BAD("1,2,3,0\n1,abc,3,0\n", T2_EFORMAT, ":3:2 (column 'b'): 'abc' is not a number");
    BAD("1,2,3,0\n1,2.5x,3,0\n", T2_EFORMAT, ":3:2 (column 'b'): '2.5x' is not a number");
    /* Hexadecimal is no decimal number (strtof read "0x10" as 16). */
    BAD("1,0x10,3,0\n", T2_EFORMAT, ":2:2 (column 'b'): '0x10' is not a number");
    BAD("1,-0X1p4,3,0\n", T2_EFORMAT, ":2:2 (column 'b'): '-0X1p4' is not a number");
    BAD("1,,3,0\n", T2_EFORMAT, ":2:2 (column 'b'): empty cell");
    BAD("1,\"\",3,0\n", T2_EFORMAT, ":2:2 (column 'b'): empty cell");
    BAD("1,2,3,0\n1,2,3,\n", T2_EFORMAT, ":3:4 (column 'cls'): empty cell");
    BAD("1,2,nan,0\n", T2_EFORMAT, ":2:3 (column 'y'): 'nan' is not a finite float32 number");
    BAD("1,2,1e39,0\n", T2_EFORMAT, ":2:3 (column 'y'): '1e39' is not a finite float32 number");
    BAD("1,2,3,-1\n", T2_EFORMAT, ":2:4 (column 'cls'): label '-1' is not a non-negative integer");
    BAD("1,2,3,1.5\n", T2_EFORMAT, ":2:4 (column 'cls'): label '1.5' is not a non-negative integer");
    BAD("1,2,3,cat\n", T2_EFORMAT, ":2:4 (column 'cls'): label 'cat' is not a non-negative integer");
    BAD("1,2,3,0\n1,2,3\n", T2_EFORMAT, ":3: row has 3 fields, the header has 4");
    BAD("1,2,3,0\n1,2,3,0,9\n", T2_EFORMAT, ":3: row has 5 fields, the header has 4");
    BAD("1,\"2\"x,3,0\n", T2_EFORMAT,
        ":2: malformed CSV near byte 6 of the line (error parsing data while strict checking enabled): a quote "
        "inside an unquoted field, or text after a closing quote");
    BAD("1,2,3,0\n1,\"2,3,0\n", T2_EFORMAT, ":3: a quoted field is not closed before the end of the file");
    BAD("", T2_EFORMAT, ": no data rows");
    /* A quoted newline in an earlier row: later errors still name the right line. */
    snprintf(buf, sizeof buf, "a,b,y,cls,note\n1,2,3,0,\"two\nlines\"\n1,2,3,0,\"x\"\n1,q,3,0,x\n");
    const char *ab[] = {"a", "b"};
    p.feature_columns = ab;
    p.nfeatures = 2;
    expect(buf, &p, T2_EFORMAT, ":5:2 (column 'b'): 'q' is not a number");
    /* ... and a text cell spanning lines is located where it starts. */
    p.feature_columns = NULL;
    p.nfeatures = 0;
    expect(buf, &p, T2_EFORMAT, ":2:5 (column 'note'): 'two?lines' is not a number");
    /* A long cell is shown cut. */
    BAD("1,2,3,0\n1,0123456789012345678901234567890123456789012345678901234567890123456789x,3,0\n", T2_EFORMAT,
        ":3:2 (column 'b'): '0123456789012345678901234567890123456789...' is not a number");
    /* Column selection. */
    const char *missing[] = {"z"};
    p.target_columns = missing;
    BAD("1,2,3,0\n", T2_ENOTFOUND, ": no target column 'z'; the columns are: 'a', 'b', 'y', 'cls'");
    const char *big[] = {"9"};
    p.target_columns = big;
    BAD("1,2,3,0\n", T2_ENOTFOUND,
        ": target column index 9 is out of range: the file has 4 columns ('a', 'b', 'y', 'cls')");
    const char *twice[] = {"cls"};
    p.target_columns = twice;
    BAD("1,2,3,0\n", T2_EINVAL, ": column 4 ('cls') is selected twice");
    p.target_columns = tg;
    const char *feats[] = {"a", "b", "y"};
    p.feature_columns = feats;
    p.nfeatures = 3;
    BAD("1,2,3,0\n", T2_EINVAL, ": column 3 ('y') is selected twice");
    p.feature_columns = NULL;
    p.nfeatures = 0;
    hdr = "a,a,y,cls\n"; /* a name used twice is fine while no one selects it */
    t2_dataset_free(expect("a,a,y,cls\n1,2,3,0\n", &p, T2_OK, ""));
    const char *dup[] = {"a"};
    p.feature_columns = dup;
    p.nfeatures = 1;
    BAD("1,2,3,0\n", T2_EFORMAT, ": feature column 'a' is ambiguous: columns 1 and 2 of the header share the name");
    p.feature_columns = NULL;
    p.nfeatures = 0;
    hdr = "y,cls\n";
    BAD("1,0\n", T2_EINVAL, ": no feature columns (every column is a target or the label)");
    /* Without a header, names cannot match. */
    t2_csv_params q = t2_csv_params_default();
    q.has_header = 0;
    q.label_column = "cls";
    expect("1,2\n", &q, T2_ENOTFOUND, ": no label column 'cls' (no header: name columns by 0-based index); the columns are: indices 0..1");
    q.label_column = NULL;
    expect("1,2\nx,3\n", &q, T2_EFORMAT, ":2:1: 'x' is not a number");
    q.delimiter = '"';
    expect("1,2\n", &q, T2_EINVAL, ": delimiter 34 cannot separate fields");
#undef BAD
    /* Too many columns. */
    size_t cols = 65537, len = cols * 2 + 2;
    char *wide = malloc(len);
    for (size_t i = 0; i < cols; i++) {
        wide[2 * i] = '1';
        wide[2 * i + 1] = i + 1 < cols ? ',' : '\n';
    }
    wide[2 * cols] = '\0';
    t2_csv_params w = t2_csv_params_default();
    w.has_header = 0;
    expect(wide, &w, T2_EFORMAT, ":1: 65537 columns (at most 65536)");
    free(wide);
    /* An unclosed quote swallowing 2 MB of lines: refused at the field bound, not read whole. */
    size_t nbig = 2u << 20;
    char *tail = malloc(nbig + 32);
    strcpy(tail, "a\n\"");
    for (size_t i = 3; i < nbig; i++) tail[i] = i % 64 == 63 ? '\n' : 'x';
    tail[nbig] = '\0';
    w.has_header = 1;
    expect(tail, &w, T2_EFORMAT, ":16386: a field longer than 1048576 bytes (an unclosed quote?)");
    free(tail);
}

static void not_regular(void)
{
    t2_dataset *ds = NULL;
    const char *fifo = tpath("fifo.csv");
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK_RC(t2_dataset_csv_open(&ds, fifo, NULL), T2_EIO); /* must not block */
    CHECK(strstr(t2_errmsg(), "fifo.csv: not a regular file") != NULL);
    CHECK_RC(t2_dataset_csv_open(&ds, tdir, NULL), T2_EIO);
    CHECK_RC(t2_dataset_csv_open(&ds, tpath("absent.csv"), NULL), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "absent.csv: No such file or directory") != NULL);
}

/* Random damage to a good file: every result is a dataset or a clean, located refusal. */
static void mutations(void)
{
    const char *good = "a,b,y,cls\n1.5,\"2\",3,0\n\"4\",5e-1,-6,1\n7,8,9,2\n";
    const char alphabet[] = ",\"\n\r ;x.-e9\t";
    const char *tg[] = {"y"};
    t2_csv_params p = t2_csv_params_default();
    p.target_columns = tg;
    p.ntargets = 1;
    p.label_column = "cls";
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int ok = 0, refused = 0;
    for (int it = 0; it < 400; it++) {
        char buf[256];
        size_t n = strlen(good);
        memcpy(buf, good, n + 1);
        int edits = 1 + it % 4;
        for (int e = 0; e < edits; e++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(s >> 33) % (n + 1);
            char c = alphabet[(s >> 20) % (sizeof alphabet - 1)];
            int op = (int)((s >> 10) % 3);
            if (op == 0 && pos < n) buf[pos] = c;
            else if (op == 1 && n + 1 < sizeof buf) {
                memmove(buf + pos + 1, buf + pos, n - pos + 1);
                buf[pos] = c;
                n++;
            } else if (pos < n) {
                memmove(buf + pos, buf + pos + 1, n - pos);
                n--;
            }
        }
        const char *path = write_file("m.csv", buf);
        t2_dataset *ds = NULL;
        int rc = t2_dataset_csv_open(&ds, path, &p);
        if (rc == 0) {
            ok++;
            CHECK(ds && t2_dataset_len(ds) >= 1 && t2_dataset_target_width(ds) == 1);
            int ndim, shape[3];
            CHECK_OK(t2_dataset_sample_shape(ds, &ndim, shape));
            float *x = malloc((size_t)shape[0] * sizeof *x), t;
            for (int64_t i = 0; i < t2_dataset_len(ds); i++) {
                CHECK_OK(t2_dataset_get_sample(ds, i, x, &t, NULL));
                for (int j = 0; j < shape[0]; j++) CHECK(isfinite(x[j]));
                CHECK(isfinite(t));
            }
            free(x);
            t2_dataset_free(ds);
        } else {
            refused++;
            CHECK(ds == NULL && rc < 0);
            CHECK(strncmp(t2_errmsg(), path, strlen(path)) == 0); /* every message names the file */
        }
    }
    CHECK(ok > 10 && refused > 100); /* the damage is not all harmless, nor all fatal */
    printf("mutations: %d read, %d refused\n", ok, refused);
}

int main(void)
{
    tdir_make();
    good_files();
    bad_files();
    not_regular();
    mutations();
    tdir_cleanup();
    return check_report("test_data_csv");
}
