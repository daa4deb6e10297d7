/* hostfile.h — resources.hostfile: Open MPI's hostfile format, read and checked (internal).
 *
 * Accepted, one host a line: `NAME [slots=N] [max_slots=M]`, where `cpu=`/`count=` are Open MPI's
 * other spellings of slots= and `max-slots=`, `slots_max=`, `slots-max=` (and the cpu/count forms)
 * of max_slots=; spaces around `=` are allowed; `#` starts a comment; blank lines are skipped; a
 * line may end in CRLF; a host without slots= has one slot. A host listed twice is merged (its
 * slots added up), as Open MPI does. Refused, with "resources.hostfile PATH:LINE: problem":
 * a name outside the hostname/IP-address alphabet (letters, digits, '-', '.', '_', ':'; first
 * character a letter, digit or ':'; at most 253 characters), `user@host`, keys t2exp does not
 * implement (username=, port=, ...), slot counts that are not plain decimal integers in
 * 1..INT_MAX, max_slots below slots, a total over INT_MAX, NUL bytes, and a file with no host.
 * Lines have no length limit (they are read with getline). */
#ifndef T2_CONTROLLER_HOSTFILE_H
#define T2_CONTROLLER_HOSTFILE_H

#include <stdio.h>

/* Longest host name: a DNS name's limit (an IPv6 address is at most 45 characters). */
#define T2__HOST_NAME_MAX 253

typedef struct t2__host {
    char name[T2__HOST_NAME_MAX + 1];
    int slots;     /* > 0 */
    int max_slots; /* 0: not given; else >= slots (accepted for Open MPI; t2exp never oversubscribes) */
    int used;      /* the controller's count of this host's slots given to running trials (0 here) */
    int threads;   /* the threads their ranks here were given (>= used: each rank has at least 1) */
    int dead;      /* the controller found it unreachable: its slots left the pool (0 here) */
    char ipv4[16]; /* its first IPv4 address, looked up as the pool was loaded ("": none then; 0 here) */
} t2__host;

/* NULL when s[0..n) is in the host-name alphabet above (the length is not checked), else why
 * not, as the end of a sentence that starts with the name (" must start with ..."), or "@" for
 * a '@' (user@host). Shared by the hostfile and the Slurm allocation's node names. */
const char *t2__host_name_problem(const char *s, size_t n);

/* Parses a hostfile from f into a malloc'd array of hosts in first-appearance order (*hosts, free
 * with free()) and its length *nhosts >= 1; *total gets the sum of the slots (<= INT_MAX). `path`
 * names the file in messages. T2_EINVAL with "resources.hostfile PATH:LINE: problem" for bad
 * content or "resources.hostfile PATH: lists no host"; T2_EIO on a read error; T2_ENOMEM. On error
 * *hosts is NULL and *nhosts 0. */
int t2__hostfile_parse(FILE *f, const char *path, t2__host **hosts, int *nhosts, int *total);

/* Opens path (without blocking on a FIFO; anything but a regular file is refused) and parses it
 * as t2__hostfile_parse. T2_ENOTFOUND when it does not exist, T2_EINVAL when it is not a regular
 * file, T2_EIO when it cannot be read. */
int t2__hostfile_load(const char *path, t2__host **hosts, int *nhosts, int *total);

#endif
