/* fork_child: a process with threads forks, from the initial thread and
 * from another thread; in the child the caller is the only thread, its
 * locks and keys work and it can make and join new threads; atfork
 * handlers run in POSIX's order (prepare in reverse, parent and child in
 * registration order); system and popen work from a thread; the child's
 * threads (glibc's) are cancelled with their cleanup handlers. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcheck.h"

static char order[16];
static int norder;
/* An atfork handler that records its letter in order. */
#define HANDLER(name, letter)                                                                      \
    static void name(void)                                                                         \
    {                                                                                              \
        order[norder++] = letter;                                                                  \
    }
HANDLER(prep1, 'a')
HANDLER(prep2, 'b')
HANDLER(par1, 'c')
HANDLER(par2, 'd')
HANDLER(chi1, 'e')
HANDLER(chi2, 'f')

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static __thread int tl;

static void *child_thread(void *arg)
{
    pthread_mutex_lock(&m);
    tl = (int)(intptr_t)arg;
    pthread_mutex_unlock(&m);
    return (void *)(intptr_t)(tl * 2);
}

static _Atomic int cleaned;
static void cleanup(void *arg)
{
    (void)arg;
    cleaned = 1;
}

/* In the child, a glibc thread: cancelled in pause(), its C cleanup
 * handler runs (glibc's cancellation, with the buffer glibc holds). */
static void *pauser(void *arg)
{
    (void)arg;
    pthread_cleanup_push(cleanup, NULL);
    for (;;)
        pause();
    pthread_cleanup_pop(0);
    return NULL;
}

/* In the child: make threads, join them, exit 0 if all is well. */
static void in_child(void)
{
    CHECK(strcmp(order, "baef") == 0);
    pt_run4(child_thread, 2);
    pthread_t p;
    void *r;
    CHECK(pthread_create(&p, NULL, pauser, NULL) == 0);
    usleep(10000);
    CHECK(pthread_cancel(p) == 0);
    CHECK(pthread_join(p, &r) == 0);
    CHECK(r == PTHREAD_CANCELED && cleaned);
    _exit(0);
}

static void fork_and_check(void)
{
    norder = 0;
    memset(order, 0, sizeof order);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        in_child();
    CHECK(strcmp(order, "bacd") == 0);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void *forker(void *arg)
{
    (void)arg;
    tl = 5;
    fork_and_check();
    CHECK(tl == 5);
    return NULL;
}

/* system and popen from a thread (posix_spawn underneath) */
static void *spawner(void *arg)
{
    (void)arg;
    CHECK(system("exit 3") != -1);
    FILE *f = popen("echo hello", "r");
    CHECK(f != NULL);
    char buf[16] = { 0 };
    CHECK(fgets(buf, sizeof buf, f) != NULL);
    CHECK(strcmp(buf, "hello\n") == 0);
    CHECK(pclose(f) == 0);
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    usleep(100000);
    return NULL;
}

int main(void)
{
#ifdef __SANITIZE_THREAD__
    return 77; /* TSan refuses new threads in a child of a threaded process */
#endif
    CHECK(pthread_atfork(prep1, par1, chi1) == 0);
    CHECK(pthread_atfork(prep2, par2, chi2) == 0);
    pthread_t s, f;
    CHECK(pthread_create(&s, NULL, sleeper, NULL) == 0);
    fork_and_check();
    CHECK(pthread_create(&f, NULL, forker, NULL) == 0);
    CHECK(pthread_join(f, NULL) == 0);
    CHECK(pthread_join(s, NULL) == 0);
    CHECK(pthread_create(&f, NULL, spawner, NULL) == 0);
    CHECK(pthread_join(f, NULL) == 0);
    printf("ok\n");
    return 0;
}
