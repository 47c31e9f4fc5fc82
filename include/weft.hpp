// weft.hpp: the C++17 interface of weft (SPEC "C++ interface: weft.hpp"),
// header-only over the C API of weft.h.
//
//   weft::runtime rt;                                  // weft_init ... weft_finalize
//   auto h = weft::spawn([](int x) { return 2 * x; }, 21);
//   int v = h.join();                                  // 42, or rethrows what the thread threw
//   weft::group g;
//   g.run([&] { left(); });                            // members; g.wait() rethrows the first
//   g.run([&] { right(); });                           // exception since the last wait
//   g.wait();
//   weft::mutex m; weft::condition_variable cv;        // std::lock_guard, unique_lock, scoped_lock
//
// Errors of the C API become std::system_error with the errno value in
// std::generic_category(). A spawn that fails throws; it never drops the work.
//
// How a callable reaches its thread (no heap for a callable that fits the
// 4096 bytes weft_spawn_copy and weft_group_spawn copy to the child's stack):
//  - trivially copyable (lambdas that capture scalars, pointers, references):
//    its bytes are the copied argument, as a C caller's struct would be;
//  - any other that fits: the child move- or copy-constructs it in its own
//    copied space from the caller's object, while the caller waits on a
//    semaphore in its frame for the child's word that it has done so (work-first
//    children run at once, so the caller seldom parks); an exception thrown by
//    that construction is rethrown by the spawn;
//  - larger than the space (or over-aligned), or spawned from a weft task
//    (which cannot park): on the heap, freed by the child.
// The trivially copyable route costs what weft_group_spawn costs for the same
// bytes (bench/micro/cxx_spawn.cpp).
//
// Results: a void result, or one of at most pointer size that is trivially
// copyable (int, long, double, pointers, references), travels in the thread's
// void * result; any other is moved to the heap by the child and back out by
// join. An exception that leaves a thread is kept, under the thread's id, in
// a list that join reads (one relaxed load when the list is empty).
#ifndef WEFT_HPP
#define WEFT_HPP

#include "weft.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

namespace weft
{

namespace detail
{

[[noreturn]] inline void throw_error(int rc, const char *what)
{
    throw std::system_error(rc, std::generic_category(), what);
}

inline void check(int rc, const char *what)
{
    if (rc != 0)
        throw_error(rc, what);
}

// The space weft_spawn_copy and weft_group_spawn copy (weft.h): at most
// 4096 bytes, aligned as malloc's memory.
inline constexpr std::size_t copy_max = 4096;
inline constexpr std::size_t copy_align = alignof(std::max_align_t);

template <class T> using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

// Runs fn; an exception that leaves it goes to keep(std::exception_ptr).
// weft_exit's forced unwind passes through: a catch (...) must rethrow it,
// and like any foreign exception it has no exception_ptr (a catch of
// abi::__forced_unwind & would bind a reference to no object).
template <class Fn, class Keep> inline void run_catching(Fn &&fn, Keep &&keep)
{
    try {
        std::forward<Fn>(fn)();
    } catch (...) {
        std::exception_ptr e = std::current_exception();
        if (!e)
            throw;
        keep(std::move(e));
    }
}

// ---- a callable and its decay-copied arguments ------------------------------

template <std::size_t I, class T> struct leaf {
    template <class U> leaf(std::in_place_t, U &&u) : value(std::forward<U>(u))
    {
    }
    T value;
};
template <class Seq, class... T> struct pack_impl;
template <std::size_t... I, class... T>
struct pack_impl<std::index_sequence<I...>, T...> : leaf<I, T>... {
    template <class... U>
    explicit pack_impl(std::in_place_t, U &&...u) : leaf<I, T>(std::in_place, std::forward<U>(u))...
    {
    }
};

// f and its arguments, decay-copied; called once, with rvalues, as
// std::thread calls them. Trivially copyable when all of them are.
template <class F, class... A> struct call {
    using seq = std::index_sequence_for<A...>;
    F f;
    pack_impl<seq, A...> args;

    template <class G, class... B>
    explicit call(G &&g, B &&...b)
        : f(std::forward<G>(g)), args(std::in_place, std::forward<B>(b)...)
    {
    }
    decltype(auto) operator()()
    {
        return invoke(seq{});
    }

  private:
    template <std::size_t... I> decltype(auto) invoke(std::index_sequence<I...>)
    {
        return std::invoke(std::move(f), std::move(static_cast<leaf<I, A> &>(args).value)...);
    }
};

// ---- the in-place route: the child builds the callable from the caller's ----

// In the caller's frame while the child builds its callable. The semaphore
// is all-zero (value 0): initialised.
struct handshake {
    void *src;              // the caller's arguments, forwarded (a tuple of references)
    std::exception_ptr err; // what the construction threw
    // 0: building; 1: the caller parks on sem; 2: built (or failed)
    std::atomic<int> state{ 0 };
    weft_sem sem{};

    // The child: done building. Last touch of *this by the child.
    void done() noexcept
    {
        // acq_rel: release publishes err and the built object's state to the
        // caller (its acquire in wait); acquire pairs with the caller's CAS.
        if (state.exchange(2, std::memory_order_acq_rel) == 1)
            weft_sem_post(&sem);
    }
    // The caller: returns once the child has called done().
    void wait()
    {
        int s = 0;
        // acq_rel: acquire pairs with done()'s release when the child has
        // finished already (the CAS fails and loads 2).
        if (!state.compare_exchange_strong(s, 1, std::memory_order_acq_rel,
                                           std::memory_order_acquire))
            return;
        int rc;
        while ((rc = weft_sem_wait(&sem)) == EINTR)
            ;
        if (rc != 0)
            std::terminate(); // the child builds from the caller's frame: it cannot be left
        // weft_sem_post's hand-off orders done()'s exchange before this.
    }
    template <class C, class Src> C *build(void *space) noexcept
    {
        C *c = nullptr;
        try {
            c = std::
                apply([space](
                          auto &&...x) { return ::new (space) C(std::forward<decltype(x)>(x)...); },
                      std::move(*static_cast<Src *>(src)));
        } catch (...) {
            err = std::current_exception();
        }
        done();
        return c;
    }
};

// The bytes weft copies for the in-place route: where the child reads its
// handshake, and the space it builds the callable in.
template <class C, class Extra> struct built {
    handshake *hs;
    Extra extra;
    alignas(C) unsigned char space[sizeof(C)];
};
// The bytes for the trivially copyable route, and for the heap route (C a
// pointer).
template <class C, class Extra> struct copied {
    C c;
    Extra extra;
    template <class... B> explicit copied(Extra e, B &&...b) : c(std::forward<B>(b)...), extra(e)
    {
    }
};
struct none {
};

enum class route { copy, build, heap };
template <class C, class Extra> constexpr route route_of()
{
    if (std::is_trivially_copyable_v<C> && sizeof(copied<C, Extra>) <= copy_max &&
        alignof(C) <= copy_align)
        return route::copy;
    if (sizeof(built<C, Extra>) <= copy_max && alignof(C) <= copy_align)
        return route::build;
    return route::heap;
}

// A weft task (weft_self() NULL on a worker) cannot park: no in-place route.
inline bool in_task() noexcept
{
    return weft_self() == nullptr && weft_worker_id() >= 0;
}

// Spawns C, built from args, through spawn_fn(fn, bytes, size), where fn is
// Main<C, Extra, route>::entry (entry_built<Src> for the in-place route). Returns once the child holds its own callable;
// throws what its construction threw (after undo(), which must end the
// spawned thread's life: a join) or the spawn's error.
template <class C, class Extra, template <class, class, route> class Main, class SpawnFn,
          class Undo, class... B>
inline void spawn_callable(Extra extra, SpawnFn &&spawn_fn, Undo &&undo, B &&...args)
{
    constexpr route r = route_of<C, Extra>();
    if constexpr (r == route::copy) {
        copied<C, Extra> bytes(extra, std::forward<B>(args)...);
        spawn_fn(&Main<C, Extra, route::copy>::entry, &bytes, sizeof bytes);
        return;
    } else {
        if constexpr (r == route::build) {
            if (!in_task()) {
                auto src = std::forward_as_tuple(std::forward<B>(args)...);
                handshake hs;
                hs.src = &src;
                built<C, Extra> bytes; // space: filled by the child
                bytes.hs = &hs;
                bytes.extra = extra;
                spawn_fn(&Main<C, Extra, route::build>::template entry_built<decltype(src)>, &bytes,
                         sizeof bytes);
                hs.wait();
                if (hs.err) {
                    undo();
                    std::rethrow_exception(hs.err);
                }
                return;
            }
        }
        std::unique_ptr<C> own(new C(std::forward<B>(args)...));
        copied<C *, Extra> bytes(extra, own.get());
        spawn_fn(&Main<C, Extra, route::heap>::entry, &bytes, sizeof bytes);
        own.release(); // the child's now
    }
}

// Runs body(c) on the callable of a child's bytes p, then destroys it.
template <class C, class Extra, route R, class Src, class Body>
inline void *with_callable(void *p, Body &&body)
{
    if constexpr (R == route::copy) {
        auto *b = static_cast<copied<C, Extra> *>(p);
        return body(b->c, b->extra);
    } else if constexpr (R == route::heap) {
        auto *b = static_cast<copied<C *, Extra> *>(p);
        std::unique_ptr<C> own(b->c);
        return body(*own, b->extra);
    } else {
        auto *b = static_cast<built<C, Extra> *>(p);
        Extra extra = b->extra; // *b->hs is gone after build
        C *c = b->hs->template build<C, Src>(b->space);
        if (!c)
            return nullptr;
        struct destroy {
            C *c;
            ~destroy()
            {
                c->~C();
            }
        } d{ c };
        return body(*c, extra);
    }
}

// ---- results and exceptions of joinable threads -----------------------------

// A result that travels in the thread's void * result.
template <class R> constexpr bool packed()
{
    if constexpr (std::is_void_v<R> || std::is_reference_v<R>)
        return true;
    else
        return std::is_trivially_copyable_v<R> && sizeof(R) <= sizeof(void *) &&
               alignof(R) <= alignof(void *);
}
template <class R> inline constexpr bool packed_v = packed<R>();

template <class R> inline void *pack_result(R &&r)
{
    using T = std::remove_cv_t<std::remove_reference_t<R>>;
    void *v = nullptr;
    std::memcpy(&v, &r, sizeof(T));
    return v;
}

template <class R> inline R unpack_result(void *v)
{
    if constexpr (std::is_void_v<R>) {
        (void)v;
    } else if constexpr (std::is_reference_v<R>) {
        return static_cast<R>(*static_cast<std::remove_reference_t<R> *>(v));
    } else if constexpr (packed_v<R>) {
        union u {
            void *p;
            std::remove_cv_t<R> r;
        } x;
        x.p = nullptr;
        std::memcpy(&x.r, &v, sizeof(R));
        return x.r;
    } else {
        std::unique_ptr<R> box(static_cast<R *>(v));
        return std::move(*box);
    }
}

// Exceptions that left joinable threads, under the thread's id, until join
// takes them. Constant-initialised (no guard): the mutex is all-zero.
struct thrown_list {
    struct entry {
        std::uint64_t id;
        std::exception_ptr e;
        entry *next;
    };
    weft_mutex lock;
    entry *head;
    // The entries in the list; relaxed: a joiner reads it after weft_join,
    // which orders the child's put (before it ended) before the read.
    std::atomic<std::size_t> n;

    void put(std::uint64_t id, std::exception_ptr e) noexcept
    {
        entry *x = new (std::nothrow) entry{ id, std::move(e), nullptr };
        if (!x)
            std::terminate(); // no memory to carry the exception to the joiner
        weft_mutex_lock(&lock);
        x->next = head;
        head = x;
        n.fetch_add(1, std::memory_order_relaxed);
        weft_mutex_unlock(&lock);
    }
    std::exception_ptr take(std::uint64_t id) noexcept
    {
        if (n.load(std::memory_order_relaxed) == 0)
            return nullptr;
        std::exception_ptr e;
        weft_mutex_lock(&lock);
        for (entry **p = &head; *p; p = &(*p)->next) {
            if ((*p)->id == id) {
                entry *x = *p;
                *p = x->next;
                n.fetch_sub(1, std::memory_order_relaxed);
                e = std::move(x->e);
                delete x;
                break;
            }
        }
        weft_mutex_unlock(&lock);
        return e;
    }
};
inline thrown_list thrown{ WEFT_MUTEX_INIT, nullptr, { 0 } };

// The thread main of weft::spawn, for each route.
template <class R> struct thread_main {
    template <class C, class Extra, route Rt> struct of {
        static void *body(C &c, Extra)
        {
            void *res = nullptr;
            run_catching(
                [&] {
                    if constexpr (std::is_void_v<R>)
                        c();
                    else if constexpr (std::is_reference_v<R>)
                        res = const_cast<void *>(static_cast<const volatile void *>(&c()));
                    else if constexpr (packed_v<R>)
                        res = pack_result<R>(c());
                    else
                        res = new R(c());
                },
                [](std::exception_ptr e) {
                    thrown.put(weft_thread_id(weft_self()), std::move(e));
                });
            return res;
        }
        static void *entry(void *p)
        {
            return with_callable<C, Extra, Rt, void>(p, body);
        }
        template <class Src> static void *entry_built(void *p)
        {
            return with_callable<C, Extra, Rt, Src>(p, body);
        }
    };
};

} // namespace detail

// ---- runtime -----------------------------------------------------------------

// weft_init in the constructor, weft_finalize in the destructor (which waits
// for every user thread). Throws std::system_error with weft_init's error.
struct runtime {
    explicit runtime(const weft_config *cfg = nullptr)
    {
        detail::check(weft_init(cfg), "weft_init");
    }
    ~runtime()
    {
        weft_finalize();
    }
    runtime(const runtime &) = delete;
    runtime &operator=(const runtime &) = delete;
};

// ---- user threads --------------------------------------------------------------

template <class R> class handle;

namespace detail
{
template <class R> handle<R> make_handle(weft_thread *t) noexcept;
}

// A joinable user thread returning R (R may be void or a reference). The
// destructor joins a thread still joinable (std::jthread's rule; what it
// returned or threw is dropped); a handle never detaches.
template <class R> class handle
{
  public:
    handle() noexcept = default;
    handle(handle &&o) noexcept : t_(std::exchange(o.t_, nullptr))
    {
    }
    handle &operator=(handle &&o) noexcept
    {
        if (this != &o) {
            drop();
            t_ = std::exchange(o.t_, nullptr);
        }
        return *this;
    }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;
    ~handle()
    {
        drop();
    }

    // Waits for the thread (blocks the user thread, or the kernel thread);
    // returns its result, or rethrows what it threw. std::system_error:
    // EINVAL not joinable, EDEADLK the caller's own handle (it stays joinable).
    R join()
    {
        if (!t_)
            detail::throw_error(EINVAL, "weft::handle::join");
        std::uint64_t id = weft_thread_id(t_);
        void *res = nullptr;
        detail::check(weft_join(t_, &res), "weft_join");
        t_ = nullptr;
        if (std::exception_ptr e = detail::thrown.take(id)) {
            if constexpr (!std::is_void_v<R> && !detail::packed_v<R>)
                delete static_cast<R *>(res); // never set when the thread threw
            std::rethrow_exception(e);
        }
        return detail::unpack_result<R>(res);
    }
    bool joinable() const noexcept
    {
        return t_ != nullptr;
    }
    std::uint64_t id() const noexcept
    {
        return weft_thread_id(t_);
    } // 0 once joined
    weft_thread *native_handle() const noexcept
    {
        return t_;
    }

  private:
    friend handle detail::make_handle<R>(weft_thread *) noexcept;
    explicit handle(weft_thread *t) noexcept : t_(t)
    {
    }
    void drop() noexcept
    {
        if (!t_)
            return;
        try {
            join();
        } catch (...) {
        }
        t_ = nullptr;
    }
    weft_thread *t_ = nullptr;
};

namespace detail
{
template <class R> handle<R> make_handle(weft_thread *t) noexcept
{
    return handle<R>(t);
}

template <class F, class... A> auto spawn_with(const weft_attr *attr, F &&f, A &&...a)
{
    using C = call<std::decay_t<F>, std::decay_t<A>...>;
    static_assert(std::is_invocable_v<std::decay_t<F>, std::decay_t<A>...>,
                  "weft::spawn: f is not callable with rvalues of the arguments' decayed copies");
    using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<A>...>;
    if (attr && attr->detached)
        throw_error(EINVAL, "weft::spawn: a handle's thread is joinable (attr.detached)");
    weft_thread *t = nullptr;
    spawn_callable<C, none, thread_main<R>::template of>(
        none{},
        [&](weft_fn fn, const void *bytes, std::size_t size) {
            check(weft_spawn_copy(&t, fn, bytes, size, attr), "weft_spawn");
        },
        [&] { weft_join(t, nullptr); }, std::forward<F>(f), std::forward<A>(a)...);
    return make_handle<R>(t);
}
} // namespace detail

// Starts a user thread running f(args...) on decay-copies of f and the
// arguments (as std::thread does), with attr's fields (detached: EINVAL).
// Under the work-first policy the child runs at once. Throws
// std::system_error with weft_spawn's error, or what copying threw.
template <class F, class... A,
          class = std::enable_if_t<!std::is_same_v<detail::remove_cvref_t<F>, weft_attr>>>
auto spawn(F &&f, A &&...a)
{
    return detail::spawn_with(nullptr, std::forward<F>(f), std::forward<A>(a)...);
}
template <class F, class... A> auto spawn(const weft_attr &attr, F &&f, A &&...a)
{
    return detail::spawn_with(&attr, std::forward<F>(f), std::forward<A>(a)...);
}

// ---- group -----------------------------------------------------------------------

// weft_group with exceptions: wait() rethrows the first exception a member
// threw since the last wait (the others are dropped). The destructor waits
// (an exception kept then is dropped). Members may run into their own group;
// neither copyable nor movable (members point at it).
class group
{
  public:
    group() noexcept = default;
    group(const group &) = delete;
    group &operator=(const group &) = delete;
    ~group()
    {
        weft_group_wait(&g_);
        weft_group_destroy(&g_);
    }

    // Spawns f() (a decay-copy of f) into the group; its result is dropped.
    // Callable wherever weft_group_spawn is. Throws std::system_error with
    // weft_group_spawn's error (f then never runs), or what copying threw.
    template <class F> void run(F &&f)
    {
        using C = std::decay_t<F>;
        static_assert(std::is_invocable_v<C>, "weft::group::run: f() is not callable");
        detail::spawn_callable<C, group *, member>(
            this,
            [this](weft_fn fn, const void *bytes, std::size_t size) {
                detail::check(weft_group_spawn(&g_, fn, bytes, size, nullptr), "weft_group_spawn");
            },
            [] {}, std::forward<F>(f));
    }

    // Returns once every member spawned before or during the wait has
    // finished (blocks the user thread, or the kernel thread); then rethrows
    // the first exception kept since the last wait.
    void wait()
    {
        detail::check(weft_group_wait(&g_), "weft_group_wait");
        // relaxed: the wait orders the finished members' stores before this
        if (failed_.load(std::memory_order_relaxed)) {
            std::exception_ptr e;
            weft_spin_lock(&lock_);
            e = std::move(first_);
            first_ = nullptr;
            failed_.store(false, std::memory_order_relaxed);
            weft_spin_unlock(&lock_);
            if (e)
                std::rethrow_exception(e);
        }
    }

    weft_group *native_handle() noexcept
    {
        return &g_;
    }

  private:
    void keep(std::exception_ptr e) noexcept
    {
        weft_spin_lock(&lock_);
        if (!first_)
            first_ = std::move(e);
        failed_.store(true, std::memory_order_relaxed);
        weft_spin_unlock(&lock_);
    }

    template <class C, class Extra, detail::route Rt> struct member {
        static void *body(C &c, group *g)
        {
            detail::run_catching([&] { std::invoke(std::move(c)); },
                                 [g](std::exception_ptr e) { g->keep(std::move(e)); });
            return nullptr;
        }
        static void *entry(void *p)
        {
            return detail::with_callable<C, Extra, Rt, void>(p, body);
        }
        template <class Src> static void *entry_built(void *p)
        {
            return detail::with_callable<C, Extra, Rt, Src>(p, body);
        }
    };

    weft_group g_ = WEFT_GROUP_INIT;
    weft_spin lock_ = WEFT_SPIN_INIT;   // first_
    std::atomic<bool> failed_{ false }; // first_ may be set
    std::exception_ptr first_;          // under lock_
};

// ---- mutex and condition_variable --------------------------------------------

// weft_mutex, a Lockable: std::lock_guard, std::unique_lock, std::scoped_lock.
// lock blocks the user thread (or the kernel thread). std::system_error:
// lock EDEADLK (the caller holds it); unlock EPERM (it does not).
class mutex
{
  public:
    constexpr mutex() noexcept = default;
    mutex(const mutex &) = delete;
    mutex &operator=(const mutex &) = delete;
    ~mutex()
    {
        weft_mutex_destroy(&m_);
    }

    void lock()
    {
        detail::check(weft_mutex_lock(&m_), "weft_mutex_lock");
    }
    bool try_lock()
    {
        int rc = weft_mutex_trylock(&m_);
        if (rc == EBUSY)
            return false;
        detail::check(rc, "weft_mutex_trylock");
        return true;
    }
    void unlock()
    {
        detail::check(weft_mutex_unlock(&m_), "weft_mutex_unlock");
    }
    weft_mutex *native_handle() noexcept
    {
        return &m_;
    }

  private:
    weft_mutex m_ = WEFT_MUTEX_INIT;
};

// weft_cond over weft::mutex, with std::unique_lock<weft::mutex>. Waits
// block the user thread (or the kernel thread); timed waits measure against
// the clock given and return std::cv_status::timeout (or the predicate)
// once it has passed. Wake-ups may be spurious, as for std::condition_variable.
class condition_variable
{
  public:
    constexpr condition_variable() noexcept = default;
    condition_variable(const condition_variable &) = delete;
    condition_variable &operator=(const condition_variable &) = delete;
    ~condition_variable()
    {
        weft_cond_destroy(&c_);
    }

    void notify_one() noexcept
    {
        weft_cond_signal(&c_);
    }
    void notify_all() noexcept
    {
        weft_cond_broadcast(&c_);
    }

    void wait(std::unique_lock<mutex> &lk)
    {
        detail::check(weft_cond_wait(&c_, held(lk)), "weft_cond_wait");
    }
    template <class Pred> void wait(std::unique_lock<mutex> &lk, Pred pred)
    {
        while (!pred())
            wait(lk);
    }

    template <class Clock, class Dur>
    std::cv_status wait_until(std::unique_lock<mutex> &lk,
                              const std::chrono::time_point<Clock, Dur> &tp)
    {
        using namespace std::chrono;
        // weft_cond_timedwait reads CLOCK_REALTIME: another clock's time
        // point becomes the time left, then a system_clock deadline; the
        // answer is Clock's own.
        auto left = tp - Clock::now();
        if (left <= Dur::zero())
            return std::cv_status::timeout;
        timed(lk, system_clock::now(), left);
        return Clock::now() < tp ? std::cv_status::no_timeout : std::cv_status::timeout;
    }
    template <class Clock, class Dur, class Pred>
    bool wait_until(std::unique_lock<mutex> &lk, const std::chrono::time_point<Clock, Dur> &tp,
                    Pred pred)
    {
        while (!pred())
            if (wait_until(lk, tp) == std::cv_status::timeout)
                return pred();
        return true;
    }
    template <class Rep, class Period>
    std::cv_status wait_for(std::unique_lock<mutex> &lk,
                            const std::chrono::duration<Rep, Period> &d)
    {
        return wait_until(lk, std::chrono::steady_clock::now() + clamp(d));
    }
    template <class Rep, class Period, class Pred>
    bool wait_for(std::unique_lock<mutex> &lk, const std::chrono::duration<Rep, Period> &d,
                  Pred pred)
    {
        return wait_until(lk, std::chrono::steady_clock::now() + clamp(d), std::move(pred));
    }

    weft_cond *native_handle() noexcept
    {
        return &c_;
    }

  private:
    static weft_mutex *held(std::unique_lock<mutex> &lk)
    {
        if (!lk.owns_lock())
            detail::throw_error(EPERM, "weft::condition_variable: the lock is not held");
        return lk.mutex()->native_handle();
    }
    // A wait of d at most, at least long enough for ten years: longer
    // waits are cut there (and seen as spurious by the loops above).
    template <class Rep, class Period>
    static std::chrono::nanoseconds clamp(const std::chrono::duration<Rep, Period> &d)
    {
        using namespace std::chrono;
        constexpr duration<double, std::nano> most = hours(24 * 365 * 10);
        if (d <= d.zero())
            return nanoseconds::zero();
        if (duration<double, std::nano>(d) >= most)
            return duration_cast<nanoseconds>(most);
        return ceil<nanoseconds>(d);
    }
    template <class Dur>
    void timed(std::unique_lock<mutex> &lk, std::chrono::system_clock::time_point now, Dur left)
    {
        using namespace std::chrono;
        auto ns = duration_cast<nanoseconds>(now.time_since_epoch()) + clamp(left);
        struct timespec abs;
        abs.tv_sec = static_cast<time_t>(ns.count() / 1000000000);
        abs.tv_nsec = static_cast<long>(ns.count() % 1000000000);
        int rc = weft_cond_timedwait(&c_, held(lk), &abs);
        if (rc != 0 && rc != ETIMEDOUT)
            detail::throw_error(rc, "weft_cond_timedwait");
    }

    weft_cond c_ = WEFT_COND_INIT;
};

// weft_yield: every other ready thread of this worker runs before the
// caller runs again; from a plain kernel thread, sched_yield().
inline void yield() noexcept
{
    weft_yield();
}

} // namespace weft

#endif // WEFT_HPP
