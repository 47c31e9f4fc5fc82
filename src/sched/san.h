/* san.h: fiber-switch annotations for ASan and TSan; empty otherwise.
 *
 * ASan must know which stack is live (to tell stack from heap and to keep
 * fake stacks per fiber); TSan must know which fiber runs (to keep a
 * happens-before clock per user thread). The switch path (sched/switch.h)
 * calls these right before the context switch (fake_save NULL: the context
 * being left ends), and weft__ctx_resumed right after being resumed.
 */
#ifndef WEFT_SCHED_SAN_H
#define WEFT_SCHED_SAN_H

#include <stddef.h>

#include "desc/desc.h"

struct weft__worker;

#if defined(WEFT_SANITIZE_ADDRESS) || defined(WEFT_SANITIZE_THREAD)
void weft__san_switch_to_thread(void **fake_save, struct weft_thread *to);
void weft__san_switch_to_sched(void **fake_save, struct weft__worker *w);
void weft__san_resumed(void *fake);
void weft__san_thread_created(struct weft_thread *t);
void weft__san_thread_destroyed(struct weft_thread *t);
struct weft__home;
void weft__san_switch_to_home(void **fake_save, struct weft__home *h);
void *weft__san_current_fiber(void);
#else
static inline void weft__san_switch_to_thread(void **fake_save, struct weft_thread *to)
{
    (void)fake_save;
    (void)to;
}
static inline void weft__san_switch_to_sched(void **fake_save, struct weft__worker *w)
{
    (void)fake_save;
    (void)w;
}
static inline void weft__san_resumed(void *fake)
{
    (void)fake;
}
static inline void weft__san_thread_created(struct weft_thread *t)
{
    (void)t;
}
static inline void weft__san_thread_destroyed(struct weft_thread *t)
{
    (void)t;
}
struct weft__home;
static inline void weft__san_switch_to_home(void **fake_save, struct weft__home *h)
{
    (void)fake_save;
    (void)h;
}
static inline void *weft__san_current_fiber(void)
{
    return NULL;
}
#endif

#endif
