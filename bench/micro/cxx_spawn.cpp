/* cxx_spawn.cpp: what weft.hpp's spawns cost over the C calls they wrap, for the same capture size.
 *
 * Each implementation spawns -n members (or threads) in a loop from the
 * initial thread, each a leaf that adds the first word of its captured
 * bytes to a global, then waits for them. Each spawn's -k bytes are built
 * afresh (make), as a C caller fills its argument struct and a C++ caller
 * captures its values:
 *   c          weft_group_spawn of the struct (copied to the child)
 *   cxx        weft::group::run of a lambda capturing the struct by value
 *   c-join     weft_spawn_copy of the struct, then weft_join, one at a time
 *   cxx-join   weft::spawn of the lambda, then handle::join, one at a time
 * Under the work-first policy each spawn runs its child at once, so a spawn
 * is: copy, switch to the child, run, exit, resume the spawner.
 *
 *   bench_cxx_spawn [-n COUNT] [-k BYTES,...] [-r REPS] [-w LIST] [-p POLICY] [-i IMPL]
 * -k: capture sizes, 16, 64, 256 or 1024 bytes (default 16). Instructions per spawn:
 *   bench/scripts/instr.py --n1 2000 --n2 4000 -- \
 *       build/bench/bench_cxx_spawn -i cxx -k 16 -w 1 -n {n} --callgrind
 * against the same with -i c (README: the ratio must stay <= 1.1).
 */
#include "bench.h"
#include "bench_weft.h"

#include "weft.h"
#include "weft.hpp"

static long sink;

template <size_t BYTES> struct capture {
    long v[BYTES / sizeof(long)];
};

/* Spawn i's bytes: every word written, as a caller fills them. */
template <size_t BYTES> static inline capture<BYTES> make(long i)
{
    capture<BYTES> c;
    for (size_t j = 0; j < BYTES / sizeof(long); j++)
        c.v[j] = i + (long)j;
    return c;
}

template <size_t BYTES> static void *c_member(void *arg)
{
    sink += static_cast<const capture<BYTES> *>(arg)->v[0];
    return nullptr;
}

template <size_t BYTES> static BENCH_NOINLINE void loop_c(long count)
{
    weft_group g = WEFT_GROUP_INIT;
    for (long i = 0; i < count; i++) {
        capture<BYTES> c = make<BYTES>(i);
        int rc = weft_group_spawn(&g, c_member<BYTES>, &c, sizeof c, nullptr);
        if (rc != 0)
            bench_die("weft_group_spawn", rc);
    }
    int rc = weft_group_wait(&g);
    if (rc != 0)
        bench_die("weft_group_wait", rc);
}

template <size_t BYTES> static BENCH_NOINLINE void loop_cxx(long count)
{
    weft::group g;
    for (long i = 0; i < count; i++)
        g.run([c = make<BYTES>(i)] { sink += c.v[0]; });
    g.wait();
}

template <size_t BYTES> static BENCH_NOINLINE void loop_c_join(long count)
{
    for (long i = 0; i < count; i++) {
        capture<BYTES> c = make<BYTES>(i);
        weft_thread *t;
        int rc = weft_spawn_copy(&t, c_member<BYTES>, &c, sizeof c, nullptr);
        if (rc == 0)
            rc = weft_join(t, nullptr);
        if (rc != 0)
            bench_die("weft_spawn_copy/weft_join", rc);
    }
}

template <size_t BYTES> static BENCH_NOINLINE void loop_cxx_join(long count)
{
    for (long i = 0; i < count; i++)
        weft::spawn([c = make<BYTES>(i)] { sink += c.v[0]; }).join();
}

typedef void (*loop_fn)(long);

template <size_t BYTES> static loop_fn pick(const char *impl)
{
    if (strcmp(impl, "c") == 0)
        return loop_c<BYTES>;
    if (strcmp(impl, "cxx") == 0)
        return loop_cxx<BYTES>;
    if (strcmp(impl, "c-join") == 0)
        return loop_c_join<BYTES>;
    return loop_cxx_join<BYTES>;
}

static loop_fn pick_size(const char *impl, long bytes)
{
    switch (bytes) {
    case 16: return pick<16>(impl);
    case 64: return pick<64>(impl);
    case 256: return pick<256>(impl);
    case 1024: return pick<1024>(impl);
    default: fprintf(stderr, "cxx_spawn: -k takes 16, 64, 256 or 1024\n"); exit(2);
    }
}

int main(int argc, char **argv)
{
    bench_opts o;
    bench_parse(argc, argv, &o,
                "  -n spawns per run (default 100000); -k capture bytes: 16,64,256,1024\n"
                "  -i c|cxx|c-join|cxx-join|all\n");
    long count = bench_size(&o, 100000);
    if (!o.threads_given) {
        o.threads.v[0] = 16;
        o.threads.len = 1;
    }
    int policy = strcmp(o.policy, "help-first") == 0 ? WEFT_HELP_FIRST : WEFT_WORK_FIRST;
    static const char *const impls[] = { "c", "cxx", "c-join", "cxx-join" };
    for (int wi = 0; wi < o.workers.len; wi++) {
        bench_weft_init(o.workers.v[wi], policy);
        for (int ki = 0; ki < o.threads.len; ki++) {
            char param[32];
            snprintf(param, sizeof param, "%ldB", o.threads.v[ki]);
            for (const char *impl : impls) {
                if (!bench_wants(&o, impl))
                    continue;
                loop_fn fn = pick_size(impl, o.threads.v[ki]);
                fn(count < 1000 ? count : 1000); /* warm-up: stacks cached */
                double samples[BENCH_MAX_RUNS];
                for (int r = 0; r < o.reps; r++) {
                    uint64_t t0 = bench_now_ns();
                    fn(count);
                    samples[r] = (double)(bench_now_ns() - t0) / (double)count;
                }
                bench_report(&o, "cxx_spawn", impl, o.workers.v[wi], param, samples, o.reps,
                             "ns/op");
            }
        }
        int rc = weft_finalize();
        if (rc != 0)
            bench_die("weft_finalize", rc);
    }
    BENCH_SINK(sink);
    return 0;
}
