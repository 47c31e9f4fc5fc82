/* Stress: the mltp API on 2 to 4 virtual processors, round after round for a
 * bounded time. Each round runs at once: a bounded buffer (one mltp lock of
 * the round's kind, two conditions, signal and broadcast) between user,
 * bound and plain kernel producers and consumers; a barrier group of user
 * threads and a bound thread checking that no episode is left early; and
 * churn threads that take three locks of the three kinds, yield to the tail
 * and to the head, and create and join children. Every item must be
 * consumed exactly once and every counter must add up. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include <mltp.h>

#include "check.h"

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) ||                               \
    __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TOTAL_SECONDS 6.0
#define SCALE         4
#else
#define TOTAL_SECONDS 9.0
#define SCALE         1
#endif

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- bounded buffer ------------------------------------------------------------ */

enum { CAP = 6, U_PROD = 4, U_CONS = 4, PER_PROD = 1000 / SCALE };
enum { NPROD = U_PROD + 2, NCONS = U_CONS + 1 }; /* + bound and pthread producers, bound consumer */
#define STOP (-1L)

static mltp_lock_t bl;
static mltp_cond_t not_full, not_empty;
static long buf[CAP]; /* under bl */
static int head, len; /* under bl */
static atomic_long consumed_sum, consumed_n;

static void put(long v)
{
    mltp_lock(&bl);
    while (len == CAP)
        mltp_cond_wait(&not_full, &bl);
    buf[(head + len) % CAP] = v;
    len++;
    if (v % 31 == 0)
        mltp_cond_broadcast(&not_empty);
    else
        mltp_cond_signal(&not_empty);
    mltp_unlock(&bl);
}

static long get(void)
{
    mltp_lock(&bl);
    while (len == 0)
        mltp_cond_wait(&not_empty, &bl);
    long v = buf[head];
    head = (head + 1) % CAP;
    len--;
    mltp_cond_signal(&not_full);
    mltp_unlock(&bl);
    return v;
}

static void produce(long id)
{
    for (long i = 0; i < PER_PROD; i++)
        put(id * PER_PROD + i + 1);
}

static void consume(void)
{
    for (;;) {
        long v = get();
        if (v == STOP)
            return;
        atomic_fetch_add(&consumed_sum, v);
        atomic_fetch_add(&consumed_n, 1);
    }
}

static void producer_user(void *arg)
{
    produce((long)(intptr_t)arg);
}

static void *producer_kernel(void *arg)
{
    produce((long)(intptr_t)arg);
    return NULL;
}

static void consumer_user(void *arg)
{
    (void)arg;
    consume();
}

static void *consumer_bound(void *arg)
{
    consume();
    return arg;
}

/* ---- barrier group -------------------------------------------------------------- */

enum { G_USER = 5, GROUP = G_USER + 1, EPISODES = 300 / SCALE };
static mltp_barrier_t bar;
static atomic_int slot[GROUP];

static void episodes(int me)
{
    uint64_t s = 0x9e3779b97f4a7c15u ^ (uint64_t)(me + 1);
    for (int e = 1; e <= EPISODES; e++) {
        atomic_store(&slot[me], e);
        if (rnd(&s) % 4 == 0)
            mltp_yield_to_first();
        mltp_barrier(&bar);
        for (int j = 0; j < GROUP; j++) {
            int v = atomic_load(&slot[j]);
            CHECK(v == e || v == e + 1);
        }
    }
}

static void episodes_user(void *arg)
{
    episodes((int)(intptr_t)arg);
}

static void *episodes_bound(void *arg)
{
    episodes((int)(intptr_t)arg);
    return NULL;
}

/* ---- churn ------------------------------------------------------------------------ */

enum { CHURNERS = 6, CHURN_OPS = 2000 / SCALE };
static mltp_lock_t locks[3];
static long guarded[3]; /* guarded[i] under locks[i] */
static atomic_long expect_guarded[3], children;

static void child(void *arg)
{
    int i = (int)(intptr_t)arg;
    mltp_lock(&locks[i]);
    guarded[i]++;
    mltp_unlock(&locks[i]);
    atomic_fetch_add(&expect_guarded[i], 1);
    atomic_fetch_add(&children, 1);
}

static void churn(void *arg)
{
    uint64_t s = 0x2545f4914f6cdd1du ^ (uint64_t)(intptr_t)arg;
    mltp_thread_t *kids[4];
    int nk = 0;
    for (int op = 0; op < CHURN_OPS; op++) {
        uint64_t r = rnd(&s);
        int i = (int)(r % 3);
        switch ((r >> 8) % 6) {
        case 0:
        case 1:
        case 2:
            mltp_lock(&locks[i]);
            guarded[i]++;
            mltp_unlock(&locks[i]);
            atomic_fetch_add(&expect_guarded[i], 1);
            break;
        case 3: mltp_yield(); break;
        case 4: mltp_yield_to_first(); break;
        default:
            if (nk < 4) {
                kids[nk] = mltp_create(child, (void *)(intptr_t)i);
                CHECK(kids[nk] != NULL);
                nk++;
            } else {
                while (nk > 0)
                    CHECK_EQ(mltp_join(kids[--nk]), 0);
            }
            break;
        }
    }
    while (nk > 0)
        CHECK_EQ(mltp_join(kids[--nk]), 0);
}

static void join_it(void *t)
{
    CHECK_EQ(mltp_join(t), 0);
}

static atomic_int kernel_done;

static void *producer_pthread(void *arg)
{
    produce((long)(intptr_t)arg);
    atomic_store(&kernel_done, 1);
    return NULL;
}

static mltp_thread_t **closer_prods;

static void close_buffer(void *arg)
{
    (void)arg;
    for (int i = 0; i <= U_PROD; i++)
        CHECK_EQ(mltp_join(closer_prods[i]), 0);
    while (!atomic_load(&kernel_done))
        mltp_yield();
    for (int i = 0; i < NCONS; i++)
        put(STOP);
}

static void round_once(int vp, int kind)
{
    CHECK_EQ(mltp_init(vp), 0);
    CHECK_EQ(mltp_lock_init(&bl, kind), 0);
    CHECK_EQ(mltp_cond_init(&not_full), 0);
    CHECK_EQ(mltp_cond_init(&not_empty), 0);
    head = len = 0;
    atomic_store(&consumed_sum, 0);
    atomic_store(&consumed_n, 0);
    CHECK_EQ(mltp_barrier_init(&bar, GROUP), 0);
    memset(slot, 0, sizeof slot);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(mltp_lock_init(&locks[i], i), 0);
        guarded[i] = 0;
        atomic_store(&expect_guarded[i], 0);
    }
    atomic_store(&children, 0);
    atomic_store(&kernel_done, 0);

    mltp_thread_t *users[64];
    int nu = 0;
    for (int i = 0; i < U_CONS; i++)
        CHECK((users[nu++] = mltp_create(consumer_user, NULL)) != NULL);
    mltp_thread_t *cb = mltp_create_bound(consumer_bound, NULL, 0, NULL);
    CHECK(cb != NULL);
    mltp_thread_t *cbj = mltp_create(join_it, cb);
    CHECK(cbj != NULL);
    mltp_thread_t *prods[U_PROD + 1];
    for (int i = 0; i < U_PROD; i++)
        CHECK((prods[i] = mltp_create(producer_user, (void *)(intptr_t)i)) != NULL);
    mltp_thread_t *pb = mltp_create_bound(producer_kernel, (void *)(intptr_t)U_PROD, 0, NULL);
    CHECK(pb != NULL);
    CHECK((prods[U_PROD] = mltp_create(join_it, pb)) != NULL);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, producer_pthread, (void *)(intptr_t)(U_PROD + 1)), 0);

    for (int i = 0; i < G_USER; i++)
        CHECK((users[nu++] = mltp_create(episodes_user, (void *)(intptr_t)i)) != NULL);
    mltp_thread_t *gb = mltp_create_bound(episodes_bound, (void *)(intptr_t)G_USER, 0, NULL);
    CHECK(gb != NULL);
    CHECK((users[nu++] = mltp_create(join_it, gb)) != NULL);
    for (int i = 0; i < CHURNERS; i++)
        CHECK((users[nu++] = mltp_create(churn, (void *)(intptr_t)(i + 1))) != NULL);

    /* A user thread waits for the producers and sends one STOP per
     * consumer. (The initial thread only joins user threads here: woken by
     * a bound or kernel thread it takes another path, mltp_wake_initial.) */
    closer_prods = prods;
    mltp_thread_t *closer = mltp_create(close_buffer, NULL);
    CHECK(closer != NULL);
    CHECK_EQ(mltp_join(closer), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(mltp_join(cbj), 0);
    for (int i = 0; i < nu; i++)
        CHECK_EQ(mltp_join(users[i]), 0);

    long n = (long)NPROD * PER_PROD;
    CHECK_EQ(atomic_load(&consumed_n), n);
    CHECK_EQ(atomic_load(&consumed_sum), n * (n + 1) / 2);
    CHECK_EQ(len, 0);
    for (int j = 0; j < GROUP; j++)
        CHECK_EQ(atomic_load(&slot[j]), EPISODES);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(guarded[i], atomic_load(&expect_guarded[i]));
    CHECK_EQ(mltp_finalize(), 0);
}

int main(void)
{
    double until = check_now() + TOTAL_SECONDS;
    int rounds = 0;
    do {
        round_once(2 + rounds % 3, rounds % 3);
        rounds++;
    } while (check_now() < until);
    printf("mltp_mix: %d rounds ok\n", rounds);
    return 0;
}
