/* real.h: glibc's own thread functions for weft's core inside
 * libweft-pthread.
 *
 * libweft-pthread defines pthread_mutex_lock, pthread_create and the rest,
 * so the core's calls to those names (its machines, its monitor, its
 * internal locks) would reach the drop-in itself. posix.cmake force-includes
 * this header into every core source of libweft-pthread: each name the core
 * calls becomes weft__real_<name>, which real.c resolves to glibc's
 * definition (dlsym RTLD_NEXT). libweft is built without it.
 */
#ifndef WEFT_POSIX_REAL_H
#define WEFT_POSIX_REAL_H

#define pthread_attr_destroy        weft__real_pthread_attr_destroy
#define pthread_attr_getstack       weft__real_pthread_attr_getstack
#define pthread_attr_init           weft__real_pthread_attr_init
#define pthread_attr_setdetachstate weft__real_pthread_attr_setdetachstate
#define pthread_attr_setguardsize   weft__real_pthread_attr_setguardsize
#define pthread_attr_setsigmask_np  weft__real_pthread_attr_setsigmask_np
#define pthread_attr_setstacksize   weft__real_pthread_attr_setstacksize
#define pthread_create              weft__real_pthread_create
#define pthread_detach              weft__real_pthread_detach
#define pthread_exit                weft__real_pthread_exit
#define pthread_getaffinity_np      weft__real_pthread_getaffinity_np
#define pthread_getattr_np          weft__real_pthread_getattr_np
#define pthread_getspecific         weft__real_pthread_getspecific
#define pthread_join                weft__real_pthread_join
#define pthread_key_create          weft__real_pthread_key_create
#define pthread_mutex_destroy       weft__real_pthread_mutex_destroy
#define pthread_mutex_init          weft__real_pthread_mutex_init
#define pthread_mutex_lock          weft__real_pthread_mutex_lock
#define pthread_mutex_unlock        weft__real_pthread_mutex_unlock
#define pthread_once                weft__real_pthread_once
#define pthread_setaffinity_np      weft__real_pthread_setaffinity_np
#define pthread_setname_np          weft__real_pthread_setname_np
#define pthread_setspecific         weft__real_pthread_setspecific
#define pthread_sigmask             weft__real_pthread_sigmask
#define pthread_kill                weft__real_pthread_kill
#define pthread_mutex_trylock       weft__real_pthread_mutex_trylock
#define pthread_cond_wait           weft__real_pthread_cond_wait
#define pthread_cond_signal         weft__real_pthread_cond_signal
#define pthread_cond_broadcast      weft__real_pthread_cond_broadcast
#define sched_yield                 weft__real_sched_yield
#define clock_gettime               weft__real_clock_gettime
#define poll                        weft__real_poll
#define epoll_wait                  weft__real_epoll_wait
#define epoll_pwait                 weft__real_epoll_pwait
#define select                      weft__real_select
#define nanosleep                   weft__real_nanosleep
#define clock_nanosleep             weft__real_clock_nanosleep
#define usleep                      weft__real_usleep

#include "real_io.h" /* read, recv, syscall, ...: rw.c, futex.c */

#endif
