/* ctype_thread: <ctype.h> works in every thread (glibc keeps its ctype
 * tables' pointers in TLS, set when a thread starts: a user thread's block
 * needs them too, or tolower() reads through NULL; civetweb crashed so). */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <pthread.h>
#include <strings.h>

#include "pcheck.h"

static void *run(void *arg)
{
    (void)arg;
    CHECK(*__ctype_b_loc() != NULL);
    CHECK(*__ctype_tolower_loc() != NULL && *__ctype_toupper_loc() != NULL);
    CHECK(toupper('a') == 'A' && tolower('Q') == 'q');
    CHECK(isalpha('x') && !isdigit('x') && isspace(' '));
    CHECK(strcasecmp("Keep-Alive", "keep-alive") == 0);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 64; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, run, NULL) == 0);
        CHECK(pthread_join(t, NULL) == 0);
    }
    return 0;
}
