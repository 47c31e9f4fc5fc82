/* Tests stacks of sizes other than the default, which every worker caches
 * for the last such size it used (stack/stack.c, "The caches"):
 *  - the stack module alone, in each guard mode: slots of several sizes
 *    alternately through two caches, each slot's usable stack written
 *    whole and checked against its neighbours'; frees into the other
 *    cache; the cache pops without the shared lists; spills; the list
 *    follows a new size; no canary slot ever enters a cache; a drain gives
 *    every slot back to the shared lists;
 *  - the runtime, in a child per guard mode (WEFT_STACK_GUARD): spawner
 *    threads on two workers spawn many threads with several sizes in turn
 *    (weft_spawn, weft_spawn_copy, weft_group_spawn), each of which writes
 *    its whole stack, lets the others run, checks it and recurses through
 *    it; init/finalize cycles start from the same stack state each time. */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <weft.h>

#include "check.h"
#include "stack/stack.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* Room below a thread's frame that it leaves alone: the frames of the
 * calls it makes while its pattern must stay (the yields; under TSan they
 * reach about 5,000 bytes down). */
#define FRAME_ROOM (TEST_SANITIZED ? 12 * KiB : 4 * KiB)
/* What test_use_stack may not use: the thread's entry frames and the
 * copied argument above its body's frame. */
#define USE_ROOM (12 * KiB)
/* test_use_stack's frames under ASan carry redzones: about 4.5 % more than
 * the bytes it is asked to use. */
#define USE_PART(n) (TEST_ASAN ? (n) / 16 * 15 : (n))
/* The word at the bottom of a canary slot's stack. */
#define CANARY_WORD sizeof(uint64_t)
/* Words checked: every CHECK_STRIDE-th, plus the first and the last. */
#define CHECK_STRIDE 61

static const size_t sizes[] = { 16 * KiB, 100000, 256 * KiB, 1 * MiB, 64 * KiB };
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Writes pattern over the words of [lo, hi): volatile, so that no memset
 * call puts a frame below the caller's. */
static void fill(char *lo, char *hi, uint64_t pattern)
{
    volatile uint64_t *p = (volatile uint64_t *)(void *)lo, *e = (volatile uint64_t *)(void *)hi;
    for (; p < e; p++)
        *p = pattern ^ (uint64_t)(uintptr_t)p;
}

/* Returns 1 if [lo, hi) still holds what fill wrote. */
static int intact(char *lo, char *hi, uint64_t pattern)
{
    volatile uint64_t *p = (volatile uint64_t *)(void *)lo, *e = (volatile uint64_t *)(void *)hi;
    size_t n = (size_t)(e - p);
    for (size_t i = 0; i < n; i += CHECK_STRIDE)
        if (p[i] != (pattern ^ (uint64_t)(uintptr_t)&p[i]))
            return 0;
    return n == 0 || p[n - 1] == (pattern ^ (uint64_t)(uintptr_t)&p[n - 1]);
}

/* ---- the stack module alone --------------------------------------------- */

static size_t stats_free(void)
{
    struct weft__stack_stats st;
    weft__stack_stats(&st);
    return st.free_slots;
}

static size_t stats_slots(void)
{
    struct weft__stack_stats st;
    weft__stack_stats(&st);
    return st.slots;
}

static void check_empty(const struct weft__stack_cache *c)
{
    CHECK(c->head == NULL && c->n == 0);
    CHECK(c->ohead == NULL && c->on == 0 && c->ocls == NULL && c->osize == 0);
}

static void module_cycle(int request)
{
    enum { N = 48 };
    CHECK_EQ(weft__stack_init(64 * KiB, request, NULL), 0);
    struct weft__stack_cache ca, cb;
    memset(&ca, 0, sizeof ca);
    memset(&cb, 0, sizeof cb);
    struct weft_thread *t[N];
    size_t want[N];
    for (int round = 0; round < 2; round++) {
        /* Sizes in turn, then in runs (round 1), from either cache. */
        for (int i = 0; i < N; i++) {
            want[i] = sizes[(round ? i / 6 : i) % NSIZES];
            t[i] = weft__stack_alloc(i % 2 ? &cb : &ca, want[i]);
            CHECK(t[i] != NULL);
            CHECK(t[i]->stack_size >= want[i]);
            CHECK((size_t)((char *)t[i] - (char *)t[i]->stack_lo) >= want[i]);
            CHECK(request != WEFT__GUARDREQ_CANARY || t[i]->guard == WEFT__GUARD_CANARY);
            CHECK(request != WEFT__GUARDREQ_MPROTECT || t[i]->guard == WEFT__GUARD_MPROTECT);
            fill((char *)t[i]->stack_lo + CANARY_WORD, (char *)t[i],
                 (uint64_t)i * 0x9e3779b97f4a7c15ull);
        }
        for (int i = 0; i < N; i++)
            CHECK(intact((char *)t[i]->stack_lo + CANARY_WORD, (char *)t[i],
                         (uint64_t)i * 0x9e3779b97f4a7c15ull));
        /* Freed through the other cache than the one they came from, as
         * a thread joined on another worker is. */
        for (int i = 0; i < N; i++)
            weft__stack_free(i % 2 ? &ca : &cb, t[i]);
        if (request == WEFT__GUARDREQ_CANARY) {
            CHECK(ca.n == 0 && cb.n == 0 && ca.on == 0 && cb.on == 0);
        } else {
            CHECK(ca.on + cb.on > 0);
            CHECK(ca.on < WEFT__STACK_CACHE_MAX && cb.on < WEFT__STACK_CACHE_MAX);
        }
    }
    if (request != WEFT__GUARDREQ_CANARY) {
        /* A hit takes nothing from the shared lists. */
        CHECK(ca.on > 0);
        size_t size = ca.osize, before = stats_free();
        struct weft_thread *x = weft__stack_alloc(&ca, size);
        CHECK(x != NULL && x->stack_size >= size);
        CHECK_EQ(stats_free(), before);
        weft__stack_free(&ca, x);

        /* Another size, again and again: the list follows it. */
        size_t other = size == 16 * KiB ? 100000 : 16 * KiB;
        for (int i = 0; i < N; i++) {
            t[i] = weft__stack_alloc(&ca, other);
            CHECK(t[i] != NULL && t[i]->stack_size >= other);
        }
        CHECK_EQ(ca.osize, other);
        for (int i = 0; i < N; i++)
            weft__stack_free(&ca, t[i]);

        /* More frees of one size than a cache holds: it spills. */
        enum { MANY = 3 * WEFT__STACK_CACHE_MAX };
        struct weft_thread *m[MANY];
        for (int i = 0; i < MANY; i++)
            CHECK((m[i] = weft__stack_alloc(&cb, 256 * KiB)) != NULL);
        for (int i = 0; i < MANY; i++)
            weft__stack_free(&cb, m[i]);
        CHECK(cb.on > 0 && cb.on < WEFT__STACK_CACHE_MAX);
    }
    /* Every slot back on the shared lists once the caches are drained. */
    weft__stack_cache_drain(&ca);
    weft__stack_cache_drain(&cb);
    check_empty(&ca);
    check_empty(&cb);
    CHECK_EQ(stats_free(), stats_slots());
    weft__stack_shutdown();
}

/* ---- the runtime ---------------------------------------------------------- */

enum { SPAWNERS = 4, BATCH = 6 };

struct job {
    size_t size;   /* the stack_size asked for */
    uint64_t salt; /* this thread's fill pattern */
    int yields;    /* switches between the fill and the check */
    const char *name;
};

static atomic_long done;

/* Writes the whole stack below this frame, lets other threads (on both
 * workers) run, checks nothing overwrote it, then uses it through frames. */
static void *child(void *arg)
{
    const struct job *j = arg;
    weft_thread *self = weft_self();
    char *lo = (char *)self->stack_lo + CANARY_WORD;
    char *here = (char *)__builtin_frame_address(0) - FRAME_ROOM;
    size_t usable = (size_t)((char *)self - (char *)self->stack_lo);
    CHECK(usable >= j->size);
    CHECK(weft_thread_name(self) == j->name);
    CHECK((size_t)(here - lo) + FRAME_ROOM + CANARY_WORD + USE_ROOM >= j->size);
    fill(lo, here, j->salt);
    for (int i = 0; i < j->yields; i++)
        weft_yield();
    CHECK(intact(lo, here, j->salt));
    test_use_stack(USE_PART(j->size - USE_ROOM));
    atomic_fetch_add(&done, 1);
    return (void *)(uintptr_t)j->salt;
}

static void *member(void *arg)
{
    child(arg);
    return NULL;
}

static int rounds;

static void *spawner(void *arg)
{
    int id = (int)(intptr_t)arg;
    static const char *const names[] = { "a", "b" };
    for (int r = 0; r < rounds; r++) {
        weft_attr a = WEFT_ATTR_INIT;
        a.stack_size = sizes[(size_t)(r + id) % NSIZES];
        a.name = names[r % 2];
        struct job jobs[BATCH];
        weft_thread *t[BATCH];
        weft_group g = WEFT_GROUP_INIT;
        for (int i = 0; i < BATCH; i++) {
            jobs[i] = (struct job){ a.stack_size,
                                    ((uint64_t)id << 40) ^ ((uint64_t)r << 20) ^ (uint64_t)i, i % 3,
                                    a.name };
            switch (r % 3) {
            case 0: CHECK_EQ(weft_spawn(&t[i], child, &jobs[i], &a), 0); break;
            case 1: CHECK_EQ(weft_spawn_copy(&t[i], child, &jobs[i], sizeof jobs[i], &a), 0); break;
            default: CHECK_EQ(weft_group_spawn(&g, member, &jobs[i], sizeof jobs[i], &a), 0); break;
            }
        }
        if (r % 3 == 2) {
            CHECK_EQ(weft_group_wait(&g), 0);
            CHECK_EQ(weft_group_destroy(&g), 0);
            continue;
        }
        for (int i = 0; i < BATCH; i++) {
            void *res;
            CHECK_EQ(weft_join(t[i], &res), 0);
            CHECK_EQ((uint64_t)(uintptr_t)res, jobs[i].salt);
        }
    }
    return NULL;
}

static int runtime_child(void)
{
    enum { CYCLES = 3 };
    alarm(TEST_SANITIZED ? 120 : 30);
    rounds = TEST_SANITIZED ? 8 : 24;
    struct weft__stack_stats first;
    memset(&first, 0, sizeof first);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        test_init(2, cycle % 2 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST);
        /* Nothing from the cycle before: the same slots as the first time. */
        struct weft__stack_stats st;
        weft__stack_stats(&st);
        if (cycle == 0)
            first = st;
        CHECK_EQ(st.slabs, first.slabs);
        CHECK_EQ(st.slots, first.slots);
        atomic_store(&done, 0);
        weft_thread *s[SPAWNERS];
        for (int i = 0; i < SPAWNERS; i++)
            CHECK_EQ(weft_spawn(&s[i], spawner, (void *)(intptr_t)i, NULL), 0);
        for (int i = 0; i < SPAWNERS; i++)
            CHECK_EQ(weft_join(s[i], NULL), 0);
        CHECK_EQ(atomic_load(&done), (long)SPAWNERS * rounds * BATCH);
        CHECK_EQ(weft_finalize(), 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "runtime"))
        return runtime_child();
    test_clear_env();
    const int requests[] = { WEFT__GUARDREQ_AUTO, WEFT__GUARDREQ_MPROTECT, WEFT__GUARDREQ_CANARY };
    for (int i = 0; i < 3; i++)
        for (int cycle = 0; cycle < 2; cycle++)
            module_cycle(requests[i]);

    const char *guards[] = { "WEFT_STACK_GUARD=auto", "WEFT_STACK_GUARD=mprotect",
                             "WEFT_STACK_GUARD=canary" };
    for (int i = 0; i < 3; i++) {
        /* No preemption: its signal frame would land in the stack below
         * child()'s frame, which the test fills and checks (a loaded
         * machine preempted a long fill now and then). */
        const char *env[] = { guards[i], "WEFT_QUANTUM=off", NULL };
        test_child r;
        test_run_self(&r, "runtime", NULL, env, NULL);
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
            test_child_dump(guards[i], &r);
            CHECK(!"threads of several stack sizes");
        }
    }
    return 0;
}
