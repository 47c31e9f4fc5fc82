/* weft__io_cancel (io/uring.c), the drop-in's way to break a user thread's
 * wait in its worker's ring off (pthread_kill, pthread_cancel): a thread
 * parked in weft_read on an empty pipe and in weft_poll with no timeout
 * ends with ECANCELED once another thread asks; its worker does the
 * cancelling (an IORING_OP_ASYNC_CANCEL at its next attend, woken from its
 * idle wait). A thread that waits in no ring is not touched (0). */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "io/io.h"
#include "testutil.h"
#include "weft.h"

static int pfd[2];
static _Atomic int stage;

static void *reader(void *arg)
{
    (void)arg;
    char c;
    stage = 1;
    ssize_t r = weft_read(pfd[0], &c, 1);
    /* weft_errno: the reader may resume on another worker, and a
     * compiler may keep errno's address from before (include/weft.h) */
    CHECK(r == -1 && weft_errno() == ECANCELED);
    stage = 2;
    int p = weft_poll(pfd[0], POLLIN, -1);
    CHECK(p == -1 && weft_errno() == ECANCELED);
    stage = 3;
    return NULL;
}

/* Asks until t's wait is broken off (stage reaches want), bounded. */
static void cancel_until(weft_thread *t, int want)
{
    time_t start = time(NULL);
    while (stage < want) {
        CHECK(time(NULL) - start < 30);
        weft__io_cancel(t); /* 0 until it parks in the ring */
        weft_sleep_ns(1000000);
    }
}

int main(void)
{
    alarm(60);
    test_clear_env();
    test_init(2, TEST_POLICY_ENV);
    CHECK_EQ(pipe(pfd), 0);
    CHECK_EQ(weft__io_cancel(weft_self()), 0); /* running: waits in no ring */
    if (!weft__io_uring_usable()) {
        CHECK_EQ(weft_finalize(), 0);
        return 77; /* the hand-off's calls are not cancelled */
    }
    weft_thread *t;
    CHECK_EQ(weft_spawn(&t, reader, NULL, NULL), 0);
    cancel_until(t, 2);
    cancel_until(t, 3);
    CHECK_EQ(weft_join(t, NULL), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
