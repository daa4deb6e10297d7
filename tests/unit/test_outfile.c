/* test_outfile.c — t2__outfile (framework/common/outfile.c): an output never replaces one of the
 * inputs, under any name (the same path, a symlink, a hard link, "./name"), and appears only at
 * commit: before it, or after an abort or a refusal, the destination is as it was and no
 * temporary file is left; through a symlink to a file the file is replaced and the link stays;
 * the mode is the one asked for, narrowed by the umask. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "framework/common/outfile.h"

static char dir[2048];

static void path_in(char *buf, const char *name)
{
    if (snprintf(buf, 4096, "%.2047s/%.1000s", dir, name) >= 4096) buf[0] = '\0';
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* The file's text (up to 255 bytes), "" if it cannot be read. */
static const char *get(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Names in dir containing ".tmp-". */
static int temps(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) n += strstr(e->d_name, ".tmp-") != NULL;
    if (d) closedir(d);
    return n;
}

static void refuse(const char *out, const char *in, const char *want_text)
{
    t2__outfile o;
    const char *inputs[2] = {"/nonexistent/input", in};
    CHECK_RC(t2__outfile_open(&o, out, 0666, inputs, 2), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), want_text) != NULL);
    CHECK(o.fd == -1);
    t2__outfile_abort(&o); /* harmless after a failed open */
    CHECK(temps() == 0);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/t2out-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char in[4096], out[4096], slink[4096], hard[4096], target[4096], sub[4096];
    path_in(in, "input.tar");
    path_in(out, "out.bin");
    put(in, "checkpoint bytes");
    mode_t old_mask = umask(022);

    /* Refused under every name of the input; the input is untouched. */
    refuse(in, in, "is the same file as the input");
    CHECK(strstr(t2_errmsg(), in) != NULL);
    path_in(slink, "link.tar");
    CHECK(symlink(in, slink) == 0);
    refuse(slink, in, "link.tar is the same file as the input");
    refuse(in, slink, "is the same file as the input");
    path_in(hard, "hard.tar");
    CHECK(link(in, hard) == 0);
    refuse(hard, in, "is the same file as the input");
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    refuse("./input.tar", "input.tar", "is the same file as the input");
    CHECK(chdir(cwd) == 0);
    CHECK(!strcmp(get(in), "checkpoint bytes"));

    /* A new output appears only at commit, with mode 0666 & ~022. */
    t2__outfile o;
    const char *inputs[1] = {in};
    CHECK_OK(t2__outfile_open(&o, out, 0666, inputs, 1));
    CHECK_OK(t2__outfile_write(&o, "new ", 4));
    CHECK_OK(t2__outfile_write(&o, "output", 6));
    CHECK(access(out, F_OK) != 0 && temps() == 1);
    CHECK_OK(t2__outfile_commit(&o));
    CHECK(!strcmp(get(out), "new output") && temps() == 0);
    struct stat st;
    CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == 0644);

    /* Abort: the previous output stays, nothing else is left. */
    CHECK_OK(t2__outfile_open(&o, out, 0666, inputs, 1));
    CHECK_OK(t2__outfile_write(&o, "half", 4));
    t2__outfile_abort(&o);
    CHECK(!strcmp(get(out), "new output") && temps() == 0);

    /* Through a symlink to another file: that file is replaced, the link stays a link. */
    path_in(target, "target.bin");
    put(target, "old");
    char olink[4096];
    path_in(olink, "olink.bin");
    CHECK(symlink("target.bin", olink) == 0);
    CHECK_OK(t2__outfile_open(&o, olink, 0600, inputs, 1));
    CHECK_OK(t2__outfile_write(&o, "via link", 8));
    CHECK_OK(t2__outfile_commit(&o));
    CHECK(lstat(olink, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(!strcmp(get(target), "via link"));
    CHECK(stat(target, &st) == 0 && (st.st_mode & 0777) == 0600);

    /* A directory, or a directory that does not exist: T2_EIO naming the path, nothing left. */
    CHECK_RC(t2__outfile_open(&o, dir, 0666, inputs, 1), T2_EIO);
    CHECK(strstr(t2_errmsg(), "is a directory") != NULL);
    path_in(sub, "missing/out.bin");
    CHECK_RC(t2__outfile_open(&o, sub, 0666, inputs, 1), T2_EIO);
    CHECK(strstr(t2_errmsg(), "missing/out.bin") != NULL);
    CHECK(temps() == 0);
    CHECK_RC(t2__outfile_write(&o, "x", 1), T2_EINVAL);
    CHECK_RC(t2__outfile_commit(&o), T2_EINVAL);
    t2__outfile_abort(&o);

    umask(old_mask);
    const char *names[] = {"input.tar", "out.bin", "link.tar", "hard.tar", "target.bin", "olink.bin"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[4096];
        path_in(p, names[i]);
        unlink(p);
    }
    rmdir(dir);
    return check_failures ? 1 : 0;
}
