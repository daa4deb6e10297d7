/* fork_gate.c — see fork_gate.h. A count of threads in their work sections and a flag for a fork
 * under way, under one mutex; pthread_atfork's prepare waits for the count to reach zero with the
 * flag set (no thread enters meanwhile), the parent's handler clears it, and the child, whose only
 * thread is the one that forked, starts afresh. */
#include "fork_gate.h"

#if defined(__SANITIZE_ADDRESS__)
#define T2_FORK_GATE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T2_FORK_GATE 1
#endif
#endif

#ifdef T2_FORK_GATE
#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int inside, forking;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void prepare(void)
{
    pthread_mutex_lock(&mu);
    forking = 1;
    while (inside > 0) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void parent(void)
{
    pthread_mutex_lock(&mu);
    forking = 0;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void child(void)
{
    /* The mutex was free at fork (prepare released it); the other threads are gone. */
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    inside = forking = 0;
}

static void install(void) { (void)pthread_atfork(prepare, parent, child); }

void t2__fork_gate_enter(void)
{
    pthread_once(&once, install);
    pthread_mutex_lock(&mu);
    while (forking) pthread_cond_wait(&cv, &mu);
    inside++;
    pthread_mutex_unlock(&mu);
}

void t2__fork_gate_leave(void)
{
    pthread_mutex_lock(&mu);
    if (--inside == 0) pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}
#else
void t2__fork_gate_enter(void) {}
void t2__fork_gate_leave(void) {}
#endif
