/* unwind.c: backtraces of parked threads from their saved contexts, and
 * the names of code addresses, for weft_dump.
 *
 * The library is built without frame pointers (they would cost the switch
 * and spawn paths instructions), so a parked thread's stack is walked by
 * its call-frame information: libdw's unwinder, started from the registers
 * the context switch saved (arch/x86_64-sysv/context.S) and reading memory
 * through a callback that refuses anything outside the thread's own stack.
 * Symbols come from the ELF symbol tables (static functions included) and
 * file:line from DWARF where the code has it; a small cache keeps the
 * names, since thousands of parked threads share a handful of addresses.
 * Without libdw: the resume address, then a frame-pointer walk while it
 * stays inside the stack, named by dladdr.
 */
#include "base/base.h"
#include "observe/observe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if WEFT__HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#endif

/* The saved context (context.S): sp[0..5] = r15 r14 r13 r12 rbx rbp,
 * sp[6] = resume address; the stack pointer after the resume is sp + 7. */
enum { CTX_R15, CTX_R14, CTX_R13, CTX_R12, CTX_RBX, CTX_RBP, CTX_RIP, CTX_WORDS };

#define SYM_CACHE 4096u /* names kept per dump; a power of two */
#define SYM_BYTES 160u

struct sym {
    uintptr_t pc; /* 0: empty */
    int inner;
    char text[SYM_BYTES];
};

#if WEFT__HAVE_LIBDW
/* How to find a caller's registers from a frame at one pc, when the CFI
 * says it simply (CFA = rsp or rbp + offset, registers saved at CFA +
 * offset): read once per pc from libdw, then applied by arithmetic. */
enum { R_RBX, R_RBP, R_R12, R_R13, R_R14, R_R15, R_RA, R_KEPT };
enum { LOC_SAME, LOC_CFA, LOC_UNDEF };
enum { RULE_EMPTY, RULE_SIMPLE, RULE_END, RULE_COMPLEX };
#define RULE_CACHE 1024u /* a power of two */

struct rule {
    uintptr_t pc;
    uint8_t kind;    /* RULE_*; END: no CFI or no return address (outermost) */
    uint8_t cfa_rbp; /* 1: CFA = rbp + cfa_off, else rsp + cfa_off */
    uint8_t loc[R_KEPT];
    int32_t cfa_off;
    int32_t off[R_KEPT];
};
#endif

struct weft__unwinder {
    uint64_t regs[CTX_WORDS + 1]; /* the context being unwound; [CTX_WORDS] = rsp */
    char *lo, *hi;                /* its stack */
    uintptr_t *pcs;
    int n, max;
    struct sym *syms;
#if WEFT__HAVE_LIBDW
    Dwfl *dwfl;
    int attached;
    struct rule *rules; /* RULE_CACHE, by pc */
#endif
};

const int weft__unwind_dwarf = WEFT__HAVE_LIBDW;

/* Reads one word of the stack being unwound. Not instrumented: the stack
 * belongs to a parked thread that may resume meanwhile (a stale word gives
 * a wrong frame, bounded by lo/hi, never a fault). */
__attribute__((no_sanitize("address", "thread"))) static int
read_word(const struct weft__unwinder *u, uintptr_t addr, uint64_t *out)
{
    if (addr < (uintptr_t)u->lo || (uintptr_t)u->hi - (uintptr_t)u->lo < sizeof *out ||
        addr > (uintptr_t)u->hi - sizeof *out || (addr & 7))
        return 0;
    *out = __atomic_load_n((uint64_t *)addr, __ATOMIC_RELAXED);
    return 1;
}

static int load_context(struct weft__unwinder *u, void *sp, char *lo, char *hi)
{
    u->lo = lo;
    u->hi = hi;
    for (int i = 0; i < CTX_WORDS; i++)
        if (!read_word(u, (uintptr_t)sp + 8u * (unsigned)i, &u->regs[i]))
            return 0;
    u->regs[CTX_WORDS] = (uintptr_t)sp + 8u * CTX_WORDS;
    return 1;
}

#if WEFT__HAVE_LIBDW

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    (void)dwfl;
    (void)arg;
    (void)thread_argp;
    return 0; /* no enumeration: frames are asked for by get_thread */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    (void)tid;
    *thread_argp = arg;
    return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl;
    uint64_t v;
    if (!read_word(arg, (uintptr_t)addr, &v))
        return false;
    *result = v;
    return true;
}

/* DWARF numbers of the x86-64 registers the context keeps. */
enum { DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12 };

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    struct weft__unwinder *u = arg;
    Dwarf_Word rbx = u->regs[CTX_RBX];
    Dwarf_Word bp_sp[2] = { u->regs[CTX_RBP], u->regs[CTX_WORDS] };
    Dwarf_Word r12_15[4] = { u->regs[CTX_R12], u->regs[CTX_R13], u->regs[CTX_R14],
                             u->regs[CTX_R15] };
    if (!dwfl_thread_state_registers(thread, DW_RBX, 1, &rbx) ||
        !dwfl_thread_state_registers(thread, DW_RBP, 2, bp_sp) ||
        !dwfl_thread_state_registers(thread, DW_R12, 4, r12_15))
        return false;
    dwfl_thread_state_register_pc(thread, u->regs[CTX_RIP]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* Debug information is read from the loaded files themselves, never from
 * separate debug files (/usr/lib/debug): loading the C library's costs
 * tens of milliseconds per dump, for file:line of frames nobody debugs. */
static int no_separate_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                 Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                                 GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod;
    (void)userdata;
    (void)modname;
    (void)base;
    (void)file_name;
    (void)debuglink_file;
    (void)debuglink_crc;
    (void)debuginfo_file_name;
    return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_separate_debuginfo,
};

static int on_frame(Dwfl_Frame *frame, void *arg)
{
    struct weft__unwinder *u = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0)
        return DWARF_CB_ABORT;
    u->pcs[u->n++] = (uintptr_t)pc;
    return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int dwfl_open(struct weft__unwinder *u)
{
    u->dwfl = dwfl_begin(&proc_callbacks);
    if (!u->dwfl)
        return 0;
    dwfl_report_begin(u->dwfl);
    int rc = dwfl_linux_proc_report(u->dwfl, getpid());
    dwfl_report_end(u->dwfl, NULL, NULL);
    if (rc != 0)
        return 0;
    u->attached = dwfl_attach_state(u->dwfl, NULL, getpid(), &thread_callbacks, u);
    return 1;
}

/* DWARF numbers of the registers a rule keeps, in R_* order. */
static const int
    rule_regno[R_KEPT] = { DW_RBX,     DW_RBP,     DW_R12, DW_R12 + 1,
                           DW_R12 + 2, DW_R12 + 3, -1 /* the return address column */ };

/* A register's rule in fr as LOC_* and an offset from the CFA; 0 if it is
 * anything but same value, undefined or saved at CFA + offset. */
static int simple_register(Dwarf_Frame *fr, int regno, uint8_t *loc, int32_t *off)
{
    Dwarf_Op mem[3], *ops;
    size_t n;
    if (dwarf_frame_register(fr, regno, mem, &ops, &n) != 0)
        return 0;
    *off = 0;
    if (n == 0) {
        *loc = ops ? LOC_UNDEF : LOC_SAME;
        return 1;
    }
    if (ops[0].atom != DW_OP_call_frame_cfa)
        return 0;
    *loc = LOC_CFA;
    if (n == 1)
        return 1;
    if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
        *off = (int32_t)ops[1].number;
        return 1;
    }
    if (n == 3 && (ops[1].atom == DW_OP_consts || ops[1].atom == DW_OP_constu) &&
        ops[2].atom == DW_OP_plus) {
        *off = (int32_t)(int64_t)ops[1].number;
        return 1;
    }
    return 0;
}

static void rule_compute(struct weft__unwinder *u, uintptr_t pc, struct rule *r)
{
    r->pc = pc;
    r->kind = RULE_END;
    uintptr_t at = pc - 1; /* a return address: the call is before it */
    Dwfl_Module *m = dwfl_addrmodule(u->dwfl, at);
    Dwarf_Addr bias = 0;
    Dwarf_CFI *cfi = m ? dwfl_module_eh_cfi(m, &bias) : NULL;
    if (!cfi && m)
        cfi = dwfl_module_dwarf_cfi(m, &bias);
    Dwarf_Frame *fr = NULL;
    if (!cfi || dwarf_cfi_addrframe(cfi, at - bias, &fr) != 0)
        return; /* no CFI: the walk ends here */
    r->kind = RULE_COMPLEX;
    Dwarf_Op *ops;
    size_t n;
    int ra = dwarf_frame_info(fr, NULL, NULL, NULL);
    if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_bregx &&
        (ops[0].number == DW_RSP || ops[0].number == DW_RBP)) {
        r->cfa_rbp = ops[0].number == DW_RBP;
        r->cfa_off = (int32_t)(int64_t)ops[0].number2;
        int ok = ra >= 0;
        for (int i = 0; ok && i < R_KEPT; i++)
            ok = simple_register(fr, i == R_RA ? ra : rule_regno[i], &r->loc[i], &r->off[i]);
        if (ok)
            r->kind = r->loc[R_RA] == LOC_CFA ? RULE_SIMPLE : RULE_END;
    }
    free(fr);
}

static const struct rule *rule_for(struct weft__unwinder *u, uintptr_t pc)
{
    size_t h = (size_t)((pc * WEFT_GOLDEN64) >> 40) & (RULE_CACHE - 1);
    for (size_t i = 0; i < RULE_CACHE; i++) {
        struct rule *r = &u->rules[(h + i) & (RULE_CACHE - 1)];
        if (r->kind != RULE_EMPTY && r->pc == pc)
            return r;
        if (r->kind == RULE_EMPTY) {
            rule_compute(u, pc, r);
            return r;
        }
    }
    return NULL; /* full: libdw's own walk */
}

/* The walk by cached rules; 0 when a frame's rule is not simple (then
 * libdw's general unwinder walks the whole stack). */
static int walk_rules(struct weft__unwinder *u)
{
    uint64_t v[R_KEPT] = { u->regs[CTX_RBX],
                           u->regs[CTX_RBP],
                           u->regs[CTX_R12],
                           u->regs[CTX_R13],
                           u->regs[CTX_R14],
                           u->regs[CTX_R15],
                           0 };
    uint64_t rsp = u->regs[CTX_WORDS], pc = u->regs[CTX_RIP];
    u->n = 0;
    while (pc && u->n < u->max) {
        u->pcs[u->n++] = (uintptr_t)pc;
        const struct rule *r = rule_for(u, (uintptr_t)pc);
        if (!r || r->kind == RULE_COMPLEX)
            return 0;
        if (r->kind == RULE_END)
            break;
        uint64_t cfa = (r->cfa_rbp ? v[R_RBP] : rsp) + (uint64_t)(int64_t)r->cfa_off;
        uint64_t next[R_KEPT];
        for (int i = 0; i < R_KEPT; i++) {
            next[i] = v[i];
            if (r->loc[i] == LOC_CFA &&
                !read_word(u, (uintptr_t)(cfa + (uint64_t)(int64_t)r->off[i]), &next[i]))
                return u->n > 1; /* a stale stack: keep what was found */
            if (r->loc[i] == LOC_UNDEF)
                next[i] = 0;
        }
        for (int i = 0; i < R_KEPT; i++)
            v[i] = next[i];
        rsp = cfa;
        pc = v[R_RA];
    }
    return 1;
}

#endif

struct weft__unwinder *weft__unwind_open(void)
{
    struct weft__unwinder *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->syms = calloc(SYM_CACHE, sizeof *u->syms);
    if (!u->syms) {
        free(u);
        return NULL;
    }
#if WEFT__HAVE_LIBDW
    u->rules = calloc(RULE_CACHE, sizeof *u->rules);
    if (!u->rules || (!dwfl_open(u) && u->dwfl)) {
        if (u->dwfl)
            dwfl_end(u->dwfl);
        u->dwfl = NULL;
    }
#endif
    return u;
}

void weft__unwind_close(struct weft__unwinder *u)
{
    if (!u)
        return;
#if WEFT__HAVE_LIBDW
    if (u->dwfl)
        dwfl_end(u->dwfl);
    free(u->rules);
#endif
    free(u->syms);
    free(u);
}

/* Frames by the frame-pointer chain: where no unwinder is built in, or it
 * failed. Stops at the first link that leaves the stack or goes down. */
static void walk_frame_pointers(struct weft__unwinder *u)
{
    uintptr_t fp = u->regs[CTX_RBP];
    while (u->n < u->max) {
        uint64_t next, ret;
        if (!read_word(u, fp, &next) || !read_word(u, fp + 8, &ret) || next <= fp || ret == 0)
            return;
        u->pcs[u->n++] = (uintptr_t)ret;
        fp = (uintptr_t)next;
    }
}

int weft__unwind_saved(struct weft__unwinder *u, void *sp, char *lo, char *hi, uintptr_t *pcs,
                       int max)
{
    if (max <= 0 || !load_context(u, sp, lo, hi))
        return 0;
    u->pcs = pcs;
    u->n = 0;
    u->max = max;
#if WEFT__HAVE_LIBDW
    if (u->dwfl && walk_rules(u))
        return u->n;
    u->n = 0;
    if (u->dwfl && u->attached) {
        dwfl_getthread_frames(u->dwfl, 1, on_frame, u);
        if (u->n > 0)
            return u->n;
    }
#endif
    pcs[u->n++] = (uintptr_t)u->regs[CTX_RIP];
    walk_frame_pointers(u);
    return u->n;
}

static void name_of(struct weft__unwinder *u, uintptr_t pc, int inner, char *buf, size_t n)
{
    /* a return address names the call, the byte before it */
    uintptr_t at = inner ? pc : pc - 1;
#if WEFT__HAVE_LIBDW
    if (u->dwfl) {
        GElf_Off entry = 1;
        Dwfl_Module *pm = dwfl_addrmodule(u->dwfl, pc);
        if (!inner && pm &&
            dwfl_module_addrinfo(pm, pc, &entry, &(GElf_Sym){ 0 }, NULL, NULL, NULL) && entry == 0)
            at = pc; /* a function's first byte: a context never run yet resumes there */
        Dwfl_Module *m = dwfl_addrmodule(u->dwfl, at);
        if (m) {
            GElf_Off off = 0;
            GElf_Sym sym;
            const char *fn = dwfl_module_addrinfo(m, at, &off, &sym, NULL, NULL, NULL);
            const char *file = NULL;
            int line = 0;
            Dwfl_Line *l = dwfl_module_getsrc(m, at);
            if (l)
                file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
            const char *mod = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
            if (fn && file)
                snprintf(buf, n, "%s+0x%lx (%s:%d)", fn, (unsigned long)(pc - (at - off)), file,
                         line);
            else if (fn)
                snprintf(buf, n, "%s+0x%lx (%s)", fn, (unsigned long)(pc - (at - off)),
                         mod ? mod : "?");
            else
                snprintf(buf, n, "? (%s)", mod ? mod : "?");
            return;
        }
    }
#else
    (void)u;
#endif
    Dl_info di;
    if (dladdr((void *)at, &di) && di.dli_sname)
        snprintf(buf, n, "%s+0x%lx (%s)", di.dli_sname,
                 (unsigned long)(pc - (uintptr_t)di.dli_saddr), di.dli_fname ? di.dli_fname : "?");
    else if (dladdr((void *)at, &di) && di.dli_fname)
        snprintf(buf, n, "? (%s)", di.dli_fname);
    else
        snprintf(buf, n, "?");
}

void weft__unwind_symbol(struct weft__unwinder *u, uintptr_t pc, int inner, char *buf, size_t n)
{
    size_t h = ((pc * WEFT_GOLDEN64) >> 40) & (SYM_CACHE - 1);
    for (size_t i = 0; i < SYM_CACHE; i++) {
        struct sym *s = &u->syms[(h + i) & (SYM_CACHE - 1)];
        if (s->pc == pc && s->inner == inner) {
            snprintf(buf, n, "%s", s->text);
            return;
        }
        if (s->pc == 0) {
            name_of(u, pc, inner, s->text, sizeof s->text);
            s->pc = pc;
            s->inner = inner;
            snprintf(buf, n, "%s", s->text);
            return;
        }
        if (i >= 16)
            break; /* a full neighbourhood: name it without caching */
    }
    name_of(u, pc, inner, buf, n);
}
