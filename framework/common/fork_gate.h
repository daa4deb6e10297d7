/* fork_gate.h — background threads' work kept apart from fork, where AddressSanitizer needs it.
 *
 * The controller forks trials and workers while its store threads run. glibc's malloc takes its
 * locks around fork, but the sanitizer's allocator in Debian 12's GCC does not: a fork while the
 * store writer held one of its locks left that lock held in the child for good, and the child's
 * first allocation of that size hung (a CI run of it_threads_follow_slots, sanitized: a trial's
 * thread pool in SizeClassAllocator64::GetFromAllocator). In a sanitized build, a fork now waits
 * for the background threads to leave their work sections, and they wait for it to end; in other
 * builds both calls do nothing. */
#ifndef T2_COMMON_FORK_GATE_H
#define T2_COMMON_FORK_GATE_H

/* Around a background thread's work (what allocates); never around a wait for another thread. */
void t2__fork_gate_enter(void);
void t2__fork_gate_leave(void);

#endif
