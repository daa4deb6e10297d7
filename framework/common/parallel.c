/* parallel.c — fork-join pool: persistent workers sleep on a condition variable; the caller posts
 * one job (fn, ctx, n), runs the first range itself, then waits for the others. One job at a
 * time, guarded by a mutex, so concurrent callers (e.g. two nets in two threads) serialise
 * instead of corrupting the job slot. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include "parallel.h"
#include "internal.h"
#include "t2exp/error.h"
#include "t2exp/nn.h"

#define MAX_THREADS 64

static struct {
    pthread_mutex_t job_lock; /* one job in flight */
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    pthread_t tid[MAX_THREADS];
    int nthreads;             /* including the caller; workers = nthreads - 1 */
    int started;              /* workers running */
    unsigned long generation; /* bumped per job so sleeping workers know a new job arrived */
    unsigned long start_generation; /* generation when the workers were started: jobs before it are not theirs */
    int pending;              /* workers still running the current job */
    int sleepers;             /* workers blocked on `wake` (the rest are spinning or working) */
    int quit;
    t2__range_fn fn;
    void *ctx;
    size_t n;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_COND_INITIALIZER, {0}, 1, 0, 0, 0, 0, 0, 0, NULL, NULL, 0};

static _Thread_local int in_worker;

/* t2__set_num_parts's P (0: follow the thread count). Read by the thread that runs the net and set
 * by the same thread between batches: no lock. */
static int fixed_parts;

/* A layer's forward and backward post jobs a few hundred microseconds apart, and waking a thread
 * from a condition variable costs ~70 us on a VM. So a worker that finishes a job, and a caller
 * waiting for its workers, first poll for up to SPIN_S before blocking. The pool has as many
 * threads as the trial has cores, so the polling takes no core anyone else was promised. */
#define SPIN_S 50e-6

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static unsigned long load_generation(void) { return __atomic_load_n(&pool.generation, __ATOMIC_ACQUIRE); }

/* Polls until pred(arg) or SPIN_S has passed; returns pred's last value. */
static int spin_until(int (*pred)(unsigned long), unsigned long arg)
{
    double deadline = 0;
    for (unsigned i = 0;; i++) {
        if (pred(arg)) return 1;
        if ((i & 63) == 63) {
            double now = t2__now();
            if (deadline == 0) deadline = now + SPIN_S;
            else if (now > deadline) return pred(arg);
        }
        cpu_relax();
    }
}

static int new_job_or_quit(unsigned long seen)
{
    return load_generation() != seen || __atomic_load_n(&pool.quit, __ATOMIC_ACQUIRE);
}

static int workers_done(unsigned long unused)
{
    (void)unused;
    return __atomic_load_n(&pool.pending, __ATOMIC_ACQUIRE) == 0;
}

static void range_of(size_t n, int parts, int i, size_t *b, size_t *e)
{
    *b = n * (size_t)i / (size_t)parts;
    *e = n * (size_t)(i + 1) / (size_t)parts;
}

static void *worker(void *arg)
{
    int id = (int)(size_t)arg;
    in_worker = 1;
    pthread_mutex_lock(&pool.mu);
    /* Not 0: after t2_set_num_threads restarts the pool, the last job's fn and (dead) ctx are
     * still in the slot, and a worker starting from 0 would run them again. */
    unsigned long seen = pool.start_generation;
    for (;;) {
        if (!new_job_or_quit(seen)) {
            pthread_mutex_unlock(&pool.mu);
            spin_until(new_job_or_quit, seen);
            pthread_mutex_lock(&pool.mu);
        }
        while (!pool.quit && pool.generation == seen) {
            pool.sleepers++;
            pthread_cond_wait(&pool.wake, &pool.mu);
            pool.sleepers--;
        }
        if (pool.quit) break;
        seen = pool.generation;
        t2__range_fn fn = pool.fn;
        void *ctx = pool.ctx;
        size_t n = pool.n, b, e;
        int parts = pool.nthreads;
        pthread_mutex_unlock(&pool.mu);
        range_of(n, parts, id, &b, &e);
        if (b < e) fn(ctx, b, e);
        pthread_mutex_lock(&pool.mu);
        if (__atomic_sub_fetch(&pool.pending, 1, __ATOMIC_RELEASE) == 0) pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

static void stop_workers(void)
{
    pthread_mutex_lock(&pool.mu);
    __atomic_store_n(&pool.quit, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int i = 1; i < pool.started; i++) pthread_join(pool.tid[i], NULL);
    pool.quit = 0;
    pool.started = 1;
}

static void at_exit_stop(void) { stop_workers(); }

/* Starts workers up to nthreads; returns the number that could be started (>= 1). */
static int start_workers(int nthreads)
{
    static int registered;
    if (!registered && atexit(at_exit_stop) == 0) registered = 1;
    if (pool.started < 1) pool.started = 1;
    pool.start_generation = pool.generation; /* stable: the caller holds job_lock */
    while (pool.started < nthreads) {
        if (pthread_create(&pool.tid[pool.started], NULL, worker, (void *)(size_t)pool.started) != 0) break;
        pool.started++;
    }
    return pool.started;
}

int t2_set_num_threads(int n)
{
    if (n < 1 || n > MAX_THREADS) return t2_seterr(T2_EINVAL, "t2_set_num_threads: %d not in 1..%d", n, MAX_THREADS);
    pthread_mutex_lock(&pool.job_lock);
    if (pool.started > 1) stop_workers();
    pool.nthreads = n > 1 ? start_workers(n) : 1;
    pthread_mutex_unlock(&pool.job_lock);
    /* The layers split their GEMMs over the pool themselves; OpenBLAS threads on top would fight
     * the pool threads for the same cores. */
    openblas_set_num_threads(1);
    return T2_OK;
}

void t2__pool_reset_after_fork(void)
{
    pthread_mutex_init(&pool.job_lock, NULL);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.nthreads = 1;
    fixed_parts = 0;
    pool.started = 1;
    pool.pending = 0;
    pool.sleepers = 0;
    pool.quit = 0;
}

int t2_get_num_threads(void) { return pool.nthreads; }

int t2__pool_threads(void) { return pool.nthreads; }

int t2__pool_parts(void) { return fixed_parts > 0 ? fixed_parts : pool.nthreads; }

int t2__set_num_parts(int parts)
{
    if (parts < 0 || parts > MAX_THREADS)
        return t2_seterr(T2_EINVAL, "t2__set_num_parts: %d not in 0..%d", parts, MAX_THREADS);
    fixed_parts = parts;
    return T2_OK;
}

void t2__parallel_for(size_t n, size_t min_per_thread, t2__range_fn fn, void *ctx)
{
    int parts = pool.nthreads;
    if (parts <= 1 || in_worker || n < 2 * (min_per_thread ? min_per_thread : 1)) {
        if (n) fn(ctx, 0, n);
        return;
    }
    pthread_mutex_lock(&pool.job_lock);
    parts = pool.nthreads;
    pthread_mutex_lock(&pool.mu);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.n = n;
    __atomic_store_n(&pool.pending, parts - 1, __ATOMIC_RELAXED);
    __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE);
    if (pool.sleepers) pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    size_t b, e;
    range_of(n, parts, 0, &b, &e);
    if (b < e) fn(ctx, b, e);
    if (!spin_until(workers_done, 0)) {
        pthread_mutex_lock(&pool.mu);
        while (__atomic_load_n(&pool.pending, __ATOMIC_ACQUIRE) > 0) pthread_cond_wait(&pool.done, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.job_lock);
}
