/* tls_fresh: a thread made after others ended (whose thread blocks the
 * drop-in recycles) starts with fresh TLS: its __thread variables hold
 * their initial images, errno is 0, and a module loaded with dlopen gives
 * it fresh dynamic TLS. Checked before any dlopen and again after one;
 * the ended threads are joined, or detached once they have ended. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "pcheck.h"

static __thread int tl_data = 42;
static __thread long tl_bss;
static __thread char tl_buf[200];
static __thread const char *tl_ptr = "image";

/* libstdc++'s per-thread exception globals (its dynamic TLS once
 * dlopen'ed): two words, zero in a fresh thread. */
struct eh_globals {
    void *caught;
    unsigned int uncaught;
};
static struct eh_globals *(*get_eh)(void);
static atomic_int ended;

static void *child(void *arg)
{
    (void)arg;
    CHECK(tl_data == 42);
    CHECK(tl_bss == 0);
    CHECK(errno == 0);
    CHECK(tl_ptr && strcmp(tl_ptr, "image") == 0);
    for (size_t i = 0; i < sizeof tl_buf; i++)
        CHECK(tl_buf[i] == 0);
    tl_data = -1;
    tl_bss = -1;
    errno = EIO;
    tl_ptr = NULL;
    memset(tl_buf, 0x5a, sizeof tl_buf);
    if (get_eh) {
        struct eh_globals *g = get_eh();
        CHECK(g && !g->caught && g->uncaught == 0);
        g->uncaught = 7; /* read by nobody: the thread ends with no exception */
    }
    atomic_fetch_add(&ended, 1);
    return NULL;
}

static void rounds(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t[3];
        atomic_store(&ended, 0);
        for (int j = 0; j < 3; j++)
            CHECK(pthread_create(&t[j], NULL, child, NULL) == 0);
        if (i % 2) {
            /* detached as they end or just after */
            while (atomic_load(&ended) < 3)
                sched_yield();
            for (int j = 0; j < 3; j++)
                CHECK(pthread_detach(t[j]) == 0);
            continue;
        }
        for (int j = 0; j < 3; j++)
            CHECK(pthread_join(t[j], NULL) == 0);
    }
}

int main(void)
{
    tl_data = 7;
    rounds(50);
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    if (cxx)
        get_eh = (struct eh_globals * (*)(void)) dlsym(cxx, "__cxa_get_globals");
    rounds(50);
    CHECK(tl_data == 7);
    printf("ok%s\n", get_eh ? "" : " (no libstdc++: dynamic TLS not checked)");
    return 0;
}
