/* mltp_thread.c: the mltp runtime and threads (init, finalize, the three
 * creation calls, join, the two yields) on weft's threads and its FIFO pool.
 *
 * A mltp thread is a weft thread: the handle is the weft_thread itself. The
 * seed's entry functions do not have weft's signature, so each creation
 * allocates a small start record (function, arguments) that the new thread
 * owns: unbound and bound threads free it as they start, vcreate threads
 * when their function returns (it holds the copied arguments).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include "mltp.h"
#include "policy/prio.h"
#include "runtime/runtime.h"
#include "sched/sched.h"
#include "stack/stack.h"

int mltp_init(int virtual_processors)
{
    if (virtual_processors < 0)
        return EINVAL;
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = virtual_processors;
    cfg.spawn_policy = WEFT_HELP_FIRST;
    return weft__init_with_pool(&cfg, &weft__pool_fifo);
}

int mltp_finalize(void)
{
    return weft_finalize();
}

/* ---- creation --------------------------------------------------------------- */

/* Start records: filled by the creator before the spawn publishes them
 * (weft_spawn orders them before the thread can run), then owned and
 * freed by the new thread. */
struct start_unbound {
    mltp_userf_t *func;
    void *p0;
};

struct start_vargs {
    mltp_vuserf_t *func;
    int nargs;
    void *args[]; /* the copy func receives */
};

struct start_bound {
    mltp_buserf_t *func;
    mltp_buserf_t *term;
    void *p0;
};

static void *run_unbound(void *arg)
{
    struct start_unbound s = *(struct start_unbound *)arg;
    free(arg);
    s.func(s.p0);
    return NULL;
}

static void *run_vargs(void *arg)
{
    struct start_vargs *s = arg;
    s->func(s->nargs, s->args);
    free(s);
    return NULL;
}

static void *run_bound(void *arg)
{
    struct start_bound s = *(struct start_bound *)arg;
    free(arg);
    void *result = s.func(s.p0);
    if (s.term)
        s.term(result);
    return result;
}

/* A start record of size bytes for a creation whose arguments are valid:
 * NULL with errno EINVAL when they are not, ENOMEM when out of memory. */
static void *start_new(int valid, size_t size)
{
    void *s = valid ? malloc(size) : NULL;
    if (!s)
        errno = valid ? ENOMEM : EINVAL;
    return s;
}

/* Spawns fn(start) with attr; frees start and sets errno on failure. */
static mltp_thread_t *spawn(weft_fn fn, void *start, const weft_attr *attr)
{
    weft_thread *t;
    int rc = weft_spawn(&t, fn, start, attr);
    if (rc != 0) {
        free(start);
        errno = rc;
        return NULL;
    }
    return (mltp_thread_t *)t;
}

mltp_thread_t *mltp_create(mltp_userf_t *func, void *p0)
{
    struct start_unbound *s = start_new(func != NULL, sizeof *s);
    if (!s)
        return NULL;
    s->func = func;
    s->p0 = p0;
    return spawn(run_unbound, s, NULL);
}

mltp_thread_t *mltp_vcreate(mltp_vuserf_t *func, int nargs, ...)
{
    /* The size is not used when nargs < 0. */
    struct start_vargs *s =
        start_new(func && nargs >= 0, sizeof *s + (size_t)nargs * sizeof(void *));
    if (!s)
        return NULL;
    s->func = func;
    s->nargs = nargs;
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; i++)
        s->args[i] = va_arg(ap, void *);
    va_end(ap);
    return spawn(run_vargs, s, NULL);
}

mltp_thread_t *mltp_create_bound(mltp_buserf_t *func, void *p0, int stacksz, mltp_buserf_t *term)
{
    struct start_bound *s = start_new(func && stacksz >= 0, sizeof *s);
    if (!s)
        return NULL;
    s->func = func;
    s->term = term;
    s->p0 = p0;
    weft_attr attr = WEFT_ATTR_INIT;
    attr.bound = 1;
    attr.stack_size = (size_t)stacksz;
    if (attr.stack_size && attr.stack_size < WEFT__STACK_MIN)
        attr.stack_size = WEFT__STACK_MIN;
    return spawn(run_bound, s, &attr);
}

int mltp_join(mltp_thread_t *t)
{
    if (!t)
        return EINVAL;
    return weft_join((weft_thread *)t, NULL);
}

/* ---- yielding ----------------------------------------------------------------- */

void mltp_yield(void)
{
    weft_yield();
}

void mltp_yield_to_first(void)
{
    weft__yield_front();
}
