/* hash.c — SHA-256 content hashes of a stage's definition, references and inputs (hash.h). */
#define _POSIX_C_SOURCE 200809L /* openat, fdopendir, readlinkat */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hash.h"
#include "t2exp/error.h"

#define READ_CHUNK (1 << 20)

/* Set by `pipeline run` while its signal handlers are in place (t2__hash_stop_on): hashing a
 * large input can take minutes, and a Ctrl-C or SIGTERM must not wait for it. Checked between
 * chunks of READ_CHUNK bytes and between directory entries: milliseconds apart. */
static const volatile sig_atomic_t *g_hash_stop;

void t2__hash_stop_on(const volatile sig_atomic_t *flag) { g_hash_stop = flag; }

static int stopping(const char *shown)
{
    if (g_hash_stop && *g_hash_stop)
        return t2_seterr(T2_ESTOPPED, "input %s: hashing stopped (the pipeline run is stopping)", shown);
    return 0;
}

static void to_hex(const unsigned char *md, char hex[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[64] = '\0';
}

static int finish(EVP_MD_CTX *ctx, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    if (!EVP_DigestFinal_ex(ctx, md, &len) || len != 32) return t2_seterr(T2_EIO, "sha256: digest failed");
    to_hex(md, hex);
    return 0;
}

int t2__sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
        return t2_seterr(T2_EIO, "sha256: digest failed");
    to_hex(md, hex);
    return 0;
}

typedef struct walk {
    EVP_MD_CTX *ctx;
    unsigned char *buf;
    size_t entries;
    const char *root; /* for messages */
} walk;

static int feed(walk *w, const void *p, size_t n)
{
    return EVP_DigestUpdate(w->ctx, p, n) ? 0 : t2_seterr(T2_EIO, "sha256: digest failed");
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : "a special file";
}

/* The contents of the regular file fd (closed here), which fstat said has size bytes. A file
 * that reads more or fewer bytes than its size is refused: a /proc or /sys file (size 0, contents
 * made up as they are read, some without end, like /proc/self/pagemap) is no data file, and a
 * file being written while it is hashed has no one content to hash. */
static int feed_file(walk *w, int fd, const char *shown, off_t size)
{
    int rc = 0;
    unsigned long long total = 0;
    for (;;) {
        if ((rc = stopping(shown))) break;
        ssize_t r = read(fd, w->buf, READ_CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = t2_seterr(T2_EIO, "input %s: cannot read: %s", shown, strerror(errno));
            break;
        }
        if (r == 0) break;
        total += (unsigned long long)r;
        if (total > (unsigned long long)size) {
            rc = t2_seterr(T2_EINVAL, "input %s: reads more than its size of %lld bytes: a file whose contents "
                           "are made up as it is read (/proc, /sys) or one being written; inputs are regular "
                           "files and directories", shown, (long long)size);
            break;
        }
        if ((rc = feed(w, w->buf, (size_t)r))) break;
    }
    if (!rc && total != (unsigned long long)size)
        rc = t2_seterr(T2_EINVAL, "input %s: read %llu bytes, not its size of %lld: it changed while being hashed",
                       shown, total, (long long)size);
    close(fd);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int feed_dir(walk *w, int dfd, const char *shown, int depth);

/* One entry of a directory, named name in dfd. */
static int feed_entry(walk *w, int dfd, const char *name, const char *shown, int depth)
{
    struct stat st;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", shown, name);
    int rc = stopping(w->root); /* a tree of many small files takes long too */
    if (rc) return rc;
    if (++w->entries > T2__HASH_MAX_ENTRIES)
        return t2_seterr(T2_EINVAL, "input %s: more than %d entries; an input directory this big is "
                         "likely a mistake", w->root, T2__HASH_MAX_ENTRIES);
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return t2_seterr(T2_EIO, "input %s: cannot stat: %s", path, strerror(errno));
    char head[64];
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(dfd, name, target, sizeof target);
        if (n < 0 || (size_t)n >= sizeof target)
            return t2_seterr(T2_EIO, "input %s: cannot read the link: %s", path, n < 0 ? strerror(errno) : "too long");
        if ((rc = feed(w, "L", 1)) || (rc = feed(w, name, strlen(name) + 1)) || (rc = feed(w, target, (size_t)n)))
            return rc;
        return feed(w, "", 1);
    }
    if (S_ISDIR(st.st_mode)) {
        if (depth >= T2__HASH_MAX_DEPTH)
            return t2_seterr(T2_EINVAL, "input %s: nested deeper than %d directories", path, T2__HASH_MAX_DEPTH);
        int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return t2_seterr(T2_EIO, "input %s: cannot open: %s", path, strerror(errno));
        if ((rc = feed(w, "D", 1)) || (rc = feed(w, name, strlen(name) + 1))) {
            close(fd);
            return rc;
        }
        return feed_dir(w, fd, path, depth + 1);
    }
    if (!S_ISREG(st.st_mode))
        return t2_seterr(T2_EINVAL, "input %s: %s; inputs are files and directories", path, kind_of(st.st_mode));
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return t2_seterr(T2_EIO, "input %s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* replaced since the lstat */
        close(fd);
        return t2_seterr(T2_EINVAL, "input %s: changed while being hashed", path);
    }
    snprintf(head, sizeof head, "%lld", (long long)st.st_size);
    if ((rc = feed(w, "F", 1)) || (rc = feed(w, name, strlen(name) + 1)) || (rc = feed(w, head, strlen(head) + 1))) {
        close(fd);
        return rc;
    }
    return feed_file(w, fd, path, st.st_size);
}

/* Every entry of the directory fd (closed here), sorted by name. */
static int feed_dir(walk *w, int fd, const char *shown, int depth)
{
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return t2_seterr(T2_EIO, "input %s: cannot list: %s", shown, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (n + w->entries >= T2__HASH_MAX_ENTRIES) {
            rc = t2_seterr(T2_EINVAL, "input %s: more than %d entries; an input directory this big is likely a "
                           "mistake", w->root, T2__HASH_MAX_ENTRIES);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **g = realloc(names, cap * sizeof *g);
            if (!g) {
                rc = t2_seterr(T2_ENOMEM, "input %s: out of memory", shown);
                break;
            }
            names = g;
        }
        if (!(names[n] = strdup(e->d_name))) {
            rc = t2_seterr(T2_ENOMEM, "input %s: out of memory", shown);
            break;
        }
        n++;
    }
    if (!rc && errno) rc = t2_seterr(T2_EIO, "input %s: cannot list: %s", shown, strerror(errno));
    /* names is NULL for an empty directory, and qsort's pointer must not be NULL even for 0. */
    if (!rc && n > 1) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; !rc && i < n; i++) rc = feed_entry(w, dirfd(d), names[i], shown, depth);
    if (!rc) rc = feed(w, "E", 1); /* end of directory: a/ b differs from a/b */
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

int t2__hash_path(const char *path, char hex[65])
{
    walk w = {.root = path};
    int rc;
    if (!(w.ctx = EVP_MD_CTX_new()) || !(w.buf = malloc(READ_CHUNK))) {
        EVP_MD_CTX_free(w.ctx);
        return t2_seterr(T2_ENOMEM, "input %s: out of memory", path);
    }
    if (!EVP_DigestInit_ex(w.ctx, EVP_sha256(), NULL)) {
        rc = t2_seterr(T2_EIO, "sha256: init failed");
        goto done;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rc = t2_seterr(e == ENOENT ? T2_ENOTFOUND : T2_EIO, "input %s: %s", path,
                       e == ENOENT ? "does not exist" : strerror(e));
        goto done;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = t2_seterr(T2_EIO, "input %s: cannot stat: %s", path, strerror(errno));
        close(fd);
    } else if (S_ISDIR(st.st_mode)) {
        rc = feed(&w, "D", 1);
        if (rc) close(fd);
        else rc = feed_dir(&w, fd, path, 0);
    } else if (S_ISREG(st.st_mode)) {
        rc = feed(&w, "F", 1);
        if (rc) close(fd);
        else rc = feed_file(&w, fd, path, st.st_size);
    } else {
        close(fd);
        rc = t2_seterr(T2_EINVAL, "input %s: %s; inputs are files and directories", path, kind_of(st.st_mode));
    }
    if (!rc) rc = finish(w.ctx, hex);
done:
    EVP_MD_CTX_free(w.ctx);
    free(w.buf);
    return rc;
}

void t2__stage_hash_free(t2__stage_hash *h)
{
    if (!h) return;
    t2__val_free(h->inputs);
    h->inputs = NULL;
}

static int add_input(t2__val *m, const char *name, const char *path)
{
    char hex[65];
    int rc = t2__hash_path(path, hex);
    if (rc) return rc;
    return t2__val_map_set(m, name, t2__val_string(hex)) ? t2_seterr(T2_ENOMEM, "hash: out of memory") : 0;
}

int t2__stage_hash_compute(const t2__flow *f, size_t i, char *const *argv, const t2__val *hparams,
                           t2__stage_hash *h)
{
    const t2__flow_stage *s = &f->stages[i];
    memset(h, 0, sizeof *h);
    int rc = t2__sha256_hex(s->def_json, strlen(s->def_json), h->def);
    if (rc) return rc;
    if (s->nrefs) {
        /* The resolved values as JSON: {"argv": [...], "hparams": {...}}. */
        t2__val *r = t2__val_map(), *a = t2__val_list();
        char *json = NULL;
        rc = r && a ? 0 : T2_ENOMEM;
        for (size_t k = 0; !rc && k < s->argc; k++) rc = t2__val_list_append(a, t2__val_string(argv[k]));
        if (!rc) {
            rc = t2__val_map_set(r, "argv", a);
            a = NULL;
        }
        if (!rc && hparams) rc = t2__val_map_set(r, "hparams", t2__val_copy(hparams));
        if (!rc) rc = t2__val_to_json(r, &json, NULL);
        if (!rc) rc = t2__sha256_hex(json, strlen(json), h->refs);
        free(json);
        t2__val_free(r);
        t2__val_free(a);
        if (rc) return rc == T2_ENOMEM ? t2_seterr(rc, "hash: out of memory") : rc;
    }
    if (!(h->inputs = t2__val_map())) return t2_seterr(T2_ENOMEM, "hash: out of memory");
    for (size_t k = 0; !rc && k < s->ninputs; k++) rc = add_input(h->inputs, s->inputs[k].text, s->inputs[k].abs);
    if (!rc && s->kind == T2__STAGE_EXPERIMENT) {
        rc = add_input(h->inputs, "experiment.config", s->config);
        if (!rc) rc = add_input(h->inputs, "experiment.trial", s->trial);
    }
    char *ij = NULL;
    if (!rc) rc = t2__val_to_json(h->inputs, &ij, NULL);
    if (!rc) {
        size_t len = 64 + 1 + 64 + 1 + strlen(ij) + 1;
        char *all = malloc(len);
        if (!all) rc = t2_seterr(T2_ENOMEM, "hash: out of memory");
        else {
            snprintf(all, len, "%s|%s|%s", h->def, h->refs, ij);
            rc = t2__sha256_hex(all, strlen(all), h->total);
            free(all);
        }
    }
    free(ij);
    if (rc) {
        t2__stage_hash_free(h);
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", t2_errmsg());
        return t2_seterr(rc, "stage %s: %s", s->name, msg);
    }
    return 0;
}
