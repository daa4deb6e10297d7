/* t2exp/error.h — status codes and the per-thread error message.
 *
 * Every fallible t2exp function returns an int: 0 (T2_OK) on success, a negative T2_E… code on
 * failure. The human-readable detail (what was wrong and where) is kept per thread and read with
 * t2_errmsg() until the next failing call on that thread overwrites it. */
#ifndef T2EXP_ERROR_H
#define T2EXP_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum {
    T2_OK = 0,
    T2_EINVAL = -1,    /* bad argument: NULL handle, zero size, out-of-range value */
    T2_ENOMEM = -2,    /* an allocation failed */
    T2_EIO = -3,       /* reading or writing a file failed */
    T2_ESHAPE = -4,    /* tensor shapes do not fit together */
    T2_EFORMAT = -5,   /* a file or document is malformed (bad magic, truncated, corrupt) */
    T2_ENOTFOUND = -6, /* a file, key or symbol does not exist */
    T2_ESTATE = -7,    /* call not valid in the object's current state */
    T2_ENUMERIC = -8,  /* NaN or infinity where a finite number was required */
    T2_ETRIAL = -9,    /* the user's trial code reported a failure */
    T2_EUNSUPPORTED = -10, /* a feature this build does not have */
    T2_ESTOPPED = -11, /* the operation was stopped on request (e.g. a loader shut down) */
    T2_EHPARAM = -12,  /* a trial's hyperparameters are unusable: the trial is not restarted, and
                          random and adaptive searches draw a replacement (Determined's InvalidHP) */
};

/* The detail message of the last failure on the calling thread ("" if none). The pointer stays
 * valid until the next t2exp call on this thread. */
const char *t2_errmsg(void);

/* A short constant name for a status code ("T2_EINVAL: invalid argument"). */
const char *t2_strerror(int code);

/* Records a formatted detail message for the calling thread and returns `code`, so library code
 * can write `return t2_seterr(T2_EINVAL, "dense: in=%d", in);`. Trials may use it too. */
int t2_seterr(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Clears the calling thread's message. */
void t2_clearerr(void);

#ifdef __cplusplus
}
#endif
#endif
