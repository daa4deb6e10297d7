/* test_hostfile.c — resources.hostfile parsing: what Open MPI accepts and is harmless is read
 * (slots=, max_slots= and its spellings, comments, CRLF, bare hosts, duplicates merged); what
 * would hurt is refused with "resources.hostfile PATH:LINE: problem" (long lines split into a
 * host, slot counts that overflow an int, names mpirun or ssh would misread). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "controller/hostfile.h"

static t2__host *hosts;
static int nhosts, total;

/* Parses len bytes of text (which may hold NUL bytes) as the hostfile "H". */
static int parse_n(const char *text, size_t len)
{
    free(hosts);
    hosts = NULL;
    char empty[1] = {0};
    FILE *f = fmemopen(len ? (void *)text : empty, len ? len : 1, "r");
    if (!f) {
        perror("fmemopen");
        exit(1);
    }
    if (!len) fgetc(f); /* an empty buffer: fmemopen wants size > 0, so start at its end */
    int rc = t2__hostfile_parse(f, "H", &hosts, &nhosts, &total);
    fclose(f);
    return rc;
}

static int parse(const char *text) { return parse_n(text, strlen(text)); }

/* The text must be refused with T2_EINVAL and a message containing `want`. */
#define REFUSED(text, want)                                                                        \
    do {                                                                                           \
        CHECK_RC(parse(text), T2_EINVAL);                                                          \
        if (!strstr(t2_errmsg(), want)) {                                                          \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, t2_errmsg(), want); \
            check_failures++;                                                                      \
        }                                                                                          \
        CHECK(hosts == NULL && nhosts == 0);                                                       \
    } while (0)

static void test_basics(void)
{
    CHECK_OK(parse("# the cluster\n\nnode1 slots=4\n  node2   # one slot\nnode3 slots = 2 max_slots=8\n"
                   "10.0.0.7 cpu=3\nnode4 count=2 max-slots=2\nlast-host-1.example.org"));
    CHECK(nhosts == 6 && total == 4 + 1 + 2 + 3 + 2 + 1);
    if (nhosts == 6) {
        CHECK(!strcmp(hosts[0].name, "node1") && hosts[0].slots == 4 && hosts[0].max_slots == 0);
        CHECK(!strcmp(hosts[1].name, "node2") && hosts[1].slots == 1);
        CHECK(!strcmp(hosts[2].name, "node3") && hosts[2].slots == 2 && hosts[2].max_slots == 8);
        CHECK(!strcmp(hosts[3].name, "10.0.0.7") && hosts[3].slots == 3);
        CHECK(!strcmp(hosts[4].name, "node4") && hosts[4].slots == 2 && hosts[4].max_slots == 2);
        CHECK(!strcmp(hosts[5].name, "last-host-1.example.org") && hosts[5].slots == 1 && hosts[5].used == 0);
    }
    /* CRLF line ends (a hostfile edited on Windows). */
    CHECK_OK(parse("a slots=2\r\nb\r\n# c\r\n"));
    CHECK(nhosts == 2 && total == 3 && !strcmp(hosts[1].name, "b"));
}

static void test_long_lines(void)
{
    /* A 600-character comment was cut at 511 bytes and its tail read as a host. */
    size_t n = 4096;
    char *t = malloc(n);
    char *p = t + sprintf(t, "node1 slots=2 # ");
    memset(p, 'x', 600);
    strcpy(p + 600, "\nnode2\n");
    CHECK_OK(parse(t));
    CHECK(nhosts == 2 && total == 3);
    if (nhosts == 2) CHECK(!strcmp(hosts[0].name, "node1") && !strcmp(hosts[1].name, "node2"));
    /* A long run of blanks before the slots is still one line. */
    p = t + sprintf(t, "node1");
    memset(p, ' ', 1000);
    strcpy(p + 1000, "slots=5\n");
    CHECK_OK(parse(t));
    CHECK(nhosts == 1 && total == 5);
    /* A host name longer than any real one. */
    memset(t, 'a', 600);
    strcpy(t + 600, " slots=2\n");
    REFUSED(t, "H:1: a host name of 600 characters (the limit is 253)");
    free(t);
}

static void test_slots(void)
{
    REFUSED("a slots=2147483647\nb slots=2147483647\n", "H:2: the slots add up to more than 2147483647");
    REFUSED("a slots=2147483647\na\n", "H:2: the slots add up to more than 2147483647");
    CHECK_OK(parse("a slots=2147483646\nb\n"));
    CHECK(total == 2147483647);
    REFUSED("a slots=2147483648\n", "H:1: slots=2147483648 is over the limit of 2147483647");
    REFUSED("a slots=99999999999999999999999\n", "H:1: slots=99999999999999999999999 is over the limit");
    REFUSED("a\nb slots=0\n", "H:2: slots=0: a host needs at least 1 slot");
    REFUSED("a slots=-1\n", "H:1: slots=-1 is not a whole number");
    REFUSED("a slots=+3\n", "H:1: slots=+3 is not a whole number");
    REFUSED("a slots=4x\n", "H:1: slots=4x is not a whole number");
    REFUSED("a slots=1.5\n", "H:1: slots=1.5 is not a whole number");
    REFUSED("a slots=\n", "H:1: slots= has no value");
    REFUSED("a slots\n", "H:1: slots: expected KEY=VALUE after the host name");
    REFUSED("a b\n", "H:1: b: expected KEY=VALUE after the host name (one host a line)");
    REFUSED("a slots=4 max_slots=2\n", "H:1: max_slots=2 is less than slots=4");
    /* What Open MPI 4.1's launcher refuses in a node name is refused here, where it can be placed
     * (probe_N: at launch the host was taken for dead). */
    REFUSED("a\nmy_host slots=2\n", "H:2: host name my_host has '_', which Open MPI's launcher refuses");
    REFUSED("fe80::1 slots=2\n", "H:1: host name fe80::1 is an IPv6 address, which Open MPI's launcher refuses");
    REFUSED("::1\n", "H:1: host name ::1 is an IPv6 address");
    REFUSED("a slots=2 username=root\n", "H:1: username= is not supported");
    REFUSED("a port=2222\n", "H:1: port= is not supported");
    /* A key twice on a line: the last silently won. */
    REFUSED("a slots=2 slots=8\n", "H:1: slots= is given twice on this line");
    REFUSED("b\na max_slots=4 slots=1 max_slots=2\n", "H:2: max_slots= is given twice on this line");
}

static void test_empty(void)
{
    CHECK_RC(parse(""), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "resources.hostfile H: lists no host") != NULL);
    CHECK_RC(parse("# nothing\n   \n\t\n"), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "lists no host") != NULL && hosts == NULL);
}

static void test_duplicates(void)
{
    /* Merged, as Open MPI does, whatever the case of the name. */
    CHECK_OK(parse("a slots=2\nb\nA slots=3\na\n"));
    CHECK(nhosts == 2 && total == 7);
    if (nhosts == 2) CHECK(!strcmp(hosts[0].name, "a") && hosts[0].slots == 6 && hosts[1].slots == 1);
    CHECK_OK(parse("a slots=2 max_slots=4\na slots=1\n"));
    CHECK(nhosts == 1 && hosts[0].slots == 3 && hosts[0].max_slots == 5);
    /* Many hosts, many repeats (the duplicate check is a hash, not a scan). */
    size_t cap = 20000 * 16;
    char *t = malloc(cap), *p = t;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 10000; i++) p += sprintf(p, "h%d\n", i);
    CHECK_OK(parse(t));
    CHECK(nhosts == 10000 && total == 20000);
    if (nhosts == 10000) CHECK(!strcmp(hosts[9999].name, "h9999") && hosts[9999].slots == 2);
    free(t);
}

static void test_odd_characters(void)
{
    REFUSED("-oProxyCommand=touch\n", "H:1: expected a host name first, found -oProxyCommand=");
    REFUSED("-evil slots=1\n", "H:1: host name -evil must start with a letter or a digit");
    REFUSED("good\n.dot\n", "H:2: host name .dot must start with");
    REFUSED("a;reboot slots=1\n", "H:1: host name a;reboot has a character a host name or IP address cannot have");
    REFUSED("a$(id)\n", "has a character a host name");
    REFUSED("a\"b\n", "has a character");
    REFUSED("[::1]\n", "must start with");
    REFUSED("a\x1b[2Jb\n", "host name a?[2Jb has a character");
    REFUSED("root@node1 slots=2\n", "H:1: root@node1: user@host is not supported");
    REFUSED("a slots=2\x01\n", "H:1: slots=2? is not a whole number");
    REFUSED("a sl\xc3\xb6ts=2\n", "H:1: sl??ts= is not supported");
    static const char nul[] = "a\nb\0c slots=2\n";
    CHECK_RC(parse_n(nul, sizeof nul - 1), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "H:2: a NUL byte") != NULL);
}

static void test_load(void)
{
    char path[600];
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/t2hostfile.XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    CHECK(d != NULL);
    if (!d) return;
    snprintf(path, sizeof path, "%s/hosts", d);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs("n1 slots=2\nn2 slots=x\n", f) >= 0 && fclose(f) == 0);
    CHECK_RC(t2__hostfile_load(path, &hosts, &nhosts, &total), T2_EINVAL);
    char want[700];
    snprintf(want, sizeof want, "resources.hostfile %s:2: slots=x is not a whole number", path);
    CHECK(strstr(t2_errmsg(), want) != NULL);
    f = fopen(path, "w");
    CHECK(f && fputs("n1 slots=2\nn2\n", f) >= 0 && fclose(f) == 0);
    CHECK_OK(t2__hostfile_load(path, &hosts, &nhosts, &total));
    CHECK(nhosts == 2 && total == 3);
    free(hosts);
    hosts = NULL;
    CHECK_RC(t2__hostfile_load(d, &hosts, &nhosts, &total), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "not a regular file") != NULL);
    /* A FIFO is refused at once instead of blocking the controller in open(). */
    snprintf(path, sizeof path, "%s/fifo", d);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_RC(t2__hostfile_load(path, &hosts, &nhosts, &total), T2_EINVAL);
    CHECK(strstr(t2_errmsg(), "not a regular file") != NULL);
    unlink(path);
    snprintf(path, sizeof path, "%s/none", d);
    CHECK_RC(t2__hostfile_load(path, &hosts, &nhosts, &total), T2_ENOTFOUND);
    CHECK(strstr(t2_errmsg(), "No such file") != NULL);
    snprintf(path, sizeof path, "%s/hosts", d);
    unlink(path);
    rmdir(d);
}

int main(void)
{
    test_basics();
    test_long_lines();
    test_slots();
    test_empty();
    test_duplicates();
    test_odd_characters();
    test_load();
    free(hosts);
    return check_report("test_hostfile");
}
