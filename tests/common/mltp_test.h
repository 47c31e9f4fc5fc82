/* mltp_test.h: what the tests of the seed API (mltp.h) share: a body that
 * does nothing for each way of creating a thread. */
#ifndef WEFT_TEST_MLTP_TEST_H
#define WEFT_TEST_MLTP_TEST_H

#include <mltp.h>

/* for mltp_create */
static inline void mt_nothing(void *arg)
{
    (void)arg;
}

/* for mltp_vcreate */
static inline void mt_vnothing(int nargs, void **args)
{
    (void)nargs;
    (void)args;
}

/* for mltp_create_bound: returns its argument */
static inline void *mt_bnothing(void *arg)
{
    return arg;
}

#endif
