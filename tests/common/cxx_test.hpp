// cxx_test.hpp: what the weft.hpp tests (tests/cxx) share.
#ifndef WEFT_TEST_CXX_TEST_HPP
#define WEFT_TEST_CXX_TEST_HPP

#include <cstdlib>
#include <system_error>
#include <thread>

#include "check.h"
#include "weft.hpp"

// Joins a kernel thread from a user thread without holding the worker
// (weft.h: a plain pthread_join there can wait for the very work it holds).
static inline void join_kernel_thread(std::thread &t)
{
    CHECK_EQ(weft_blocking([](void *p) { static_cast<std::thread *>(p)->join(); }, &t), 0);
}

// The error code of the std::system_error that f throws (0: none); the
// category must be the generic one (SPEC: errno values).
template <class F> static inline int system_error_code(F &&f)
{
    try {
        f();
    } catch (const std::system_error &e) {
        CHECK(e.code().category() == std::generic_category());
        return e.code().value();
    }
    return 0;
}

// Runs body(policy) under a weft::runtime on 1 and 2 workers, work-first
// and help-first, with the environment's WEFT_WORKERS and
// WEFT_SPAWN_POLICY out of the way.
template <class F> static inline void for_each_runtime(F &&body)
{
    unsetenv("WEFT_WORKERS");
    unsetenv("WEFT_SPAWN_POLICY");
    for (int workers = 1; workers <= 2; workers++) {
        for (int policy : { WEFT_WORK_FIRST, WEFT_HELP_FIRST }) {
            weft_config cfg;
            weft_config_default(&cfg);
            cfg.workers = workers;
            cfg.spawn_policy = policy;
            weft::runtime rt(&cfg);
            body(policy);
        }
    }
}

#endif
