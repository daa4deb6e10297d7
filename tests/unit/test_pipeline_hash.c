/* test_pipeline_hash.c — content hashes of inputs: files and directories by content and names,
 * not by times; symlinks inside a directory by their target text; FIFOs refused; the stage hash
 * and its parts. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, symlink */
#include <fcntl.h>
#include <signal.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "pipeline/hash.h"

static char dir[256];

static void put(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void hash_of(const char *name, char hex[65])
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    hex[0] = '\0';
    CHECK_OK(t2__hash_path(p, hex));
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb, (void)flag, (void)f;
    return remove(p);
}

static void test_paths(void)
{
    char a[65], b[65], c[65];
    char p[512];
    snprintf(p, sizeof p, "%s/d", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/d/sub", dir);
    CHECK(mkdir(p, 0700) == 0);
    put("d/x.txt", "one");
    put("d/sub/y.txt", "two");
    hash_of("d", a);
    CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64);
    /* times do not count */
    snprintf(p, sizeof p, "%s/d/x.txt", dir);
    struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, p, ts, 0) == 0);
    hash_of("d", b);
    CHECK_STR(b, a);
    /* contents do */
    put("d/sub/y.txt", "Two");
    hash_of("d", b);
    CHECK(strcmp(a, b) != 0);
    put("d/sub/y.txt", "two");
    hash_of("d", b);
    CHECK_STR(b, a);
    /* names do: the same bytes under another name */
    char from[512], to[512];
    snprintf(from, sizeof from, "%s/d/x.txt", dir);
    snprintf(to, sizeof to, "%s/d/z.txt", dir);
    CHECK(rename(from, to) == 0);
    hash_of("d", c);
    CHECK(strcmp(a, c) != 0);
    CHECK(rename(to, from) == 0);
    /* a file's hash is not its directory's; a directory "a/b" differs from a file "a" + "b" */
    hash_of("d/x.txt", c);
    CHECK(strcmp(a, c) != 0);
    /* a symlink inside counts by its target text and is not followed */
    snprintf(p, sizeof p, "%s/d/link", dir);
    CHECK(symlink("/nonexistent/target", p) == 0);
    hash_of("d", b);
    CHECK(strcmp(a, b) != 0);
    CHECK(unlink(p) == 0);
    /* a FIFO is refused, naming it; a missing input is T2_ENOTFOUND */
    snprintf(p, sizeof p, "%s/d/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    snprintf(p, sizeof p, "%s/d", dir);
    CHECK_RC(t2__hash_path(p, c), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "/d/fifo: a FIFO; inputs are files and directories") != NULL);
    snprintf(p, sizeof p, "%s/d/fifo", dir);
    CHECK_RC(t2__hash_path(p, c), T2_EINVAL);
    CHECK(unlink(p) == 0);
    snprintf(p, sizeof p, "%s/missing", dir);
    CHECK_RC(t2__hash_path(p, c), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "missing: does not exist") != NULL);
    hash_of("d", b);
    CHECK_STR(b, a);
    /* the known SHA-256 of "abc" */
    CHECK_OK(t2__sha256_hex("abc", 3, c));
    CHECK_STR(c, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_stage_hash(void)
{
    put("in.txt", "data");
    char text[1024];
    snprintf(text, sizeof text,
             "name: h\nstages:\n  a: {run: [cat, in.txt], inputs: [in.txt]}\n  b: {run: [cat, in.txt], inputs: [in.txt], after: [a]}\n");
    t2__flow *f = NULL;
    CHECK_OK(t2__flow_load_string(text, strlen(text), "h.yaml", dir, &f));
    if (!f) return;
    t2__stage_hash ha, hb;
    CHECK_OK(t2__stage_hash_compute(f, 0, f->stages[0].argv, NULL, &ha));
    CHECK_OK(t2__stage_hash_compute(f, 1, f->stages[1].argv, NULL, &hb));
    /* after: is not part of the definition: same definition, same inputs, same hash */
    CHECK_STR(ha.def, hb.def);
    CHECK_STR(ha.total, hb.total);
    CHECK(ha.refs[0] == '\0');
    CHECK(ha.inputs && ha.inputs->n == 1 && !strcmp(ha.inputs->keys[0], "in.txt"));
    t2__stage_hash_free(&hb);
    put("in.txt", "Data");
    CHECK_OK(t2__stage_hash_compute(f, 1, f->stages[1].argv, NULL, &hb));
    CHECK_STR(ha.def, hb.def);
    CHECK(strcmp(ha.total, hb.total) != 0);
    t2__stage_hash_free(&ha);
    t2__stage_hash_free(&hb);
    char p[512];
    snprintf(p, sizeof p, "%s/in.txt", dir);
    CHECK(unlink(p) == 0);
    CHECK_RC(t2__stage_hash_compute(f, 0, f->stages[0].argv, NULL, &ha), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "stage a: input ") != NULL && ha.inputs == NULL);
    t2__flow_free(f);
}

/* What a hostile input list may hold: an empty directory (qsort of no names must not get NULL),
 * a /proc file whose size (0) lies about what it reads, and a stop request while hashing. */
static void test_hostile(void)
{
    char p[512], a[65], b[65], c[65];
    snprintf(p, sizeof p, "%s/empty", dir);
    CHECK(mkdir(p, 0700) == 0);
    hash_of("empty", a);
    CHECK(strlen(a) == 64);
    snprintf(p, sizeof p, "%s/outer", dir);
    CHECK(mkdir(p, 0700) == 0);
    snprintf(p, sizeof p, "%s/outer/inner", dir);
    CHECK(mkdir(p, 0700) == 0);
    hash_of("outer", b);
    CHECK(strcmp(a, b) != 0);
    put("outer/inner/f", "");
    hash_of("outer", c);
    CHECK(strcmp(b, c) != 0); /* an empty file is an entry */

    /* size 0, yet it reads a line: refused, naming it, rather than hashed (for
     * /proc/self/pagemap that would take minutes) */
    if (access("/proc/self/stat", R_OK) == 0) {
        CHECK_RC(t2__hash_path("/proc/self/stat", c), T2_EINVAL);
        CHECK(strstr(t2_errmsg(), "input /proc/self/stat: reads more than its size of 0 bytes") != NULL);
    }

    /* a stop request ends hashing with T2_ESTOPPED, for a file (checked between chunks) and a
     * directory (between entries) */
    snprintf(p, sizeof p, "%s/big", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 64 << 20) == 0);
    if (fd >= 0) close(fd);
    volatile sig_atomic_t stop = 1;
    t2__hash_stop_on(&stop);
    CHECK_RC(t2__hash_path(p, c), T2_ESTOPPED);
    CHECK(strstr(t2_errmsg(), "/big: hashing stopped") != NULL);
    snprintf(p, sizeof p, "%s/outer", dir);
    char d[65];
    CHECK_RC(t2__hash_path(p, d), T2_ESTOPPED);
    CHECK(strstr(t2_errmsg(), "hashing stopped") != NULL);
    /* once the flag is clear (or unset) hashing is as before */
    stop = 0;
    hash_of("outer", b);
    CHECK_STR(b, c);
    t2__hash_stop_on(NULL);
    hash_of("outer", a);
    CHECK_STR(a, c);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/t2hash.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_paths();
    test_stage_hash();
    test_hostile();
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return check_report("test_pipeline_hash");
}
