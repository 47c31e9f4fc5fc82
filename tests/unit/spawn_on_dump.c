/* Tests that weft_dump lists the threads that run on a caller's memory
 * (weft__spawn_on, the drop-in's pthread_attr_setstack), with their name
 * and state and without a backtrace (the memory is the caller's, which
 * may free it once the thread is joined); and that dumps taken while such
 * threads are made, joined and their memory freed or unmapped, over and
 * over, read nothing of that memory afterwards (ASan and the unmaps catch
 * a late read). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <weft.h>

#include "check.h"
#include "dump_test.h"
#include "testutil.h"
#include "thread/thread.h"

#define KiB ((size_t)1 << 10)

static weft_sem gate;

static void *parked(void *arg)
{
    (void)arg;
    CHECK_EQ(weft_sem_wait(&gate), 0);
    return NULL;
}

static _Atomic int stop;

static void *brief(void *arg)
{
    weft_yield();
    return arg;
}

/* Makes threads on fresh memory, joins them and gives the memory back,
 * until told to stop: half malloc'ed, half mapped (an unmapped stack read
 * afterwards would fault). */
static void *churn(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        size_t size = 64 * KiB;
        int mapped = i & 1;
        char *m = mapped
                      ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                      : malloc(size);
        CHECK(m != NULL && m != MAP_FAILED);
        weft_attr a = WEFT_ATTR_INIT;
        a.name = "churn";
        weft_thread *t;
        CHECK_EQ(weft__spawn_on(&t, brief, NULL, &a, m, size), 0);
        CHECK_EQ(weft_join(t, NULL), 0);
        if (mapped)
            CHECK_EQ(munmap(m, size), 0);
        else
            free(m);
    }
    return NULL;
}

int main(void)
{
    test_init(2, TEST_POLICY_ENV);
    CHECK_EQ(weft_sem_init(&gate, 0), 0);

    /* a parked thread on a caller's stack is listed, by name */
    size_t size = 128 * KiB;
    char *m = malloc(size);
    CHECK(m != NULL);
    weft_attr a = WEFT_ATTR_INIT;
    a.name = "borrowed";
    weft_thread *t;
    CHECK_EQ(weft__spawn_on(&t, parked, NULL, &a, m, size), 0);
    weft_thread_info info;
    for (int i = 0; i < 100000; i++) {
        CHECK_EQ(weft_thread_info_get(t, &info), 0);
        if (info.state == WEFT_STATE_PARKED)
            break;
        weft_yield();
    }
    CHECK_EQ(info.state, WEFT_STATE_PARKED);
    char *d = dump_text();
    const char *p = dump_thread(d, weft_thread_id(t));
    if (!p)
        fprintf(stderr, "thread %llu not in the dump:\n%s", (unsigned long long)weft_thread_id(t),
                d);
    CHECK(p != NULL);
    char line[256];
    dump_copy_line(p, line, sizeof line);
    CHECK(strstr(line, "\"borrowed\": parked") != NULL);
    CHECK(strstr(p, "no backtrace: it runs on a stack its creator gave") != NULL);
    free(d);
    CHECK_EQ(weft_sem_post(&gate), 0);
    CHECK_EQ(weft_join(t, NULL), 0);
    free(m);

    /* dumps while such threads come and go */
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    CHECK(devnull >= 0);
    weft_thread *c[2];
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_spawn(&c[i], churn, NULL, NULL), 0);
    for (int i = 0; i < 300; i++) {
        CHECK_EQ(weft_dump(devnull), 0);
        weft_yield();
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        CHECK_EQ(weft_join(c[i], NULL), 0);
    close(devnull);
    CHECK_EQ(weft_sem_destroy(&gate), 0);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
