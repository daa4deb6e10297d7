/* error.c — per-thread error detail behind t2_errmsg(). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "t2exp/error.h"

static _Thread_local char errbuf[1024];

const char *t2_errmsg(void) { return errbuf; }

void t2_clearerr(void) { errbuf[0] = '\0'; }

int t2_seterr(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    return code;
}

int t2__seterr_text(int code, const char *text)
{
    size_t n = strlen(text);
    if (n >= sizeof errbuf) n = sizeof errbuf - 1;
    memcpy(errbuf, text, n);
    errbuf[n] = '\0';
    return code;
}

const char *t2_strerror(int code)
{
    switch (code) {
    case T2_OK: return "T2_OK: success";
    case T2_EINVAL: return "T2_EINVAL: invalid argument";
    case T2_ENOMEM: return "T2_ENOMEM: out of memory";
    case T2_EIO: return "T2_EIO: input/output error";
    case T2_ESHAPE: return "T2_ESHAPE: shape mismatch";
    case T2_EFORMAT: return "T2_EFORMAT: malformed data";
    case T2_ENOTFOUND: return "T2_ENOTFOUND: not found";
    case T2_ESTATE: return "T2_ESTATE: invalid state";
    case T2_ENUMERIC: return "T2_ENUMERIC: non-finite value";
    case T2_ETRIAL: return "T2_ETRIAL: trial reported failure";
    case T2_EUNSUPPORTED: return "T2_EUNSUPPORTED: not supported by this build";
    case T2_ESTOPPED: return "T2_ESTOPPED: stopped";
    case T2_EHPARAM: return "T2_EHPARAM: invalid hyperparameters";
    default: return "unknown t2exp status";
    }
}
