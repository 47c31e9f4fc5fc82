/* kstack.h: the calling kernel thread's own stack. */
#ifndef WEFT_OS_KSTACK_H
#define WEFT_OS_KSTACK_H

#include <pthread.h>
#include <stddef.h>

/* Sets *lo and *size to the calling pthread's stack; leaves them alone if
 * the C library cannot tell. */
static inline void weft__kstack(char **lo, size_t *size)
{
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    void *l;
    size_t sz;
    if (pthread_attr_getstack(&a, &l, &sz) == 0) {
        *lo = l;
        *size = sz;
    }
    pthread_attr_destroy(&a);
}

#endif
