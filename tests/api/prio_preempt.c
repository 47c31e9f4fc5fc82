/* Preemption (quantum 1 ms), each phase on one worker so that nothing but
 * preemption can let the other threads run; an alarm turns a hang (no
 * preemption, a deadlock) into a failure:
 *  - spinners that call nothing share the worker, and weft_stats counts
 *    the quantum preemptions; with the quantum off (quantum_us < 0 or
 *    WEFT_QUANTUM=off) nobody is preempted (child processes, which must
 *    hang), and WEFT_QUANTUM=500us preempts;
 *  - spinners in malloc/free/snprintf loops interleave without corrupting
 *    the heap (each block is filled and checked before it is freed);
 *  - errno and the rounding mode (fesetround) survive preemption;
 *  - a thread preempted while it holds a pthread mutex, which the other
 *    thread then waits for in the kernel: no deadlock (the blocked
 *    worker is handed to another kernel thread), also when 20 threads
 *    block there one after another;
 *  - a rescued thread's raw nanosleep is not broken off by the monitor's
 *    signals;
 *  - a HIGH thread readied by a plain kernel thread preempts a NORMAL
 *    spinner at once (a priority preemption);
 *  - priority inheritance: a BACKGROUND holder of a weft_mutex on which a
 *    HIGH thread waits runs before a NORMAL spinner, which would otherwise
 *    hold the worker for seconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define QUANTUM_US 1000
#define PT_ROUNDS  50 /* each spinner's rounds that the others must see */

#include "preempt_test.h" /* the spinners that call nothing: pt_spin_nothing */

/* ---- malloc, free, snprintf ------------------------------------------------------- */

static void *spin_libc(void *arg)
{
    int me = (int)(intptr_t)arg;
    uint64_t seed = (uint64_t)me * 7919 + 1;
    for (int r = 1;; r++) {
        size_t n = 16 + (size_t)(test_splitmix(&seed) % 4000);
        unsigned char *p = malloc(n);
        CHECK(p != NULL);
        unsigned char tag = (unsigned char)(seed >> 13);
        memset(p, tag, n);
        char line[64];
        snprintf(line, sizeof line, "thread %d round %d size %zu", me, r, n);
        CHECK(strlen(line) > 10);
        for (size_t k = 0; k < n; k++)
            CHECK(p[k] == tag);
        free(p);
        if (r <= PT_ROUNDS)
            atomic_store_explicit(&pt_progress[me], r, memory_order_relaxed);
        else if (pt_all_reached(PT_ROUNDS))
            break;
    }
    return NULL;
}

/* ---- errno and the rounding mode ------------------------------------------------ */

static atomic_int fp_bad;

/* 1/3 in the current rounding mode (not folded nor moved by the compiler) */
static __attribute__((noinline, noipa)) double third(void)
{
    volatile double one = 1.0, three = 3.0;
    return one / three;
}

static void *keep_state(void *arg)
{
    int me = (int)(intptr_t)arg;
    static const int modes[PT_NSPIN] = { FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
    fesetround(modes[me]);
    errno = 1000 + me;
    volatile uint64_t x = 0;
    for (int r = 1; r <= PT_ROUNDS; r++) {
        for (int k = 0; k < 20000; k++)
            x++;
        if (errno != 1000 + me || fegetround() != modes[me])
            atomic_store(&fp_bad, 10 + me);
        atomic_store_explicit(&pt_progress[me], r, memory_order_relaxed);
    }
    while (!pt_all_reached(PT_ROUNDS))
        x++;
    if (errno != 1000 + me || fegetround() != modes[me])
        atomic_store(&fp_bad, 20 + me);
    /* the rounding mode is really in force: 1/3 rounds differently */
    double up = third();
    fesetround(FE_TONEAREST);
    double near = third();
    if ((modes[me] == FE_UPWARD) != (up > near))
        atomic_store(&fp_bad, 1);
    return NULL;
}

/* ---- a HIGH thread woken by a plain kernel thread ------------------------------- */

static atomic_int high_ran, stop_spin;
static weft_sem high_sem;

static void *high_waiter(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&high_sem), 0);
    atomic_store(&high_ran, 1);
    return NULL;
}

static void *normal_spinner(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stop_spin, memory_order_relaxed))
        ;
    return NULL;
}

static void *poster(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_post(&high_sem), 0);
    while (!atomic_load(&high_ran))
        usleep(100);
    atomic_store(&stop_spin, 1);
    return NULL;
}

static void priority_preemption(void)
{
    weft_sem_init(&high_sem, 0);
    weft_thread *h = test_spawn_prio(WEFT_PRIO_HIGH, high_waiter, NULL); /* runs at once, parks */
    weft_thread *s;
    CHECK_EQ(weft_spawn(&s, normal_spinner, NULL, NULL), 0);
    /* the spinner holds the worker; the initial thread is queued behind
     * it and comes back by the quantum, then starts the plain poster */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, poster, NULL), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    CHECK_EQ(weft_join(s, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.preempt_priority + st.preempt_quantum > 0);
}

/* ---- inheritance ------------------------------------------------------------------ */

static weft_mutex mx = WEFT_MUTEX_INIT;
static weft_sem locked;
static atomic_int release_low, h_done, m_timed_out;

static void *low_holder(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_lock(&mx), 0);
    CHECK_EQ(weft_sem_post(&locked), 0);
    while (!atomic_load_explicit(&release_low, memory_order_relaxed))
        ;
    CHECK_EQ(weft_priority(NULL), WEFT_PRIO_BACKGROUND); /* the set one, inherited or not */
    CHECK_EQ(weft_mutex_unlock(&mx), 0);
    return NULL;
}

static void *medium_spinner(void *arg)
{
    (void)arg;
    double end = check_now() + 3.0;
    while (!atomic_load_explicit(&h_done, memory_order_relaxed))
        if (check_now() > end) {
            atomic_store(&m_timed_out, 1);
            break;
        }
    return NULL;
}

static void *high_locker(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_mutex_lock(&mx), 0);
    atomic_store(&h_done, 1);
    CHECK_EQ(weft_mutex_unlock(&mx), 0);
    return NULL;
}

static void inheritance(void)
{
    weft_sem_init(&locked, 0);
    weft_attr low = WEFT_ATTR_INIT, high = WEFT_ATTR_INIT;
    low.priority = WEFT_PRIO_BACKGROUND;
    high.priority = WEFT_PRIO_HIGH;
    weft_thread *l, *m, *h;
    CHECK_EQ(weft_spawn(&l, low_holder, NULL, &low), 0);     /* queued: lower */
    CHECK_EQ(weft_sem_wait(&locked), 0);                     /* l holds mx */
    CHECK_EQ(weft_spawn(&m, medium_spinner, NULL, NULL), 0); /* runs; the quantum brings us back */
    atomic_store(&release_low, 1);
    CHECK_EQ(weft_spawn(&h, high_locker, NULL, &high), 0); /* runs at once, waits for l */
    CHECK_EQ(weft_join(h, NULL), 0);
    CHECK_EQ(weft_join(m, NULL), 0);
    CHECK_EQ(weft_join(l, NULL), 0);
    CHECK_EQ(atomic_load(&m_timed_out), 0); /* h got the mutex while m still spun */
}

/* ---- a pthread mutex held across a preemption ----------------------------------- */

/* The holder is preempted while it holds a pthread mutex that the other
 * thread then waits for in the kernel, on the only worker: that worker is
 * handed to another kernel thread, the holder finishes, nothing hangs. */
static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static atomic_int want_pm, pm_rounds;

static void *pm_holder(void *arg)
{
    (void)arg;
    for (int r = 0; r < 5; r++) {
        pthread_mutex_lock(&pm);
        atomic_store(&want_pm, 0);
        while (!atomic_load_explicit(&want_pm, memory_order_relaxed))
            ; /* holds pm until the other one asks: only preemption lets it */
        pthread_mutex_unlock(&pm);
        while (atomic_load_explicit(&pm_rounds, memory_order_relaxed) <= r)
            ;
    }
    return NULL;
}

static void *pm_wanter(void *arg)
{
    (void)arg;
    for (int r = 0; r < 5; r++) {
        atomic_store(&want_pm, 1);
        pthread_mutex_lock(&pm); /* blocks its kernel thread: the holder has it */
        atomic_fetch_add(&pm_rounds, 1);
        pthread_mutex_unlock(&pm);
        while (atomic_load_explicit(&want_pm, memory_order_relaxed) && r < 4)
            ; /* until the holder holds it again */
    }
    return NULL;
}

static void pthread_mutex_holder(void)
{
    weft_thread *h, *w;
    CHECK_EQ(weft_spawn(&h, pm_holder, NULL, NULL), 0);
    CHECK_EQ(weft_spawn(&w, pm_wanter, NULL, NULL), 0);
    CHECK_EQ(weft_join(w, NULL), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    CHECK_EQ(atomic_load(&pm_rounds), 5);
}

/* ---- several threads blocked behind one preempted holder ------------------------ */

/* The holder keeps the mutex until every wanter has asked for it; each
 * wanter blocks its kernel thread in turn on the only worker, with the
 * holder ready behind them all: the worker is rescued once per wanter while
 * the earlier ones are still away (one rescue per worker at a time hung
 * here), more of them than the old table of 16 rescued threads held. */
#define NWANTERS 20
static pthread_mutex_t pm_many = PTHREAD_MUTEX_INITIALIZER;
static atomic_int many_asked, many_done;

static void *many_holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pm_many);
    while (atomic_load_explicit(&many_asked, memory_order_relaxed) < NWANTERS)
        ; /* only preemption and rescues let the wanters ask */
    pthread_mutex_unlock(&pm_many);
    return NULL;
}

static void *many_wanter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&many_asked, 1);
    pthread_mutex_lock(&pm_many); /* blocks its kernel thread */
    atomic_fetch_add(&many_done, 1);
    pthread_mutex_unlock(&pm_many);
    return NULL;
}

static void pthread_mutex_many(void)
{
    weft_thread *h, *w[NWANTERS];
    CHECK_EQ(weft_spawn(&h, many_holder, NULL, NULL), 0);
    for (int i = 0; i < NWANTERS; i++)
        CHECK_EQ(weft_spawn(&w[i], many_wanter, NULL, NULL), 0);
    CHECK_EQ(weft_join(h, NULL), 0);
    for (int i = 0; i < NWANTERS; i++)
        CHECK_EQ(weft_join(w[i], NULL), 0);
    CHECK_EQ(atomic_load(&many_done), NWANTERS);
}

/* ---- a rescued thread's later system calls ---------------------------------------- */

/* A thread blocked in read (restarted after a signal: it can be rescued
 * there) with the initial thread ready behind it on the only worker is
 * rescued, and goes on on the kernel thread the rescue left it. Its next
 * call, a raw nanosleep (which SA_RESTART does not restart), sleeps its
 * whole time: the monitor signals a rescued thread only once it runs again
 * (it signalled it at its looks, and nanosleep failed with EINTR 8 to 10
 * times in 100 ms). A yielding thread keeps the monitor looking.
 *
 * The rescue may be refused (its stack scan takes a stale return address
 * into libweft, left in a word the thread's frames never wrote, for libweft
 * code under way; ASan's frames leave more): then a plain kernel thread
 * writes the byte after a while, the sleeper runs on the worker, and its
 * nanosleep is broken off only by the refused rescues, which the monitor
 * spaces out (about ten in 100 ms; it was every 230 us or so). */
#define AWAY_SLEEP_MS   100
#define AWAY_GIVE_UP_MS 3000
static int away_pipe[2];
static atomic_int away_stop, away_eintr, away_rescued, away_main_ran;

static void *away_sleeper(void *arg)
{
    (void)arg;
    char c;
    CHECK_EQ(read(away_pipe[0], &c, 1), 1); /* the kernel's: holds the worker */
    weft_thread_info info;
    CHECK_EQ(weft_thread_info_get(NULL, &info), 0);
    /* Away from the workers, unless a look found it running in the few
     * instructions since read returned and brought it back (then the
     * nanosleep below holds the only worker, which quanta interrupt). */
    atomic_store(&away_rescued, info.worker < 0);
    struct timespec ts = { 0, AWAY_SLEEP_MS * 1000000L };
    int eintr = 0;
    while (nanosleep(&ts, &ts) != 0) {
        CHECK_EQ(errno, EINTR);
        eintr++;
    }
    atomic_store(&away_eintr, eintr);
    atomic_store(&away_stop, 1);
    return NULL;
}

/* A plain kernel thread: writes the byte once the initial thread ran (the
 * worker was rescued), or when it gives up waiting for that. */
static void *away_writer(void *arg)
{
    (void)arg;
    for (int ms = 0; ms < AWAY_GIVE_UP_MS && !atomic_load(&away_main_ran); ms++)
        usleep(1000);
    CHECK_EQ(write(away_pipe[1], "x", 1), 1);
    return NULL;
}

static void rescued_syscalls(void)
{
    CHECK_EQ(pipe(away_pipe), 0);
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, away_writer, NULL), 0);
    weft_thread *s, *y;
    CHECK_EQ(weft_spawn(&s, away_sleeper, NULL, NULL), 0); /* runs at once, blocks */
    CHECK_EQ(weft_spawn(&y, test_yield_until_set, &away_stop, NULL), 0);
    atomic_store(&away_main_ran, 1);
    CHECK_EQ(weft_join(s, NULL), 0);
    CHECK_EQ(weft_join(y, NULL), 0);
    CHECK_EQ(test_pthread_join(pt, NULL), 0);
    close(away_pipe[0]);
    close(away_pipe[1]);
    if (atomic_load(&away_rescued))
        CHECK(atomic_load(&away_eintr) <= 2); /* a look may catch it entering the call */
    else
        CHECK(atomic_load(&away_eintr) <= 20); /* the refused rescues, spaced out */
    printf("rescued_syscalls: rescued %d, nanosleep broken off %d times\n",
           atomic_load(&away_rescued), atomic_load(&away_eintr));
}

/* ---- quantum off: nobody is preempted -------------------------------------------- */

static int off_child(void)
{
    alarm(2);
    test_init_quantum(1, -1);
    pt_spinners(pt_spin_nothing); /* hangs: the alarm ends it */
    return 0;
}

/* The environment's WEFT_QUANTUM (weft_init(NULL)): hangs when off. */
static int env_child(void)
{
    alarm(2);
    CHECK_EQ(weft_init(NULL), 0);
    pt_spinners(pt_spin_nothing);
    CHECK_EQ(weft_finalize(), 0);
    printf("done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "off") == 0)
        return off_child();
    if (argc > 1 && strcmp(argv[1], "env") == 0)
        return env_child();
    if (!test_preemption_possible())
        SKIP("no preemption under ThreadSanitizer");
    test_clear_env();
    alarm(60);

    test_init_quantum(1, QUANTUM_US);
    pt_spinners(pt_spin_nothing);
    weft_stats st;
    CHECK_EQ(weft_stats_get(&st), 0);
    CHECK(st.preempt_quantum > 0);
    pt_spinners(spin_libc);
    pt_spinners(keep_state);
    CHECK_EQ(atomic_load(&fp_bad), 0);
    priority_preemption();
    inheritance();
    pthread_mutex_holder();
    pthread_mutex_many();
    rescued_syscalls();
    CHECK_EQ(weft_finalize(), 0);

    /* the default quantum (10 ms) preempts too */
    test_init_quantum(1, 0);
    pt_spinners(pt_spin_nothing);
    CHECK_EQ(weft_finalize(), 0);

    static test_child r;
    test_run_self(&r, "off", NULL, NULL, NULL);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGALRM);
    static const char *const env_on[] = { "WEFT_WORKERS=1", "WEFT_QUANTUM=500us", NULL };
    test_run_self(&r, "env", NULL, env_on, NULL);
    CHECK(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && strcmp(r.out, "done\n") == 0);
    static const char *const env_off[] = { "WEFT_WORKERS=1", "WEFT_QUANTUM=off", NULL };
    test_run_self(&r, "env", NULL, env_off, NULL);
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGALRM);
    printf("prio_preempt: ok\n");
    return 0;
}
