/* spin.c: weft_spin, the public face of the ticket lock (sync/ticket.h):
 * FIFO, never parks nor sleeps. A user thread must not switch while it
 * holds one (a waiter on the same worker would spin forever), and is not
 * preempted while it does (weft__spin_hold, policy/preempt.h). Unlock
 * returns EPERM only when the lock is free (holders are not tracked).
 */
#include <assert.h>
#include <errno.h>
#include <stdalign.h>
#include <stdint.h>

#include "policy/preempt.h"
#include "sync/ticket.h"
#include "weft.h"

struct spin {
    _Atomic uint64_t word; /* next << 32 | serving */
};

WEFT__STORAGE(impl, struct spin, weft_spin, weft_private_)

int weft_spin_init(weft_spin *s)
{
    return weft__init_zeroed(s, sizeof *s);
}

int weft_spin_lock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    weft__ticket_lock(&impl(s)->word);
    weft__spin_hold();
    return 0;
}

int weft_spin_trylock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    if (!weft__ticket_trylock(&impl(s)->word))
        return EBUSY;
    weft__spin_hold();
    return 0;
}

int weft_spin_unlock(weft_spin *s)
{
    if (!s)
        return EINVAL;
    if (weft__ticket_unlock(&impl(s)->word))
        return EPERM;
    weft__spin_release();
    return 0;
}
