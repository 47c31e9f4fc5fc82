/* pcheck.h: CHECK for the plain POSIX tests (no weft header). */
#ifndef PCHECK_H
#define PCHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#endif
