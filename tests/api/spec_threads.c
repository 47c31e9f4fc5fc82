/* Tests user-thread rules of the SPEC not covered elsewhere: "a thread is
 * joined at most once" when the joiners are plain kernel threads (two of
 * them, or one and a user thread), weft_detach racing a kernel-thread join,
 * weft_exit from a bound thread, a detached thread and a thread a plain
 * kernel thread spawned, out==NULL for bound threads, weft_worker_id in a
 * bound thread, and thread ids distinct across every kind of thread alive
 * at once. Every handle is used only while its thread surely exists. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

static void *ret_arg(void *arg)
{
    return arg;
}

static atomic_int gate;

static void *wait_gate(void *arg)
{
    while (!atomic_load(&gate))
        weft_yield();
    return arg;
}

/* ---- joined at most once ------------------------------------------------- */

typedef struct join_try {
    weft_thread *target;
    atomic_int rc; /* -1 until weft_join returned */
    void *result;
} join_try;

static void join_try_init(join_try *j, weft_thread *t)
{
    j->target = t;
    j->result = NULL;
    atomic_store(&j->rc, -1);
}

static void *plain_join(void *arg)
{
    join_try *j = arg;
    void *res = NULL;
    int rc = weft_join(j->target, &res);
    j->result = res;
    atomic_store(&j->rc, rc);
    return NULL;
}

static void *user_join(void *arg)
{
    return plain_join(arg);
}

/* Waits until one of the two attempts has returned; the other must still be
 * blocked (its target cannot finish before the gate opens). */
static join_try *first_back(join_try *a, join_try *b)
{
    while (atomic_load(&a->rc) == -1 && atomic_load(&b->rc) == -1)
        weft_yield();
    return atomic_load(&a->rc) != -1 ? a : b;
}

static void wait_back(join_try *j)
{
    while (atomic_load(&j->rc) == -1)
        weft_yield();
}

/* Two joiners (kinds given) race for one gated thread: one gets EINVAL while
 * the thread still waits, the other its result once the gate opens. */
static void two_joiners(int a_is_user, int b_is_user)
{
    join_try a, b;
    weft_thread *t, *ua = NULL, *ub = NULL;
    pthread_t pa, pb;
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, wait_gate, (void *)0x7a, NULL), 0);
    join_try_init(&a, t);
    join_try_init(&b, t);
    if (a_is_user)
        CHECK_EQ(weft_spawn(&ua, user_join, &a, NULL), 0);
    else
        CHECK_EQ(pthread_create(&pa, NULL, plain_join, &a), 0);
    if (b_is_user)
        CHECK_EQ(weft_spawn(&ub, user_join, &b, NULL), 0);
    else
        CHECK_EQ(pthread_create(&pb, NULL, plain_join, &b), 0);
    join_try *loser = first_back(&a, &b);
    join_try *winner = loser == &a ? &b : &a;
    CHECK_EQ(atomic_load(&loser->rc), EINVAL);
    CHECK_EQ(atomic_load(&winner->rc), -1);
    /* While it is being joined it cannot be detached either. */
    CHECK_EQ(weft_detach(t), EINVAL);
    atomic_store(&gate, 1);
    wait_back(winner);
    CHECK_EQ(atomic_load(&winner->rc), 0);
    CHECK(winner->result == (void *)0x7a);
    if (a_is_user)
        CHECK_EQ(weft_join(ua, NULL), 0);
    else
        CHECK_EQ(test_pthread_join(pa, NULL), 0);
    if (b_is_user)
        CHECK_EQ(weft_join(ub, NULL), 0);
    else
        CHECK_EQ(test_pthread_join(pb, NULL), 0);
}

/* weft_detach races a plain thread's weft_join: exactly one of them wins. */
static void detach_vs_plain_join(void)
{
    join_try j;
    weft_thread *t;
    pthread_t pt;
    atomic_int ran = 0;
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, wait_gate, &ran, NULL), 0);
    join_try_init(&j, t);
    CHECK_EQ(pthread_create(&pt, NULL, plain_join, &j), 0);
    int drc = weft_detach(t);
    if (drc == 0) {
        /* Detached first: the join must fail (the thread lives until the
         * gate opens, so the joiner's handle is still valid). */
        wait_back(&j);
        CHECK_EQ(atomic_load(&j.rc), EINVAL);
        atomic_store(&gate, 1);
    } else {
        CHECK_EQ(drc, EINVAL);
        CHECK_EQ(atomic_load(&j.rc), -1);
        atomic_store(&gate, 1);
        wait_back(&j);
        CHECK_EQ(atomic_load(&j.rc), 0);
        CHECK(j.result == &ran);
    }
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
}

/* ---- weft_exit from other kinds of thread -------------------------------- */

static atomic_int after_exit, detached_exited;

static void *exit_now(void *arg)
{
    weft_exit(arg);
}

static void *exit_detached(void *arg)
{
    atomic_fetch_add(&detached_exited, 1);
    weft_exit(arg);
}

static void *exit_from_nested_bound(void *arg)
{
    /* A bound thread that spawns, joins, then exits from a nested frame. */
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, exit_now, (void *)0x11, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0x11);
    exit_now(arg);
    atomic_store(&after_exit, 1);
    return (void *)0xbad;
}

static void *plain_spawns_exiter(void *arg)
{
    weft_thread *t;
    void *res = NULL;
    CHECK_EQ(weft_spawn(&t, exit_now, arg, NULL), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    return res;
}

/* ---- bound threads ------------------------------------------------------- */

static void *bound_worker_id(void *arg)
{
    (void)arg;
    CHECK(weft_self() != NULL);
    return (void *)(intptr_t)weft_worker_id();
}

/* ---- ids ----------------------------------------------------------------- */

enum { KINDS = 4, PER_KIND = 40 };
static uint64_t seen_ids[KINDS * PER_KIND * 2 + 8];
static atomic_int nseen;

static void note_id(uint64_t id)
{
    int i = atomic_fetch_add(&nseen, 1);
    CHECK(i < (int)(sizeof seen_ids / sizeof seen_ids[0]));
    seen_ids[i] = id;
}

/* Notes its own id, then waits at the gate (so all are alive together). */
static void *id_then_gate(void *arg)
{
    note_id(weft_thread_id(weft_self()));
    return wait_gate(arg);
}

static atomic_int id_threads_done;

static void *id_then_gate_count(void *arg)
{
    id_then_gate(arg);
    atomic_fetch_add(&id_threads_done, 1);
    return NULL;
}

static void *plain_spawns_id_threads(void *arg)
{
    weft_thread **ts = arg;
    for (int i = 0; i < PER_KIND; i++)
        CHECK_EQ(weft_spawn(&ts[i], id_then_gate, NULL, NULL), 0);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void ids_across_kinds(void)
{
    static weft_thread *joinable[PER_KIND], *bound_ts[PER_KIND], *from_plain[PER_KIND];
    weft_attr bound = WEFT_ATTR_INIT, det = WEFT_ATTR_INIT;
    bound.bound = 1;
    det.detached = 1;
    atomic_store(&gate, 0);
    atomic_store(&nseen, 0);
    atomic_store(&id_threads_done, 0);
    note_id(weft_thread_id(weft_self()));
    for (int i = 0; i < PER_KIND; i++) {
        CHECK_EQ(weft_spawn(&joinable[i], id_then_gate, NULL, NULL), 0);
        CHECK_EQ(weft_spawn(&bound_ts[i], id_then_gate, NULL, &bound), 0);
        CHECK_EQ(weft_spawn(NULL, id_then_gate_count, NULL, &det), 0);
    }
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, plain_spawns_id_threads, from_plain), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    /* Every thread has noted its id before any may finish. */
    while (atomic_load(&nseen) < 1 + KINDS * PER_KIND)
        weft_yield();
    /* The ids seen from outside are the ones seen inside (checked as a set). */
    int n = atomic_load(&nseen);
    for (int i = 0; i < PER_KIND; i++) {
        seen_ids[n++] = weft_thread_id(joinable[i]);
        seen_ids[n++] = weft_thread_id(bound_ts[i]);
        seen_ids[n++] = weft_thread_id(from_plain[i]);
    }
    atomic_store(&gate, 1);
    for (int i = 0; i < PER_KIND; i++) {
        CHECK_EQ(weft_join(joinable[i], NULL), 0);
        CHECK_EQ(weft_join(bound_ts[i], NULL), 0);
        CHECK_EQ(weft_join(from_plain[i], NULL), 0);
    }
    while (atomic_load(&id_threads_done) < PER_KIND)
        weft_yield();
    int inside = 1 + KINDS * PER_KIND;
    qsort(seen_ids, (size_t)inside, sizeof seen_ids[0], cmp_u64);
    CHECK(seen_ids[0] != 0);
    for (int i = 1; i < inside; i++)
        if (seen_ids[i] == seen_ids[i - 1]) {
            fprintf(stderr, "duplicate id %llu\n", (unsigned long long)seen_ids[i]);
            CHECK(seen_ids[i] != seen_ids[i - 1]);
        }
    for (int i = inside; i < n; i++) {
        uint64_t id = seen_ids[i];
        CHECK(bsearch(&id, seen_ids, (size_t)inside, sizeof id, cmp_u64) != NULL);
    }
}

static void run(int workers, int policy)
{
    test_init(workers, policy);

    two_joiners(0, 0);
    two_joiners(0, 1);
    two_joiners(1, 0);
    two_joiners(1, 1);
    for (int i = 0; i < 20; i++)
        detach_vs_plain_join();

    /* weft_exit from a bound thread: the result reaches the joiner, from a
     * user thread and from a plain kernel thread. */
    weft_attr bound = WEFT_ATTR_INIT, det = WEFT_ATTR_INIT;
    bound.bound = 1;
    det.detached = 1;
    weft_thread *t;
    void *res = NULL;
    atomic_store(&after_exit, 0);
    CHECK_EQ(weft_spawn(&t, exit_from_nested_bound, (void *)0xb0, &bound), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK(res == (void *)0xb0);
    CHECK_EQ(atomic_load(&after_exit), 0);
    CHECK_EQ(weft_spawn(&t, exit_now, (void *)0xb1, &bound), 0);
    pthread_t pt;
    join_try j;
    join_try_init(&j, t);
    CHECK_EQ(pthread_create(&pt, NULL, plain_join, &j), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    CHECK_EQ(atomic_load(&j.rc), 0);
    CHECK(j.result == (void *)0xb1);
    /* weft_exit from a thread a plain kernel thread spawned and joins. */
    CHECK_EQ(pthread_create(&pt, NULL, plain_spawns_exiter, (void *)0xb2), 0);
    CHECK_EQ(test_pthread_join(pt, &res), 0);
    CHECK(res == (void *)0xb2);
    /* weft_exit from detached threads, plain and bound. */
    atomic_store(&detached_exited, 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ(weft_spawn(NULL, exit_detached, NULL, &det), 0);
    weft_attr bd = bound;
    bd.detached = 1;
    CHECK_EQ(weft_spawn(NULL, exit_detached, NULL, &bd), 0);
    while (atomic_load(&detached_exited) < 11)
        weft_yield();

    /* attr.priority: the four classes are accepted, anything else EINVAL. */
    {
        weft_attr pa = WEFT_ATTR_INIT;
        static const int prios[] = { WEFT_PRIO_BACKGROUND, WEFT_PRIO_NORMAL, WEFT_PRIO_HIGH,
                                     WEFT_PRIO_URGENT };
        for (size_t i = 0; i < sizeof prios / sizeof *prios; i++) {
            pa.priority = prios[i];
            CHECK_EQ(weft_spawn(&t, ret_arg, (void *)7, &pa), 0);
            CHECK_EQ(weft_join(t, &res), 0);
            CHECK_EQ((intptr_t)res, 7);
        }
        pa.priority = WEFT_PRIO_URGENT + 1;
        CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &pa), EINVAL);
        pa.priority = WEFT_PRIO_BACKGROUND - 1;
        CHECK_EQ(weft_spawn(&t, ret_arg, NULL, &pa), EINVAL);
    }

    /* out may be NULL only for a detached thread, bound ones included. */
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &bound), EINVAL);
    CHECK_EQ(weft_spawn(NULL, ret_arg, NULL, &bd), 0);
    /* A detached bound thread cannot be joined (alive while we try). */
    atomic_store(&gate, 0);
    CHECK_EQ(weft_spawn(&t, wait_gate, NULL, &bd), 0);
    CHECK_EQ(weft_join(t, NULL), EINVAL);
    CHECK_EQ(weft_detach(t), EINVAL);
    atomic_store(&gate, 1);

    /* A bound thread is a user thread on a kernel thread of its own, not on
     * a worker. */
    CHECK_EQ(weft_spawn(&t, bound_worker_id, NULL, &bound), 0);
    CHECK_EQ(weft_join(t, &res), 0);
    CHECK_EQ((intptr_t)res, -1);

    ids_across_kinds();

    CHECK_EQ(weft_finalize(), 0);
}

int main(void)
{
    test_clear_env();
    run(1, WEFT_WORK_FIRST);
    run(2, WEFT_HELP_FIRST);
    run(2, WEFT_WORK_FIRST);
    return 0;
}
