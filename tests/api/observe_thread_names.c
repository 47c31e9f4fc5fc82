/* Tests that the runtime's kernel threads carry names of their own (what
 * top -H, gdb's "info threads" and /proc/PID/task/TID/comm show): the
 * workers' kernel threads "weft-worker", the monitor "weft-monitor", the
 * timer service "weft-timer"; none is named after the thread that created
 * it, and the program's own thread keeps its name. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <weft.h>

#include "check.h"
#include "testutil.h"

#define MAIN_NAME "names-main"

/* How many of this process's kernel threads are named `name`. */
static int count_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[288], comm[32] = { 0 };
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        if (fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = '\0';
            n += strcmp(comm, name) == 0;
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(void)
{
    test_clear_env();
    /* A thread of the program's own first: ThreadSanitizer starts its
     * background thread with the process's first pthread_create, named
     * after the thread that called it. */
    pthread_t pt;
    CHECK_EQ(pthread_create(&pt, NULL, nothing, NULL), 0);
    CHECK_EQ(pthread_join(pt, NULL), 0);
    CHECK_EQ(pthread_setname_np(pthread_self(), MAIN_NAME), 0);
    weft_config cfg;
    weft_config_default(&cfg);
    cfg.workers = 3;
    CHECK_EQ(weft_init(&cfg), 0);
    /* the timer service starts with the first timed wait on a condition */
    weft_mutex m = WEFT_MUTEX_INIT;
    weft_cond c = WEFT_COND_INIT;
    struct timespec until;
    CHECK_EQ(clock_gettime(CLOCK_REALTIME, &until), 0);
    until.tv_nsec += 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    CHECK_EQ(weft_mutex_lock(&m), 0);
    CHECK_EQ(weft_cond_timedwait(&c, &m, &until), ETIMEDOUT);
    CHECK_EQ(weft_mutex_unlock(&m), 0);
    /* worker 0 runs on the program's thread; the others on machines */
    CHECK(count_named("weft-worker") >= 2);
    CHECK_EQ(count_named("weft-monitor"), 1);
    CHECK_EQ(count_named("weft-timer"), 1);
    CHECK_EQ(count_named(MAIN_NAME), 1);
    CHECK_EQ(weft_finalize(), 0);
    return 0;
}
