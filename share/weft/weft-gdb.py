# weft-gdb.py: weft's user threads in gdb, live or in a core file.
#
#   (gdb) source /PREFIX/share/weft/weft-gdb.py
#   (gdb) info weft-threads        every live user thread, as weft_dump lists them,
#                                  with the thread each parked one waits for (a
#                                  mutex's holder, a joined thread) and a line
#                                  "deadlock: A -> B -> A" per cycle of those
#   (gdb) weft-bt ID               backtrace of parked or ready thread ID (decimal id,
#                                  or the descriptor's address 0x... for a thread
#                                  whose id was never asked for)
#   (gdb) weft-frame ID            switch gdb to that thread's stack (bt, frame N,
#                                  info locals work there); "weft-frame off" goes back
#
# It needs no debug information: the library exports one table, weft__debug
# (src/observe/debug.c), with the addresses and field offsets it reads. A
# parked thread's registers are those its context switch saved
# (src/arch/x86_64-sysv/context.S): r15 r14 r13 r12 rbx rbp, then the
# resume address, at its saved stack pointer. weft-bt and weft-frame hand
# them to gdb through a frame unwinder that makes them the caller of the
# selected kernel thread's innermost frame (as folly's fiber unwinder does),
# so gdb's own DWARF unwinding does the rest.
import struct

import gdb
from gdb.unwinder import Unwinder, register_unwinder

DEBUG_VERSION = 3
KNOWN_VERSIONS = (1, 2, 3)  # 1: without the deadlock report; 2: without callers' stacks
WAIT_MUTEX, WAIT_JOIN = 1, 6
WAIT_WORDS = ["none", "mutex", "cond", "rwlock", "barrier", "sem", "join", "io", "sleep",
              "blocking"]
CTX_REGS = ["r15", "r14", "r13", "r12", "rbx", "rbp", "rip"]


def _inferior():
    return gdb.selected_inferior()


def _read(addr, n):
    return bytes(_inferior().read_memory(addr, n))


def _u64(addr):
    return struct.unpack("<Q", _read(addr, 8))[0]


def _u32(addr):
    return struct.unpack("<I", _read(addr, 4))[0]


def _i32(addr):
    return struct.unpack("<i", _read(addr, 4))[0]


def _u8(addr):
    return _read(addr, 1)[0]


def _cstr(addr, limit=128):
    if not addr:
        return None
    try:
        raw = _read(addr, limit)
    except gdb.MemoryError:
        return None
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _symbol_address(name):
    try:
        return int(gdb.parse_and_eval("(unsigned long)&%s" % name))
    except gdb.error:
        return None


class Layout:
    """The weft__debug table (src/observe/debug.c), read once per command."""
    FORMAT = "<II QQ IIII i II IIIIIIIII QQ"
    FORMAT_V2 = "II QQ"  # t_wait_on, owner_shift, owner_thread, mutex_bits

    def __init__(self):
        addr = _symbol_address("weft__debug")
        if addr is None:
            raise gdb.GdbError("weft: no weft__debug symbol: is libweft loaded?")
        size = struct.calcsize(self.FORMAT)
        f = struct.unpack(self.FORMAT, _read(addr, size))
        (self.version, self.ctx_words, self.rt, self.stack,
         self.rt_state, self.rt_nworkers, self.rt_workers, self.rt_main, self.rt_running,
         self.w_current, self.w_id,
         self.t_sp, self.t_worker, self.t_pinned, self.t_bound, self.t_join, self.t_fn,
         self.t_id, self.t_name, self.t_wait,
         self.j_freed, self.j_done) = f
        if self.version not in KNOWN_VERSIONS:
            raise gdb.GdbError("weft: weft__debug version %d, this script knows %d"
                               % (self.version, DEBUG_VERSION))
        self.t_wait_on = None
        if self.version >= 2:
            (self.t_wait_on, self.owner_shift, self.owner_thread,
             self.mutex_bits) = struct.unpack(
                 "<" + self.FORMAT_V2,
                 _read(addr + size, struct.calcsize("<" + self.FORMAT_V2)))


class Thread:
    pass


def _threads(lay):
    """Every live user thread: the initial one, the stack slabs', then those
    on callers' stacks (bound threads live elsewhere and are not listed)."""
    if _i32(lay.rt + lay.rt_state) != lay.rt_running:
        return []
    nworkers = _i32(lay.rt + lay.rt_nworkers)
    workers = _u64(lay.rt + lay.rt_workers)
    current = {}
    for i in range(nworkers):
        w = _u64(workers + 8 * i)
        cur = _u64(w + lay.w_current)
        if cur:
            current[cur] = i
    descs = [_u64(lay.rt + lay.rt_main)]
    # struct weft__stack_debug: slabs, nslabs, slab_bytes, slab_base, slab_len,
    # slab_cls, cls_slot_bytes, desc_bytes, cls_colours, colour_step
    sd = struct.unpack("<10Q", _read(lay.stack, 80))
    slabs, nslabs = _u64(sd[0]), _u64(sd[1])
    slab_bytes, off_base, off_len, off_cls, off_slot, desc_bytes = sd[2:8]
    off_colours, colour_step = sd[8:10]
    for i in range(nslabs):
        s = slabs + i * slab_bytes
        base, length, cls = _u64(s + off_base), _u64(s + off_len), _u64(s + off_cls)
        slot = _u64(cls + off_slot)
        ncolours = _u64(cls + off_colours)
        p = base
        while p + slot <= base + length:
            colour = (p // slot) % ncolours * colour_step if ncolours else 0
            descs.append(p + slot - desc_bytes - colour)
            p += slot
    if lay.version >= 3:
        # then: adopted (the circle's anchor), adopted_next, adopted_t
        ring, off_next, off_t = struct.unpack("<3Q", _read(lay.stack + 80, 24))
        a = _u64(ring + off_next)
        for _ in range(1 << 20):  # a bound, for a damaged core
            if a == ring or not a:
                break
            descs.append(_u64(a + off_t))
            a = _u64(a + off_next)
    out = []
    for d in descs:
        if not d:
            continue
        join = _u64(d + lay.t_join)
        pinned = _u8(d + lay.t_pinned)
        if join in (lay.j_freed, lay.j_done) or (not _u64(d + lay.t_fn) and not pinned):
            continue
        t = Thread()
        t.desc = d
        t.id = _u64(d + lay.t_id)
        t.name = _cstr(_u64(d + lay.t_name))
        t.wait = _u8(d + lay.t_wait)
        t.sp = _u64(d + lay.t_sp)
        t.worker = current.get(d, -1)
        t.join = join
        t.wait_on = 0
        if lay.t_wait_on is not None and t.wait == WAIT_MUTEX:
            t.wait_on = _u64(d + lay.t_wait_on)
        t.waits_for = None
        if t.worker >= 0:
            t.state = "running"
        elif t.wait == 9:
            t.state = "blocking"
        elif t.wait:
            t.state = "parked on " + (WAIT_WORDS[t.wait] if t.wait < len(WAIT_WORDS) else "?")
        else:
            t.state = "ready"
        out.append(t)
    return out


def _mutex_holder(lay, mutex):
    """The id of the user thread holding the mutex at address mutex, or None."""
    try:
        word = _u64(mutex)
    except gdb.MemoryError:
        return None
    token = word & ~lay.mutex_bits
    if not token & lay.owner_thread:
        return None  # free, or held by a plain kernel thread
    return (token & ~lay.owner_thread) >> lay.owner_shift


def _label(t):
    return str(t.id) if t.id else "0x%x" % t.desc


def _edges(lay, ts):
    """Sets t.waits_for (a Thread, or an id for a thread not listed) on every
    parked thread that waits for another: the holder of its mutex, the thread
    it joins (whose join word is the joiner's descriptor)."""
    by_desc = dict((t.desc, t) for t in ts)
    by_id = dict((t.id, t) for t in ts if t.id)
    for t in ts:
        parked = t.worker < 0 and t.state.startswith("parked")
        if parked and t.wait == WAIT_MUTEX and t.wait_on:
            holder = _mutex_holder(lay, t.wait_on)
            # itself: an unlock is handing it the mutex and has yet to wake it
            if holder and holder != t.id:
                t.waits_for = by_id.get(holder, holder)
        j = t.join
        joiner = by_desc.get(j) if j and j & 63 == 0 else None
        if joiner is not None and joiner.worker < 0 and joiner.wait == WAIT_JOIN:
            joiner.waits_for = t


def _cycles(ts):
    """The cycles of the waits_for edges, each from its smallest label."""
    out, seen = [], {}
    for walk, start in enumerate(ts):
        t = start
        while isinstance(t, Thread) and t.desc not in seen:
            seen[t.desc] = walk
            t = t.waits_for
        if not isinstance(t, Thread) or seen[t.desc] != walk:
            continue
        cyc, u = [], t
        while True:
            cyc.append(u)
            u = u.waits_for
            if u is t:
                break
        low = min(range(len(cyc)), key=lambda i: (cyc[i].id or 1 << 64, cyc[i].desc))
        cyc = cyc[low:] + cyc[:low]
        out.append(cyc + cyc[:1])
    return out


def _where(pc):
    try:
        text = gdb.execute("info symbol 0x%x" % pc, to_string=True).strip()
    except gdb.error:
        return "?"
    return text.split(" in section")[0]


def _find(lay, arg):
    arg = arg.strip()
    if not arg:
        raise gdb.GdbError("usage: weft-bt ID (a decimal weft_thread_id, or 0x<descriptor>)")
    for t in _threads(lay):
        if (arg.startswith("0x") and t.desc == int(arg, 16)) or \
                (not arg.startswith("0x") and t.id and t.id == int(arg)):
            return t
    raise gdb.GdbError("weft: no live user thread %s" % arg)


class FrameId:
    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class WeftUnwinder(Unwinder):
    """While regs is set, the innermost frame of the selected kernel thread
    gets a caller whose registers are a parked thread's saved context."""

    def __init__(self):
        super().__init__("weft")
        self.regs = None

    def __call__(self, pending_frame):
        if self.regs is None or pending_frame.level() != 0:
            return None
        u64 = gdb.lookup_type("unsigned long")
        pc = pending_frame.read_register("rip")
        # gdb stops a backtrace whose caller lies inner to (below) its callee
        # on the stack; the parked stack may lie anywhere, so the innermost
        # frame takes an id just below the parked context.
        sp = gdb.Value(self.regs["rsp"] - 16 * 8).cast(u64)
        info = pending_frame.create_unwind_info(FrameId(sp, pc))
        for name, value in self.regs.items():
            info.add_saved_register(name, gdb.Value(value).cast(u64))
        return info


_unwinder = WeftUnwinder()
register_unwinder(None, _unwinder, replace=True)


def _switch_to(lay, t):
    if t.worker >= 0 or t.state == "blocking" or not t.sp:
        raise gdb.GdbError("weft: thread %s is %s: it has no saved context (use gdb's own "
                           "threads for a running one)" % (t.id or hex(t.desc), t.state))
    words = struct.unpack("<%dQ" % lay.ctx_words, _read(t.sp, 8 * lay.ctx_words))
    regs = dict(zip(CTX_REGS, words))
    regs["rsp"] = t.sp + 8 * lay.ctx_words
    _unwinder.regs = regs
    gdb.invalidate_cached_frames()


def _switch_off():
    _unwinder.regs = None
    gdb.invalidate_cached_frames()


class InfoWeftThreads(gdb.Command):
    """List weft's live user threads: id, name, state (with the object a parked
    thread waits on), worker and where it stopped."""

    def __init__(self):
        super().__init__("info weft-threads", gdb.COMMAND_STATUS)

    def invoke(self, arg, from_tty):
        lay = Layout()
        ts = _threads(lay)
        if lay.t_wait_on is not None:
            _edges(lay, ts)
        print("%d weft user threads" % len(ts))
        for t in ts:
            where = ""
            if t.sp and t.worker < 0 and t.state != "blocking":
                try:
                    where = "  at " + _where(_u64(t.sp + 8 * (lay.ctx_words - 1)))
                except gdb.MemoryError:
                    where = ""
            waits = ""
            if t.waits_for is not None:
                u = t.waits_for
                waits = ", %s %s" % ("joins" if t.wait == WAIT_JOIN else "owner",
                                     _label(u) if isinstance(u, Thread) else u)
            print('thread %s "%s": %s, worker %d, descriptor 0x%x%s%s'
                  % (t.id if t.id else "?", t.name or "", t.state, t.worker, t.desc, where,
                     waits))
        # the process is stopped: one read is a consistent snapshot
        for cyc in _cycles(ts):
            print("deadlock: " + " -> ".join(_label(u) for u in cyc))


class WeftBt(gdb.Command):
    """weft-bt ID: backtrace of a parked or ready weft user thread, innermost
    frame first (ID: weft_thread_id in decimal, or 0x<descriptor address>)."""

    def __init__(self):
        super().__init__("weft-bt", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        lay = Layout()
        t = _find(lay, arg)
        _switch_to(lay, t)
        try:
            print('weft thread %s "%s": %s' % (t.id or hex(t.desc), t.name or "", t.state))
            frame = gdb.newest_frame().older()
            n = 0
            while frame is not None and n < 256:
                pc = frame.pc()
                if pc == 0:
                    break  # the first frame's caller: nothing called it
                name = frame.name() or _where(pc)
                sal = frame.find_sal()
                loc = ""
                if sal.symtab is not None:
                    loc = " at %s:%d" % (sal.symtab.filename, sal.line)
                print("#%-2d 0x%016x in %s%s" % (n, pc, name, loc))
                frame = frame.older()
                n += 1
        finally:
            _switch_off()


class WeftFrame(gdb.Command):
    """weft-frame ID: make gdb's stack that of a parked or ready weft user thread
    (frame 1 is its innermost frame); weft-frame off: back to the kernel thread's."""

    def __init__(self):
        super().__init__("weft-frame", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        if arg.strip() in ("", "off"):
            _switch_off()
            return
        lay = Layout()
        _switch_to(lay, _find(lay, arg))
        gdb.execute("frame 1")


InfoWeftThreads()
WeftBt()
WeftFrame()
