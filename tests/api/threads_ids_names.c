/* Tests weft_thread_id (non-zero, distinct for every thread of the runtime's
 * life, including threads whose memory was reused; 0 for NULL) and thread
 * names given by weft_attr.name and read by weft_thread_name. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

enum { SEQ = TEST_TSAN ? 2000 : 20000, LIVE = 500 };

static uint64_t ids[SEQ + LIVE + 16];

static void *own_id(void *arg)
{
    (void)arg;
    return (void *)(uintptr_t)weft_thread_id(weft_self());
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void *own_name(void *arg)
{
    (void)arg;
    return (void *)weft_thread_name(weft_self());
}

static atomic_int gate;
int main(void)
{
    test_clear_env();
    CHECK_EQ(weft_thread_id(NULL), 0);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 2;
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK_EQ(weft_thread_id(NULL), 0);
    size_t n = 0;
    ids[n++] = weft_thread_id(weft_self());

    /* Sequential threads: their descriptors and stacks are reused, their ids
     * must not be. The id seen from the parent equals the one seen inside. */
    for (int i = 0; i < SEQ; i++) {
        weft_thread *t;
        void *res;
        CHECK_EQ(weft_spawn(&t, own_id, NULL, NULL), 0);
        uint64_t outside = weft_thread_id(t);
        CHECK_EQ(weft_join(t, &res), 0);
        CHECK_EQ((uint64_t)(uintptr_t)res, outside);
        ids[n++] = outside;
    }
    /* Threads alive at the same time. */
    static weft_thread *live[LIVE];
    atomic_store(&gate, 0);
    for (int i = 0; i < LIVE; i++) {
        CHECK_EQ(weft_spawn(&live[i], test_yield_until_set, &gate, NULL), 0);
        ids[n++] = weft_thread_id(live[i]);
    }
    atomic_store(&gate, 1);
    for (int i = 0; i < LIVE; i++)
        CHECK_EQ(weft_join(live[i], NULL), 0);

    qsort(ids, n, sizeof ids[0], cmp_u64);
    CHECK(ids[0] != 0);
    for (size_t i = 1; i < n; i++)
        if (ids[i] == ids[i - 1]) {
            fprintf(stderr, "duplicate id %llu\n", (unsigned long long)ids[i]);
            CHECK(ids[i] != ids[i - 1]);
        }

    /* Names: attr.name is returned by weft_thread_name, inside and out; no
     * name is NULL. */
    static const char name_a[] = "alpha-worker";
    static char name_b[32];
    snprintf(name_b, sizeof name_b, "beta-%d", 42);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = name_a;
    weft_thread *t;
    void *res;
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, test_yield_until_set, &gate, &a), 0);
    CHECK(weft_thread_name(t) != NULL);
    CHECK(strcmp(weft_thread_name(t), "alpha-worker") == 0);
    atomic_store(&gate, 1);
    CHECK_EQ(weft_join(t, NULL), 0);

    CHECK_EQ(weft_spawn(&t, own_name, NULL, &a), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res != NULL && strcmp((const char *)res, "alpha-worker") == 0);

    a.name = name_b;
    CHECK_EQ(weft_spawn(&t, own_name, NULL, &a), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res != NULL && strcmp((const char *)res, "beta-42") == 0);

    CHECK_EQ(weft_spawn(&t, own_name, NULL, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == NULL);
    a.name = NULL;
    CHECK_EQ(weft_spawn(&t, own_name, NULL, &a), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == NULL);

    CHECK_EQ(weft_finalize(), 0);

    /* Ids are unique for the life of one runtime only, but they are still
     * non-zero after a restart. */
    CHECK_EQ(weft_init(&cfg), 0);
    CHECK(weft_thread_id(weft_self()) != 0);
    CHECK_EQ(weft_spawn(&t, own_id, NULL, NULL), 0);
    uint64_t id2 = weft_thread_id(t);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(id2 != 0);
    CHECK(id2 != weft_thread_id(weft_self()));
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
