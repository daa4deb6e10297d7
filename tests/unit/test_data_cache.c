/* test_data_cache.c — a dataset cache is only trusted for the files it was made from and only
 * when no one else could have written it: small IDX fixtures written here, cached through
 * t2_dataset_idx_cached, then changed, removed, opened with other sources, made group/world
 * writable, handed to another owner and replaced by a symbolic link. */
#include "test_data_util.h" /* first: it defines _DEFAULT_SOURCE */
#include <fcntl.h>
#include <sys/stat.h>
#include "check.h"

#define CHECK_MSG(expr, want, needle)                                                              \
    do {                                                                                           \
        CHECK_RC(expr, want);                                                                      \
        if (!strstr(t2_errmsg(), needle)) {                                                        \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, t2_errmsg(), needle); \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

static const char *kind(const t2_dataset *ds) { return ds ? ds->ops->kind : "none"; }

static float pixel0(const t2_dataset *ds, int64_t i)
{
    float x[64];
    int32_t lab;
    return ds && t2_dataset_get(ds, i, x, &lab) == T2_OK ? x[0] : -1.0f;
}

/* The one cache file in dir (its path in buf); 0 when there is not exactly one. */
static int only_cache(const char *dir, char *buf, size_t len)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls '%s'/*.t2c 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    int n = 0;
    char line[600];
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(buf, len, "%s", line);
        n++;
    }
    if (p) pclose(p);
    return n == 1;
}

static void test_private_and_reused(const char *cdir, char *cache, size_t len)
{
    t2_dataset *ds = NULL;
    make_pair(tpath("a_i.gz"), tpath("a_l.gz"), 20, 2, 3, 5, 1);
    CHECK_OK(t2_dataset_idx_cached(&ds, tpath("a_i.gz"), tpath("a_l.gz"), cdir));
    CHECK(!strcmp(kind(ds), "cache") && t2_dataset_len(ds) == 20 && t2_dataset_num_classes(ds) == 5);
    t2_dataset_free(ds);
    /* Made private: the directories it created 0700, the file 0600. */
    struct stat st;
    CHECK(stat(cdir, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(stat(tpath("cache"), &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK(only_cache(cdir, cache, len));
    CHECK(strstr(cache, "/a_i-") != NULL); /* named after the images file, without .gz */
    CHECK(stat(cache, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid());
    /* Opened again: the same file, not rewritten. */
    ino_t ino = st.st_ino;
    CHECK_OK(t2_dataset_idx_cached(&ds, tpath("a_i.gz"), tpath("a_l.gz"), cdir));
    CHECK(!strcmp(kind(ds), "cache") && pixel0(ds, 1) == 7.0f / 255.0f);
    t2_dataset_free(ds);
    CHECK(stat(cache, &st) == 0 && st.st_ino == ino);
}

static void test_stale_sources(const char *cdir, const char *cache)
{
    t2_dataset *ds = NULL;
    const char *src[2] = {tpath("a_i.gz"), tpath("a_l.gz")}, *other[2] = {tpath("b_i"), tpath("b_l")};
    CHECK_OK(t2_dataset_cache_open_sources(&ds, cache, src, 2));
    t2_dataset_free(ds);
    /* A cache recording other sources is not used for these. */
    make_pair(other[0], other[1], 20, 2, 3, 5, 0);
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, other, 2), T2_ESTATE, "made from another file than");
    CHECK(ds == NULL);
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 1), T2_ESTATE, "made from 2 source file(s), not from these 1");
    /* Another file copied to the name of the cache of these sources is not used either. */
    t2_dataset *b = NULL;
    CHECK_OK(t2_dataset_idx_open(&b, other[0], other[1]));
    CHECK_OK(t2_dataset_cache_write_sources(b, tpath("b.t2c"), other, 2));
    t2_dataset_free(b);
    CHECK(rename(tpath("b.t2c"), cache) == 0);
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 2), T2_ESTATE, "made from another file than");
    CHECK_OK(t2_dataset_idx_cached(&ds, src[0], src[1], cdir)); /* rebuilt */
    t2_dataset_free(ds);
    CHECK_OK(t2_dataset_cache_open_sources(&ds, cache, src, 2));
    t2_dataset_free(ds);

    /* The images change in place (same size and inode, new pixels and mtime): stale. */
    make_pair(src[0], tpath("unused_l"), 20, 2, 3, 5, 0); /* raw now: other bytes */
    struct timespec times[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    CHECK(utimensat(AT_FDCWD, src[0], times, 0) == 0);
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 2), T2_ESTATE, "changed since the cache was made");
    CHECK(strstr(t2_errmsg(), "modified 1000000000.000000000") != NULL);
    CHECK_OK(t2_dataset_idx_cached(&ds, src[0], src[1], cdir));
    CHECK(!strcmp(kind(ds), "cache"));
    t2_dataset_free(ds);
    CHECK_OK(t2_dataset_cache_open_sources(&ds, cache, src, 2));
    t2_dataset_free(ds);

    /* Sources gone: refused although a valid cache of them is still there. */
    CHECK(rename(src[0], tpath("moved")) == 0);
    CHECK_MSG(t2_dataset_idx_cached(&ds, src[0], src[1], cdir), T2_ENOTFOUND, "a_i.gz");
    CHECK(ds == NULL);
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 2), T2_ENOTFOUND, "a_i.gz");
    CHECK(rename(tpath("moved"), src[0]) == 0);
}

static void test_refused(const char *cdir, const char *cache)
{
    t2_dataset *ds = NULL;
    const char *src[2] = {tpath("a_i.gz"), tpath("a_l.gz")};
    struct stat st;
    /* Writable by others: refused by every open, and rebuilt private by t2_dataset_idx_cached. */
    CHECK(chmod(cache, 0666) == 0);
    CHECK_MSG(t2_dataset_cache_open(&ds, cache), T2_EIO, "refused: writable by everyone (mode 0666)");
    CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 2), T2_EIO, "refused");
    CHECK(chmod(cache, 0620) == 0);
    CHECK_MSG(t2_dataset_cache_open(&ds, cache), T2_EIO, "refused: writable by its group (mode 0620)");
    CHECK_OK(t2_dataset_idx_cached(&ds, src[0], src[1], cdir));
    t2_dataset_free(ds);
    CHECK(stat(cache, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* Owned by someone else: refused. As root, give it away; otherwise a root-owned file stands in. */
    if (geteuid() == 0) {
        CHECK(chown(cache, 65534, 65534) == 0);
        CHECK_MSG(t2_dataset_cache_open(&ds, cache), T2_EIO, "refused: owned by uid 65534, not by this user (uid 0)");
        CHECK_MSG(t2_dataset_cache_open_sources(&ds, cache, src, 2), T2_EIO, "owned by uid 65534");
        CHECK_OK(t2_dataset_idx_cached(&ds, src[0], src[1], cdir));
        t2_dataset_free(ds);
        CHECK(stat(cache, &st) == 0 && st.st_uid == 0);
    } else {
        CHECK_MSG(t2_dataset_cache_open(&ds, "/etc/passwd"), T2_EIO, "refused: owned by uid 0");
    }

    /* A symbolic link at the cache's name is not followed, even to a good cache of ours. */
    CHECK(rename(cache, tpath("real.t2c")) == 0);
    CHECK(symlink(tpath("real.t2c"), cache) == 0);
    CHECK_MSG(t2_dataset_cache_open(&ds, cache), T2_EIO, "a symbolic link: refused");
    CHECK_OK(t2_dataset_idx_cached(&ds, src[0], src[1], cdir)); /* replaced by a file */
    t2_dataset_free(ds);
    CHECK(lstat(cache, &st) == 0 && S_ISREG(st.st_mode));
}

static void test_default_dir(void)
{
    char buf[600], *home = getenv("T2EXP_HOME") ? strdup(getenv("T2EXP_HOME")) : NULL;
    setenv("T2EXP_HOME", "/x/home", 1);
    CHECK_OK(t2_dataset_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, "/x/home/cache"));
    unsetenv("T2EXP_HOME");
    setenv("XDG_CACHE_HOME", "/x/xdg", 1);
    CHECK_OK(t2_dataset_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, "/x/xdg/t2exp"));
    setenv("XDG_CACHE_HOME", "relative", 1);
    setenv("HOME", "/x/me", 1);
    CHECK_OK(t2_dataset_cache_dir(buf, sizeof buf));
    CHECK(!strcmp(buf, "/x/me/.cache/t2exp"));
    CHECK_RC(t2_dataset_cache_dir(buf, 5), T2_EINVAL);
    /* With no cache_dir, t2_dataset_idx_cached uses it. */
    setenv("T2EXP_HOME", tpath("home"), 1);
    t2_dataset *ds = NULL;
    CHECK_OK(t2_dataset_idx_cached(&ds, tpath("a_i.gz"), tpath("a_l.gz"), NULL));
    t2_dataset_free(ds);
    CHECK(only_cache(tpath("home/cache"), buf, sizeof buf));
    if (home) setenv("T2EXP_HOME", home, 1);
    else unsetenv("T2EXP_HOME");
    free(home);
}

int main(void)
{
    tdir_make();
    char cache[600], cdir[600];
    snprintf(cdir, sizeof cdir, "%s", tpath("cache/sub")); /* tpath's buffers are reused */
    test_private_and_reused(cdir, cache, sizeof cache);
    test_stale_sources(cdir, cache);
    test_refused(cdir, cache);
    test_default_dir();
    tdir_cleanup();
    return check_report("test_data_cache");
}
