/* dump_test.h: helpers shared by the tests that read weft_dump's text:
 * reading a memory file back, dumping into one, finding a thread's line,
 * and thread bodies that wait in the ways a deadlock is made of. Include after testutil.h (which wants _GNU_SOURCE first). */
#ifndef WEFT_TEST_DUMP_TEST_H
#define WEFT_TEST_DUMP_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <weft.h>

#include "check.h"

/* The whole of the file fd, from offset 0, NUL-terminated; the caller
 * frees it. */
static inline char *dump_read(int fd)
{
    off_t len = lseek(fd, 0, SEEK_END);
    char *s = calloc(1, (size_t)len + 1);
    CHECK(s != NULL);
    CHECK_EQ(pread(fd, s, (size_t)len, 0), len);
    return s;
}

/* weft_dump into a fresh memory file, read back (the caller frees it). */
static inline char *dump_text(void)
{
    int fd = memfd_create("dump", 0);
    CHECK(fd >= 0);
    CHECK_EQ(weft_dump(fd), 0);
    CHECK(lseek(fd, 0, SEEK_END) > 0);
    char *s = dump_read(fd);
    close(fd);
    return s;
}

/* The start of the line "thread <id> ..." in dump d, or NULL. */
static inline const char *dump_thread(const char *d, uint64_t id)
{
    char key[64];
    snprintf(key, sizeof key, "\nthread %llu ", (unsigned long long)id);
    const char *p = strstr(d, key);
    return p ? p + 1 : NULL;
}

/* Copies the line that starts at p into line (cut to n - 1 characters). */
static inline void dump_copy_line(const char *p, char *line, size_t n)
{
    size_t k = strcspn(p, "\n");
    if (k >= n)
        k = n - 1;
    memcpy(line, p, k);
    line[k] = '\0';
}

/* ---- the waits of a deadlock --------------------------------------------- */

/* What dump_lock_meet_lock takes: two mutexes and where to meet between. */
typedef struct dump_locks {
    weft_mutex *first, *then;
    weft_barrier *bar;
} dump_locks;

/* A thread body (arg: a dump_locks): locks first, meets the others at bar
 * (so that every first lock is held), then locks then, which never
 * returns where that closes a cycle. */
static __attribute__((unused)) void *dump_lock_meet_lock(void *arg)
{
    const dump_locks *l = arg;
    CHECK_EQ(weft_mutex_lock(l->first), 0);
    weft_barrier_wait(l->bar);
    CHECK_EQ(weft_mutex_lock(l->then), 0);
    return arg;
}

/* What dump_wait_join takes: a semaphore posted once *target is set. */
typedef struct dump_join {
    weft_sem *go;
    weft_thread **target;
} dump_join;

/* A thread body (arg: a dump_join): waits for go, then joins *target. */
static __attribute__((unused)) void *dump_wait_join(void *arg)
{
    const dump_join *j = arg;
    CHECK_EQ(weft_sem_wait(j->go), 0);
    CHECK_EQ(weft_join(*j->target, NULL), 0);
    return arg;
}

#endif
