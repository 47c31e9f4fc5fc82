/* tcb.c: glibc thread blocks for user threads, the check that glibc is
 * the one this was written against, and the library's load.
 *
 * A block comes from ld.so's _dl_allocate_tls (GLIBC_PRIVATE: glibc's
 * struct pthread with the static TLS of every module loaded at start
 * below it, the initial images copied, and a DTV for the modules opened
 * later), then gets the fields glibc's code reads through %fs on any
 * thread: tcb and self (the block), multiple_threads, stack_guard and
 * pointer_guard copied from the caller's block (every block must agree:
 * a frame may be entered under one block and left under another only in
 * the switch itself, and setjmp buffers are mangled with the pointer
 * guard), and the rseq area's cpu_id set to "not registered" so that
 * sched_getcpu asks the kernel instead of reading a CPU 0 nobody wrote.
 * Blocks are recycled as glibc recycles its stacks: the dynamic TLS the
 * DTV holds is freed and the DTV cleared, then _dl_allocate_tls_init
 * copies the initial images again.
 *
 * That path costs some 600 instructions and ld.so's TLS lock per
 * pthread_create; most programs never load a module with TLS after the
 * start, and for them the recycled block's DTV never changed (its entries
 * name the static blocks inside the block itself, nothing to free). So the
 * load takes a snapshot of the static TLS (tls_plan: each module's offset
 * below the thread pointer and its initial image, zeroed bss included),
 * and a recycled block only gets the snapshot copied back, as long as
 * ld.so's TLS generation is still the one of the snapshot. Any load or
 * unload of a TLS module bumps that generation (dlopen, and glibc's own
 * internal loads such as NSS modules), and from then on every block takes
 * glibc's path. The generation's address is read from __tls_get_addr's
 * own fast path, which compares it with the DTV's: if that code is not
 * the expected load, or anything else looks unlike what the snapshot
 * assumes, the snapshot is not used (tls_gen stays NULL).
 * Rejected: a module count from dl_iterate_phdr on each create (it takes
 * ld.so's lock, the cost this avoids); hooking dlopen (glibc's internal
 * loads bypass it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/base.h"
#include "posix/posix.h"
#include "sched/switch.h"

/* The caller's record (posix.h's weft__posix_deliver reads it inline). */
__thread struct pt *weft__posix_pt_tls __attribute__((tls_model("initial-exec")));
static ptrdiff_t pt_off; /* &weft__posix_pt_tls minus the thread pointer; immutable after load */

static void *(*dl_allocate_tls)(void *mem);
static void *(*dl_allocate_tls_init)(void *tcb, _Bool init_tls);
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* Free blocks: a list through their first TLS-free word (the tcb field,
 * rewritten on reuse), under free_lock. Each keeps the record (struct pt)
 * its last thread had, in its pt_tls, so that a create and a join share
 * one list with the blocks, not a list of records besides. */
static weft__lock free_lock;
static void *free_tcbs;
static size_t nfree;
/* And a short list per worker, in front of it, which only code running
 * on that worker touches (as its stack cache: weft__tls_worker is NULL in
 * a thread that runs without one), so that most creates and joins take no
 * lock at all. */
enum { WCACHE_WORKERS = 64, WCACHE_MAX = 32 };
static struct wcache {
    void *head;
    unsigned n;
} __attribute__((aligned(64))) wcache[WCACHE_WORKERS];

/* The caller's worker's list, NULL: none. */
static inline struct wcache *worker_cache(void)
{
    struct weft__worker *w = weft__tls_worker;
    return w && (unsigned)w->id < WCACHE_WORKERS ? &wcache[w->id] : NULL;
}
#define FREE_MAX 4096 /* blocks kept; more go back to glibc */
static void (*dl_deallocate_tls)(void *tcb, _Bool dealloc_tcb);

static inline void *thread_pointer(void)
{
    void *tp;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(tp) : : "memory"); /* changes with each switch */
    return tp;
}

static void refuse(const char *what)
{
    fprintf(stderr,
            "weft-pthread: %s; this drop-in depends on glibc 2.36's x86-64 internals "
            "(docs/posix.md). Run the program without it, or set WEFT_POSIX_GLIBC_ANY=1 "
            "to try anyway.\n",
            what);
    _exit(127);
}

void weft__posix_check_glibc(void)
{
    const char *v = gnu_get_libc_version();
    const char *any = getenv("WEFT_POSIX_GLIBC_ANY");
    if (strcmp(v, "2.36") != 0 && !(any && *any == '1')) {
        char msg[96];
        snprintf(msg, sizeof msg, "glibc %s is not 2.36", v);
        refuse(msg);
    }
    dl_allocate_tls = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls", "GLIBC_PRIVATE");
    dl_allocate_tls_init = dlvsym(RTLD_DEFAULT, "_dl_allocate_tls_init", "GLIBC_PRIVATE");
    dl_deallocate_tls = dlvsym(RTLD_DEFAULT, "_dl_deallocate_tls", "GLIBC_PRIVATE");
    if (!dl_allocate_tls || !dl_allocate_tls_init || !dl_deallocate_tls)
        refuse("ld.so exports no _dl_allocate_tls / _dl_allocate_tls_init / _dl_deallocate_tls");
    char *tp = thread_pointer();
    if (*(void **)(tp + TCB_SELF) != tp)
        refuse("the thread block's self field is not at %fs:0x10");
    if (*(uintptr_t *)(tp + TCB_STACK_GUARD) == 0)
        refuse("the stack guard at %fs:0x28 is zero");
    /* the initial thread is on glibc's list of user stacks: its list
     * field links back to itself through its neighbours */
    void **list = (void **)(tp + TCB_LIST);
    if (!list[0] || !list[1] || ((void **)list[0])[1] != list || ((void **)list[1])[0] != list)
        refuse("the thread block's stack-list field is not at 0x2c0");
    if (*(pid_t *)(tp + TCB_TID) != gettid())
        refuse("the thread block's tid is not at 0x2d0");
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8) {
        int32_t cpu = *(int32_t *)(tp + __rseq_offset + 4);
        if (cpu < -2 || cpu > 65535)
            refuse("the rseq area's cpu_id is not where __rseq_offset says");
    }
}

struct pt *weft__posix_pt_of(void *tcb)
{
    return tcb ? *(struct pt **)((char *)tcb + pt_off) : NULL;
}

void weft__posix_set_pt(void *tcb, struct pt *p)
{
    *(struct pt **)((char *)tcb + pt_off) = p;
}

/* The DTV's entries (glibc's dtv_t). */
union dtv {
    size_t counter;
    struct {
        void *val;
        void *to_free;
    } pointer;
};

/* The snapshot of the static TLS blocks (see the head): immutable once
 * the load has written it. A run is a range of the static TLS area, below
 * the thread pointer, that takes image's bytes: one module, or neighbours
 * with the padding between them (zeros, as glibc leaves it). */
enum { TLS_RUNS_MAX = 64 }; /* modules with TLS at the start; more: no snapshot */
static struct tls_run {
    ptrdiff_t off; /* the thread pointer minus the run's start */
    size_t size;
    const void *image;
} tls_runs[TLS_RUNS_MAX];
static int tls_nruns;
static const _Atomic size_t *tls_gen; /* ld.so's TLS generation; NULL: no snapshot */
static size_t tls_gen0;               /* its value when the snapshot was taken */

/* A module with static TLS, as the load finds it. */
struct tls_mod {
    ptrdiff_t off; /* the thread pointer minus its block's start */
    size_t memsz, filesz;
    const char *image;
};

struct tls_scan {
    char *tp;
    size_t static_size; /* the static TLS area (TCB included), from ld.so */
    int n, bad;
    struct tls_mod mods[TLS_RUNS_MAX];
};

static int scan_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct tls_scan *sc = arg;
    if (size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof info->dlpi_tls_data)
        return sc->bad = 1;
    if (info->dlpi_tls_modid == 0)
        return 0;
    const ElfW(Phdr) *ph = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            ph = &info->dlpi_phdr[i];
    char *data = info->dlpi_tls_data;
    /* a block outside the static area is dynamic TLS: no snapshot */
    if (!ph || !data || data >= sc->tp || (size_t)(sc->tp - data) > sc->static_size ||
        ph->p_memsz > (size_t)(sc->tp - data) || ph->p_filesz > ph->p_memsz ||
        sc->n == TLS_RUNS_MAX)
        return sc->bad = 1;
    sc->mods[sc->n++] = (struct tls_mod){ sc->tp - data, ph->p_memsz, ph->p_filesz,
                                          (const char *)info->dlpi_addr + ph->p_vaddr };
    return 0;
}

static int by_address(const void *a, const void *b)
{
    const struct tls_mod *x = a, *y = b; /* the larger offset is the lower address */
    return x->off < y->off ? 1 : x->off > y->off ? -1 : 0;
}

/* The address of ld.so's TLS generation, from the fast path of
 * __tls_get_addr (glibc 2.36, x86-64): mov %fs:8,%rdx (the DTV), then
 * mov generation(%rip),%rax. NULL if the code is not that, or the word is
 * not inside _rtld_global. */
static const _Atomic size_t *find_tls_gen(void)
{
    static const unsigned char head[] = { 0x64, 0x48, 0x8b, 0x14, 0x25, 0x08,
                                          0x00, 0x00, 0x00, 0x48, 0x8b, 0x05 };
    const unsigned char *f = dlsym(RTLD_DEFAULT, "__tls_get_addr");
    if (!f || memcmp(f, head, sizeof head) != 0)
        return NULL;
    int32_t rel;
    memcpy(&rel, f + sizeof head, sizeof rel);
    const char *gen = (const char *)f + sizeof head + sizeof rel + rel;
    Dl_info di;
    const ElfW(Sym) *sym = NULL;
    if (!dladdr1(gen, &di, (void **)&sym, RTLD_DL_SYMENT) || !di.dli_sname || !sym ||
        strcmp(di.dli_sname, "_rtld_global") != 0 ||
        (size_t)(gen - (const char *)di.dli_saddr) + sizeof(size_t) > sym->st_size)
        return NULL;
    return (const _Atomic size_t *)(const void *)gen;
}

/* Takes the snapshot of the static TLS (see the head) at the load, on the
 * initial thread, whose DTV must be up to date with ld.so's generation. */
static void tls_snapshot(void)
{
    void (*static_info)(size_t * size, size_t * align) =
        dlvsym(RTLD_DEFAULT, "_dl_get_tls_static_info", "GLIBC_PRIVATE");
    const _Atomic size_t *gen = find_tls_gen();
    if (!static_info || !gen)
        return;
    struct tls_scan *sc = calloc(1, sizeof *sc);
    if (!sc)
        return;
    sc->tp = thread_pointer();
    size_t align;
    static_info(&sc->static_size, &align);
    size_t gen0 = atomic_load_explicit(gen, memory_order_relaxed);
    const size_t *dtv = *(size_t **)(sc->tp + 8);
    if (dtv[0] != gen0 || dl_iterate_phdr(scan_module, sc) != 0 || sc->bad || sc->n == 0)
        goto out;
    /* Runs, lowest address first: neighbours merge across a gap of at
     * most 64 bytes of padding, unless the gap holds the rseq area (not
     * glibc 2.36's place for it). Positions are relative to the thread
     * pointer. */
    qsort(sc->mods, (size_t)sc->n, sizeof sc->mods[0], by_address);
    ptrdiff_t rseq_lo = 0, rseq_hi = 0;
    if (&__rseq_offset && &__rseq_size && __rseq_offset < 0)
        rseq_lo = __rseq_offset, rseq_hi = __rseq_offset + (ptrdiff_t)__rseq_size;
    struct tls_run runs[TLS_RUNS_MAX];
    int first[TLS_RUNS_MAX + 1]; /* runs[i] holds mods[first[i]] to mods[first[i + 1] - 1] */
    int n = 0;
    for (int i = 0; i < sc->n; i++) {
        const struct tls_mod *m = &sc->mods[i];
        if (n > 0) {
            struct tls_run *r = &runs[n - 1];
            ptrdiff_t gap_lo = -r->off + (ptrdiff_t)r->size, gap_hi = -m->off;
            if (gap_hi < gap_lo)
                goto out; /* overlapping blocks: not the layout assumed */
            if (gap_hi - gap_lo <= 64 && !(rseq_lo < gap_hi && rseq_hi > gap_lo)) {
                r->size = (size_t)(r->off - m->off) + m->memsz;
                continue;
            }
        }
        first[n] = i;
        runs[n++] = (struct tls_run){ m->off, m->memsz, NULL };
    }
    first[n] = sc->n;
    /* the images: each run's bytes as a fresh block has them */
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += runs[i].size;
    char *img = calloc(1, total);
    if (!img)
        goto out;
    for (int i = 0; i < n; i++) {
        runs[i].image = img;
        for (int j = first[i]; j < first[i + 1]; j++)
            memcpy(img + (runs[i].off - sc->mods[j].off), sc->mods[j].image, sc->mods[j].filesz);
        img += runs[i].size;
    }
    memcpy(tls_runs, runs, sizeof runs);
    tls_nruns = n;
    tls_gen0 = gen0;
    tls_gen = gen;
out:
    free(sc);
}

/* 1 if a recycled block's static TLS may be reset from the snapshot: no
 * TLS module came or went since it was taken. Relaxed: a load racing
 * with a dlopen is served as a thread made just before it, whose DTV
 * __tls_get_addr brings up to date on its first use of the new module. */
static inline int tls_snapshot_valid(void)
{
    return tls_gen && atomic_load_explicit(tls_gen, memory_order_relaxed) == tls_gen0;
}

static void clear_dtv(char *tcb)
{
    union dtv *dtv = *(union dtv **)(tcb + 8);
    size_t n = dtv[-1].counter;
    for (size_t i = 0; i < n; i++)
        if (dtv[1 + i].pointer.to_free)
            free(dtv[1 + i].pointer.to_free);
    memset(dtv, 0, (n + 1) * sizeof *dtv);
}

void *weft__posix_tcb_get(struct pt **rec)
{
    char *tcb = NULL;
    struct wcache *c = worker_cache();
    if (c && c->head) {
        tcb = c->head;
        c->head = *(void **)tcb;
        c->n--;
    } else {
        weft__lock_acquire(&free_lock);
        if (free_tcbs) {
            tcb = free_tcbs;
            free_tcbs = *(void **)tcb;
            nfree--;
        }
        weft__lock_release(&free_lock);
    }
    *rec = tcb ? weft__posix_pt_of(tcb) : NULL; /* before the TLS is reset */
    if (tcb && tls_snapshot_valid()) {
        for (int i = 0; i < tls_nruns; i++)
            memcpy(tcb - tls_runs[i].off, tls_runs[i].image, tls_runs[i].size);
    } else if (tcb) {
        clear_dtv(tcb);
        dl_allocate_tls_init(tcb, 1);
    } else {
        tcb = dl_allocate_tls(NULL);
        if (!tcb)
            return NULL;
    }
    char *me = thread_pointer();
    *(void **)(tcb + TCB_TCB) = tcb;
    *(void **)(tcb + TCB_SELF) = tcb;
    *(int *)(tcb + TCB_MULTIPLE) = 1;
    /* linked to itself: a fork in this thread takes it off a list
     * (glibc's __reclaim_stacks) before it adds it to one */
    void **list = (void **)(tcb + TCB_LIST);
    list[0] = list[1] = list;
    *(uintptr_t *)(tcb + TCB_STACK_GUARD) = *(uintptr_t *)(me + TCB_STACK_GUARD);
    *(uintptr_t *)(tcb + TCB_POINTER_GUARD) = *(uintptr_t *)(me + TCB_POINTER_GUARD);
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8)
        *(int32_t *)(tcb + __rseq_offset + 4) = -2; /* RSEQ_CPU_ID_REGISTRATION_FAILED */
    return tcb;
}

struct pt *weft__posix_tcb_put(void *tcb)
{
    struct wcache *c = worker_cache();
    if (c && c->n < WCACHE_MAX) {
        *(void **)tcb = c->head;
        c->head = tcb;
        c->n++;
        return NULL;
    }
    weft__lock_acquire(&free_lock);
    if (nfree < FREE_MAX) {
        *(void **)tcb = free_tcbs;
        free_tcbs = tcb;
        nfree++;
        tcb = NULL;
    }
    weft__lock_release(&free_lock);
    if (!tcb)
        return NULL;
    struct pt *p = weft__posix_pt_of(tcb);
    dl_deallocate_tls(tcb, 1);
    return p;
}

/* A kernel thread that was not made here ends: its record's keys. */
static pthread_key_t foreign_key;
extern __typeof__(pthread_key_create) weft__real_pthread_key_create;
extern __typeof__(pthread_setspecific) weft__real_pthread_setspecific;
/* thread.c's key destructors (weft__posix_thread_end), set at its start:
 * the thread blocks sit below the thread life cycle. */
void (*weft__posix_on_end)(struct pt *p);

static void foreign_end(void *arg)
{
    struct pt *p = arg;
    if (weft__posix_on_end)
        weft__posix_on_end(p);
    weft__posix_pt_tls = NULL;
    free(p);
}

struct pt *weft__posix_self(void)
{
    struct pt *p = weft__posix_pt_tls;
    if (WEFT_LIKELY(p))
        return p;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tcb = thread_pointer();
    p->state = PT_RUNNING;
    p->sched_policy = SCHED_OTHER;
    weft__posix_pt_tls = p;
    weft__real_pthread_setspecific(foreign_key, p);
    return p;
}

struct pt *weft__posix_self_if_any(void)
{
    return weft__posix_pt_tls;
}

__attribute__((constructor(101))) static void posix_load(void)
{
    weft__posix_real_init();
    weft__posix_check_glibc();
    pt_off = (char *)&weft__posix_pt_tls - (char *)thread_pointer();
    tls_snapshot();
    weft__fs_wrfsbase = (getauxval(AT_HWCAP2) & 2) != 0; /* HWCAP2_FSGSBASE */
    const char *fs = getenv("WEFT_POSIX_FSBASE");
    if (fs && strcmp(fs, "syscall") == 0)
        weft__fs_wrfsbase = 0;
    weft__real_pthread_key_create(&foreign_key, foreign_end);
}

/* weft__posix_deliver's call once a signal is pending for p, the caller's
 * record (signal.c runs it). */
struct weft__posix_sig_ops weft__posix_sig_ops;
_Atomic int weft__posix_sig_router_owed;

int weft__posix_deliver_pending(struct pt *p)
{
    return weft__posix_sig_ops.run_ready ? weft__posix_sig_ops.run_ready(p) : 0;
}
