/* rescued_exit: threads that end right after a raw system call that
 * blocked long enough for the runtime to hand their worker to another
 * kernel thread (std::atomic::wait does this: a futex through syscall()).
 * Under the drop-in, such a thread's end must rejoin a worker before it
 * leaves its thread block. */
#define _GNU_SOURCE 1
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pcheck.h"

static uint32_t word;
static __thread int mine;

static void *blocker(void *arg)
{
    mine = (int)(intptr_t)arg;
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    CHECK(mine == (int)(intptr_t)arg);
    return arg;
}

int main(void)
{
    for (int round = 0; round < 40; round++) {
        pt_run4(blocker, 1);
    }
    printf("ok\n");
    return 0;
}
