/* gate.c: the public weft_* entry points of libweft_dist.
 *
 * libweft_dist carries a copy of all of weft in which every function named
 * here through NATIVE() or a GATE_* macro is renamed weft__nd_<name> at
 * build time (objcopy --redefine-syms, src/mpi/dist.cmake). The
 * functions below take the public names: outside weft_dist_run they call
 * the single-process weft unchanged; inside a run they either go to the
 * distributed worker (spawn, join, yield, self, thread id, worker id, exit)
 * or refuse with ENOTSUP, as the contract says. So libweft, which
 * single-process programs link, has no test for the distributed mode on
 * any path, and the calls a run refuses are refused in one place.
 */
#include <errno.h>
#include <stdlib.h>

#include "mpi/dist.h"
#include "mpi/state.h"

/* The renamed single-process function; CMake reads these names. */
#define NATIVE(name) weft__nd_##name

/* pthread-like calls: ENOTSUP inside a run. */
#define GATE_ERR(name, params, args)                                                               \
    int NATIVE(name) params;                                                                       \
    WEFT_API int name params                                                                       \
    {                                                                                              \
        return weft__dist_active ? ENOTSUP : NATIVE(name) args;                                    \
    }

/* System-call mirrors: -1 with errno ENOTSUP inside a run. */
#define GATE_SYS(type, name, params, args)                                                         \
    type NATIVE(name) params;                                                                      \
    WEFT_API type name params                                                                      \
    {                                                                                              \
        if (!weft__dist_active)                                                                    \
            return NATIVE(name) args;                                                              \
        errno = ENOTSUP;                                                                           \
        return -1;                                                                                 \
    }

/* Calls that take a thread: ENOTSUP inside a run, and for a weft_dist
 * thread's handle anywhere (it is no single-process thread). */
#define GATE_THR(name, params, t, args)                                                            \
    int NATIVE(name) params;                                                                       \
    WEFT_API int name params                                                                       \
    {                                                                                              \
        return weft__dist_active || (t && weft__dist_is_rec(t)) ? ENOTSUP : NATIVE(name) args;     \
    }

/* clang-format would space the pointers of these parameter lists as
 * products */
/* clang-format off */
/* The split-phase io calls, as GATE_ERR: each takes the continuation, the
 * result's address and the fd first, then the parameters in `params`
 * (parenthesised), whose names the remaining arguments list. */
#define GATE_TIO(name, params, ...)                                                                \
    GATE_ERR(name, (weft_task * cont, ssize_t * res, int fd, UNPAREN params),                      \
             (cont, res, fd, __VA_ARGS__))
#define UNPAREN(...) __VA_ARGS__

GATE_ERR(weft_init, (const weft_config *cfg), (cfg))
GATE_ERR(weft_finalize, (void), ())
GATE_ERR(weft_num_workers, (void), ())
GATE_THR(weft_detach, (weft_thread *t), t, (t))
GATE_THR(weft_set_priority, (weft_thread *t, int prio), t, (t, prio))
GATE_THR(weft_priority, (const weft_thread *t), t, (t))
GATE_THR(weft_thread_info_get, (const weft_thread *t, weft_thread_info *out), t, (t, out))
GATE_ERR(weft_dump, (int fd), (fd))
GATE_ERR(weft_task_create, (weft_task **out, weft_task_fn fn, void *arg, unsigned count),
         (out, fn, arg, count))
GATE_ERR(weft_task_continue, (weft_task *t), (t))
GATE_TIO(weft_task_read, (void *buf, size_t n), buf, n)
GATE_TIO(weft_task_write, (const void *buf, size_t n), buf, n)
GATE_TIO(weft_task_pread, (void *buf, size_t n, off_t off), buf, n, off)
GATE_TIO(weft_task_pwrite, (const void *buf, size_t n, off_t off), buf, n, off)
GATE_TIO(weft_task_recv, (void *buf, size_t n, int flags), buf, n, flags)
GATE_TIO(weft_task_send, (const void *buf, size_t n, int flags), buf, n, flags)
GATE_TIO(weft_task_accept, (struct sockaddr *addr, socklen_t *len), addr, len)
GATE_ERR(weft_task_sleep_ns, (weft_task *cont, uint64_t ns), (cont, ns))
GATE_ERR(weft_group_init, (weft_group *g), (g))
GATE_ERR(weft_group_spawn,
         (weft_group *g, weft_fn fn, const void *arg, size_t arg_size, const weft_attr *attr),
         (g, fn, arg, arg_size, attr))
GATE_ERR(weft_group_wait, (weft_group *g), (g))
GATE_ERR(weft_group_destroy, (weft_group *g), (g))
GATE_ERR(weft_mutex_init, (weft_mutex *m), (m))
GATE_ERR(weft_mutex_destroy, (weft_mutex *m), (m))
GATE_ERR(weft_mutex_lock, (weft_mutex *m), (m))
GATE_ERR(weft_mutex_trylock, (weft_mutex *m), (m))
GATE_ERR(weft_mutex_unlock, (weft_mutex *m), (m))
GATE_ERR(weft_cond_init, (weft_cond *c), (c))
GATE_ERR(weft_cond_destroy, (weft_cond *c), (c))
GATE_ERR(weft_cond_wait, (weft_cond *c, weft_mutex *m), (c, m))
GATE_ERR(weft_cond_timedwait, (weft_cond *c, weft_mutex *m, const struct timespec *abstime),
         (c, m, abstime))
GATE_ERR(weft_cond_signal, (weft_cond *c), (c))
GATE_ERR(weft_cond_broadcast, (weft_cond *c), (c))
GATE_ERR(weft_rwlock_init, (weft_rwlock *l), (l))
GATE_ERR(weft_rwlock_destroy, (weft_rwlock *l), (l))
GATE_ERR(weft_rwlock_rdlock, (weft_rwlock *l), (l))
GATE_ERR(weft_rwlock_wrlock, (weft_rwlock *l), (l))
GATE_ERR(weft_rwlock_unlock, (weft_rwlock *l), (l))
GATE_ERR(weft_barrier_init, (weft_barrier *b, unsigned count), (b, count))
GATE_ERR(weft_barrier_wait, (weft_barrier *b), (b))
GATE_ERR(weft_barrier_destroy, (weft_barrier *b), (b))
GATE_ERR(weft_sem_init, (weft_sem *s, unsigned value), (s, value))
GATE_ERR(weft_sem_destroy, (weft_sem *s), (s))
GATE_ERR(weft_sem_wait, (weft_sem *s), (s))
GATE_ERR(weft_sem_trywait, (weft_sem *s), (s))
GATE_ERR(weft_sem_post, (weft_sem *s), (s))
GATE_ERR(weft_spin_init, (weft_spin *s), (s))
GATE_ERR(weft_spin_lock, (weft_spin *s), (s))
GATE_ERR(weft_spin_trylock, (weft_spin *s), (s))
GATE_ERR(weft_spin_unlock, (weft_spin *s), (s))
GATE_ERR(weft_stats_get, (weft_stats *out), (out))
GATE_ERR(weft_blocking, (void (*fn)(void *arg), void *arg), (fn, arg))

GATE_SYS(ssize_t, weft_read, (int fd, void *buf, size_t n), (fd, buf, n))
GATE_SYS(ssize_t, weft_write, (int fd, const void *buf, size_t n), (fd, buf, n))
GATE_SYS(ssize_t, weft_pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off))
GATE_SYS(ssize_t, weft_pwrite, (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off))
GATE_SYS(ssize_t, weft_recv, (int fd, void *buf, size_t n, int flags), (fd, buf, n, flags))
GATE_SYS(ssize_t, weft_send, (int fd, const void *buf, size_t n, int flags), (fd, buf, n, flags))
GATE_SYS(int, weft_accept, (int fd, struct sockaddr *addr, socklen_t *len), (fd, addr, len))
GATE_SYS(int, weft_connect, (int fd, const struct sockaddr *addr, socklen_t len), (fd, addr, len))
GATE_SYS(int, weft_poll, (int fd, short events, int timeout_ms), (fd, events, timeout_ms))
GATE_SYS(int, weft_sleep_ns, (uint64_t ns), (ns))
/* clang-format on */

/* ---- the calls a run serves ------------------------------------------------ */

int NATIVE(weft_spawn)(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr);
int NATIVE(weft_spawn_copy)(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                            const weft_attr *attr);
int NATIVE(weft_join)(weft_thread *t, void **result);
void NATIVE(weft_yield)(void);
weft_thread *NATIVE(weft_self)(void);
uint64_t NATIVE(weft_thread_id)(const weft_thread *t);
const char *NATIVE(weft_thread_name)(const weft_thread *t);
int NATIVE(weft_worker_id)(void);
_Noreturn void NATIVE(weft_exit)(void *result);

WEFT_API int weft_spawn(weft_thread **out, weft_fn fn, void *arg, const weft_attr *attr)
{
    if (weft__dist_active)
        return weft__dist_spawn(out, fn, arg, 0, attr);
    return NATIVE(weft_spawn)(out, fn, arg, attr);
}

WEFT_API int weft_spawn_copy(weft_thread **out, weft_fn fn, const void *arg, size_t arg_size,
                             const weft_attr *attr)
{
    if (weft__dist_active)
        return weft__dist_spawn(out, fn, arg, arg_size, attr);
    return NATIVE(weft_spawn_copy)(out, fn, arg, arg_size, attr);
}

WEFT_API int weft_join(weft_thread *t, void **result)
{
    if (weft__dist_active)
        return weft__dist_join(t, result);
    return NATIVE(weft_join)(t, result);
}

WEFT_API void weft_yield(void)
{
    /* A run's worker has no other ready thread of its own to let run: its
     * deque holds continuations of the running thread's ancestors, which
     * only thieves take. */
    if (!weft__dist_active)
        NATIVE(weft_yield)();
}

WEFT_API weft_thread *weft_self(void)
{
    if (weft__dist_active)
        return (weft_thread *)weft__dist.cur;
    return NATIVE(weft_self)();
}

/* Thread records stay reachable until weft_dist_finalize: their ids can be
 * read after the run, on any rank. */
WEFT_API uint64_t weft_thread_id(const weft_thread *t)
{
    if (t && weft__dist_is_rec(t))
        return weft__dist_rec_id(t);
    return NATIVE(weft_thread_id)(t);
}

WEFT_API const char *weft_thread_name(const weft_thread *t)
{
    if (t && weft__dist_is_rec(t))
        return NULL; /* names do not travel */
    return NATIVE(weft_thread_name)(t);
}

WEFT_API int weft_worker_id(void)
{
    return weft__dist_active ? 0 : NATIVE(weft_worker_id)();
}

WEFT_API _Noreturn void weft_exit(void *result)
{
    if (weft__dist_active)
        weft__dist_exit(result);
    NATIVE(weft_exit)(result);
}
