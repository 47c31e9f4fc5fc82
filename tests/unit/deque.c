/* Tests the Chase-Lev deque: LIFO for the owner, FIFO for thieves, growth,
 * and that under concurrent pops and steals every item is taken exactly
 * once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"
#include "sched/deque.h"

#define ITEMS   400000
#define THIEVES 3

static struct weft__deque dq;
static unsigned char *taken;
static atomic_int done;
static atomic_long stolen;

/* Items are fake descriptor pointers: (i + 1) * 64, never dereferenced. */
static struct weft_thread *item(long i)
{
    return (struct weft_thread *)(uintptr_t)((i + 1) * 64);
}
static long index_of(struct weft_thread *t)
{
    return (long)((uintptr_t)t / 64) - 1;
}

static void take(struct weft_thread *t)
{
    long i = index_of(t);
    CHECK(i >= 0 && i < ITEMS);
    CHECK_EQ(__atomic_fetch_add(&taken[i], 1, __ATOMIC_RELAXED), 0);
}

static void *thief(void *arg)
{
    (void)arg;
    while (!atomic_load(&done)) {
        struct weft_thread *t = weft__deque_steal(&dq);
        if (t != WEFT__STEAL_EMPTY && t != WEFT__STEAL_ABORT) {
            take(t);
            atomic_fetch_add(&stolen, 1);
        }
    }
    return NULL;
}

int main(void)
{
    /* sequential order */
    CHECK_EQ(weft__deque_init(&dq, 2, NULL), 0);
    for (long i = 0; i < 100; i++)
        weft__deque_push(&dq, item(i));       /* grows 2 -> 128 */
    CHECK(weft__deque_steal(&dq) == item(0)); /* thieves: oldest first */
    CHECK(weft__deque_pop(&dq) == item(99));  /* owner: newest first */
    for (long i = 98; i >= 1; i--)
        CHECK(weft__deque_pop(&dq) == item(i));
    CHECK(weft__deque_pop(&dq) == NULL);
    CHECK(weft__deque_steal(&dq) == WEFT__STEAL_EMPTY);
    weft__deque_destroy(&dq);

    /* concurrent: owner pushes in bursts and pops, thieves steal */
    taken = calloc(ITEMS, 1);
    CHECK(taken);
    CHECK_EQ(weft__deque_init(&dq, 4, NULL), 0);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, thief, NULL), 0);
    unsigned seed = 12345;
    long next = 0;
    while (next < ITEMS) {
        int burst = (int)(rand_r(&seed) % 64) + 1;
        for (int b = 0; b < burst && next < ITEMS; b++)
            weft__deque_push(&dq, item(next++));
        int pops = (int)(rand_r(&seed) % 64);
        for (int p = 0; p < pops; p++) {
            struct weft_thread *t = weft__deque_pop(&dq);
            if (!t)
                break;
            take(t);
        }
    }
    struct weft_thread *t;
    while ((t = weft__deque_pop(&dq)))
        take(t);
    atomic_store(&done, 1);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    for (long i = 0; i < ITEMS; i++)
        CHECK_EQ(taken[i], 1);
    printf("deque: %d items, %ld stolen\n", ITEMS, atomic_load(&stolen));
    weft__deque_destroy(&dq);
    free(taken);
    return 0;
}
